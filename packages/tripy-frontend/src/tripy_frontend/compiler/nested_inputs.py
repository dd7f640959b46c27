"""tp.compile with runtime inputs inside lists, tuples and dicts (nvtripy accepts them):

    exe = tp.compile(f, args=[{"x": tp.InputInfo((2,), tp.float32)}, [tp.InputInfo((2,), tp.float32)]])
    exe({"x": a}, [b])

The function is compiled as one taking the leaves (named ``a_x``, ``b_0`` after the parameter and the
path, ``flatten``); the executable takes the same structures and flattens them (``Nesting``, which
``Executable`` holds). Other leaves (``{"x": tp.InputInfo(...), "scale": 2.0}``) are constants baked into
the program, as in nvtripy: a call may pass them again (their values are not read) or leave them out.
(A saved and loaded executable takes the leaves.)"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.compiler.input_info import InputInfo

Path = Tuple[Any, ...]


def _leaves(value: Any, path: Path = ()) -> List[Tuple[Path, Any]]:
    """(path, leaf) for each leaf of nested lists, tuples and dicts (string keys)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, path + (k,))]
    if isinstance(value, (list, tuple)):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, path + (i,))]
    return [(path, value)]


def _is_nested_inputs(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict)) and any(isinstance(v, InputInfo) for _, v in _leaves(value))


def has_nested_inputs(args: Sequence[Any], kwargs: Optional[Dict[str, Any]]) -> bool:
    return any(_is_nested_inputs(a) for a in list(args) + list((kwargs or {}).values()))


def _rebuild(structure: Any, values: Dict[Path, Any], path: Path = ()) -> Any:
    """`structure` with the leaf at each path in `values` replaced."""
    if isinstance(structure, dict):
        return {k: _rebuild(v, values, path + (k,)) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return type(structure)(_rebuild(v, values, path + (i,)) for i, v in enumerate(structure))
    return values.get(path, structure)


class Nesting:
    """The structures an executable takes its runtime inputs in: for each parameter that holds runtime inputs,
    the paths of its InputInfo leaves (() for a plain InputInfo) and the structure it was compiled with."""

    def __init__(self, inputs: Dict[str, List[Path]], structures: Dict[str, Any]) -> None:
        self.inputs = inputs
        self.structures = structures
        self._paths = {p: {path for path, _ in _leaves(s)} for p, s in structures.items()}  # (constants' too)
        self.signature = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in inputs]
        )

    def leaves(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> List[Any]:
        """A call's runtime inputs, in the order of the leaves; an error unless they have the structures."""
        try:
            given = self.signature.bind(*args, **kwargs).arguments
        except TypeError as e:
            raise_error(f"tripy.Executable: {e}; it takes {', '.join(self.inputs)}.", _stack.capture())
        leaves = []
        for pname, paths in self.inputs.items():
            got = dict(_leaves(given[pname]))
            # (Constants beside the InputInfos were baked in, as in nvtripy: a call may pass them again, or not.)
            if any(p not in got for p in paths) or any(p not in self._paths[pname] for p in got):
                raise_error(
                    f"tripy.Executable: argument '{pname}' must have the structure it was compiled with, "
                    f"{self.structures[pname]!r} (with tensors for the InputInfos).",
                    _stack.capture(),
                )
            leaves += [got[p] for p in paths]
        return leaves


def flatten(
    func: Callable[..., Any], args: Sequence[Any], kwargs: Optional[Dict[str, Any]]
) -> Tuple[Callable[..., Any], List[InputInfo], Nesting]:
    """`func` as a function of the InputInfo leaves of `args` / `kwargs` (named after the parameter and the
    path), those leaves, and the structures the executable is to take them in."""
    try:
        signature = inspect.signature(func)
        bound = signature.bind(*args, **(kwargs or {}))
    except (TypeError, ValueError) as e:
        raise_error(
            f"tripy.compile: args/kwargs do not match the signature of "
            f"'{getattr(func, '__qualname__', type(func).__name__)}': {e}.",
            _stack.capture(),
        )
    inputs: Dict[str, List[Path]] = {}
    names: List[str] = []
    infos: List[InputInfo] = []
    for pname, value in bound.arguments.items():
        paths = [path for path, leaf in _leaves(value) if isinstance(leaf, InputInfo)]
        if isinstance(value, InputInfo) or paths:
            inputs[pname] = paths
            for path, leaf in _leaves(value):
                if isinstance(leaf, InputInfo):
                    names.append("_".join([pname] + [str(p) for p in path]))
                    infos.append(leaf)

    def flat(*leaves: Any) -> Any:
        it = iter(leaves)
        call = dict(bound.arguments)
        for pname, paths in inputs.items():
            call[pname] = _rebuild(call[pname], {path: next(it) for path in paths})
        rebound = inspect.BoundArguments(signature, call)  # type: ignore[arg-type]
        return func(*rebound.args, **rebound.kwargs)

    flat.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    )
    flat.__qualname__ = getattr(func, "__qualname__", type(func).__name__)
    return flat, infos, Nesting(inputs, {p: bound.arguments[p] for p in inputs})
