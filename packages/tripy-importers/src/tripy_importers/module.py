"""The module an importer returns: a small interpreter over a list of steps, each one call of a tripy op.

Importing turns a foreign graph (a ``torch.export`` program, an ONNX model) into :class:`Step` s once. Calling the
module replays them with tripy's public ops, so eager mode, ``tp.compile`` over a range of shapes, saving and
serving work as they do for a hand-written ``tp.Module``. The foreign library is not needed to run the steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import tripy_frontend.ops.cast as _cast
from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.stack_info import StackInfo
from tripy_frontend.compiler.input_info import InputInfo
from tripy_frontend.nn.module import Module
from tripy_frontend.public_names import public_class
from tripy_frontend.tensor import DimensionSize, Tensor


@dataclass(frozen=True)
class Ref:
    """A reference, inside a step's arguments, to the value another step (or an input, or the state) produced."""

    name: str


@dataclass
class Step:
    """One operation: ``outputs = op(*args, **kwargs)``, then each tensor result cast to its recorded dtype.

    `op` is the name of the foreign operator (``aten.add.Tensor``, ``Add``); `where` says where it came from
    (the user's source line of a PyTorch model, the node name of an ONNX model) for error reports, and
    `location` is that place as the user's frame of the tripy ops the step makes (``stack_info.located``), so
    that profiles, graphs and error reports name the model's line or node rather than the call of the module.
    """

    name: str
    op: str
    fn: Callable[..., Any]
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]
    dtypes: Optional[Tuple[Optional[dtypes.dtype], ...]]
    where: str
    location: Optional[StackInfo] = None


def state_ref(name: str) -> Ref:
    """The reference to the state tensor `name` (kept apart from step names, which never start with '@')."""
    return Ref("@" + name)


def _resolve(value: Any, env: Dict[str, Any]) -> Any:
    if isinstance(value, Ref):
        return env[value.name]
    if isinstance(value, (list, tuple)):
        return type(value)(_resolve(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _resolve(v, env) for k, v in value.items()}
    return value


def as_dtype(value: Any, dtype: Optional[dtypes.dtype]) -> Any:
    """`value` cast to `dtype` when it is a tensor of another dtype (sizes and Python values pass through)."""
    if dtype is None or not isinstance(value, Tensor) or isinstance(value, DimensionSize) or value.dtype is dtype:
        return value
    return _cast.cast(value, dtype)


class _Scope(Module):
    """A level of dotted state names (``encoder.layer.0``), so that ``state_dict()`` names match the source's."""


def _place(root: Module, name: str, tensor: Tensor) -> None:
    """Store `tensor` under the dotted `name`, creating the intermediate scopes."""
    *path, leaf = name.split(".")
    scope = root
    for part in path:
        child = vars(scope).get(part)
        if not isinstance(child, _Scope):
            child = _Scope()
            object.__setattr__(scope, part, child)
        scope = child
    object.__setattr__(scope, leaf, tensor)


def _lookup(root: Module, name: str) -> Tensor:
    scope: Any = root
    for part in name.split("."):
        scope = vars(scope)[part]
    return scope


@dataclass(frozen=True)
class Program:
    """What an importer made of a model: the steps and how inputs, state and outputs connect to them."""

    source: str  # "PyTorch", "ONNX"
    input_names: Tuple[str, ...]
    input_infos: Tuple[InputInfo, ...]
    steps: Tuple[Step, ...]
    outputs: Tuple[Any, ...]  # a Ref (or a value) per output
    state_names: Tuple[str, ...]


@public_class(document_under="importers")
class ImportedModule(Module):
    """A model imported from another framework, as a ``tp.Module``.

    Call it with ``tp.Tensor`` s in the order of the model's inputs; it returns one ``tp.Tensor``, or a tuple
    when the model has several outputs. ``state_dict()`` holds the weights under the source's names, and
    ``input_infos`` describes each input (its dtype and its dims, dynamic ones as declared by the source) so
    that ``tp.compile(model, args=model.input_infos)`` compiles once for the whole declared range.
    """

    def __init__(
        self,
        source: str,
        input_names: Sequence[str],
        input_infos: List[InputInfo],
        state: Dict[str, Tensor],
        steps: List[Step],
        outputs: Sequence[Any],
    ) -> None:
        super().__init__()
        for name, tensor in state.items():
            _place(self, name, tensor)
        self._program = Program(
            source, tuple(input_names), tuple(input_infos), tuple(steps), tuple(outputs), tuple(state)
        )

    @property
    def input_names(self) -> Tuple[str, ...]:
        """The names of the model's inputs, in the order the module takes them."""
        return self._program.input_names

    @property
    def input_infos(self) -> List[InputInfo]:
        """One ``tp.InputInfo`` per input: ``tp.compile(model, args=model.input_infos)`` compiles the declared
        range once."""
        return list(self._program.input_infos)

    @property
    def ops(self) -> Tuple[str, ...]:
        """The foreign operators the module replays, one per step, in order."""
        return tuple(step.op for step in self._program.steps)

    def forward(self, *inputs: Any) -> Any:
        program = self._program
        if len(inputs) != len(program.input_names):
            raise_error(
                f"This model imported from {program.source} takes {len(program.input_names)} input(s) "
                f"({', '.join(program.input_names)}), but got {len(inputs)}.",
                _stack.capture(),
            )
        env: Dict[str, Any] = {state_ref(name).name: _lookup(self, name) for name in program.state_names}
        env.update(zip(program.input_names, inputs))
        for step in program.steps:
            with _stack.located(step.location):
                result = step.fn(*_resolve(step.args, env), **_resolve(step.kwargs, env))
                if step.dtypes is not None:
                    if isinstance(result, (list, tuple)):
                        result = tuple(as_dtype(r, d) for r, d in zip(result, step.dtypes))
                    else:
                        result = as_dtype(result, step.dtypes[0])
            env[step.name] = result
        results = tuple(_resolve(out, env) for out in program.outputs)
        return results[0] if len(results) == 1 else results

    def __repr__(self) -> str:
        program = self._program
        return f"ImportedModule(from {program.source}: {len(program.input_names)} input(s), {len(program.steps)} ops)"
