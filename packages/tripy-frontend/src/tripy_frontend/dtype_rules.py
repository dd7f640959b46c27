"""Dtype declarations: which data types each op accepts, declared once and checked at every call::

    @public_api(dtype_constraints={"lhs": "T1", "rhs": "T1", RETURN: "T1"},
                dtype_variables={"T1": [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32]})
    def maximum(lhs, rhs): ...

``dtype_constraints`` maps parameter names to type variables; parameters that name the same variable
must have the same dtype, and ``dtype_variables`` lists the dtypes each variable may take. A parameter
may hold a Tensor, a sequence of Tensors (all of them share the variable) or a ``tripy.dtype`` value
(e.g. the ``dtype`` argument of ``tripy.quantize``); Python numbers and other values are not checked.
``dtype_exceptions`` lists combinations of variable bindings that are not supported even though each
dtype is, e.g. ``[{"T1": tp.float8, "T2": tp.int4}]``. ``RETURN`` maps to the variable (or a tuple of
variables, one per returned tensor) of the result; it documents the result and is checked by the tests,
not at run time. The declaration is checked at the call, and a violation is reported at the user's
line, naming the op, the argument, its dtype and the supported ones, and how to convert (tripy.cast).
Rules that depend on another argument's value (e.g. tripy.resize with mode="linear") stay in the op's
body. The declaration is stored on the function as ``__tripy_dtype_constraints__``,
``__tripy_dtype_variables__`` and ``__tripy_dtype_exceptions__``; tests/e2e/test_dtype_constraints.py
generates its dtype-parametrized tests from it.

Tensor methods (``TENSOR_METHOD_REGISTRY``, e.g. ``__add__``) are not wrapped by @public_api; they use
the same declaration through ``@dtype_rules(...)``, placed below the registry decorator (also for a
function that is both public and a method, so both spellings check it).
"""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from tripy_flatir import dtypes
from tripy_flatir.exceptions import TripyException
from tripy_frontend import codegen
from tripy_frontend.tensor import DimensionSize
from tripy_frontend.tensor import Tensor
from tripy_frontend.tracebacks import strip_tripy_frames
from tripy_frontend.dtype_checks import (NUMBERS, Entry, Exceptions, Variables, check_one, check_pair,
                                         check_sequence, general_check, is_sequence)

F = TypeVar("F")

RETURN = "return"
"""The key of ``dtype_constraints`` for the result (``return`` cannot be a parameter name)."""

Constraints = Mapping[str, Union[str, Tuple[str, ...]]]


def dtype_rules(dtype_constraints: Constraints, dtype_variables: Variables,
                dtype_exceptions: Optional[Exceptions] = None, name: Optional[str] = None) -> Callable[[F], F]:
    """Declare the dtypes a function accepts (see the module docstring) and check them at every call.
    `name` is how errors name the op (default ``tripy.<function name>``; operators pass e.g. ``"'+'"``)."""

    def decorate(func: F) -> F:
        what = name or f"tripy.{getattr(func, '__name__')}"
        checker = _dtype_checker(func, what, dtype_constraints, dtype_variables, dtype_exceptions or ())
        checked: Any = func if checker is None else _with_dtype_check(func, checker)
        checked.__tripy_dtype_constraints__ = dict(dtype_constraints)
        checked.__tripy_dtype_variables__ = {v: tuple(ds) for v, ds in dtype_variables.items()}
        checked.__tripy_dtype_exceptions__ = tuple(dict(e) for e in dtype_exceptions or ())
        checked.__tripy_dtype_check__ = None if checker is None else checker.check
        checked.__tripy_dtype_checker__ = checker
        checked.__tripy_unchecked__ = func
        return checked  # type: ignore[no-any-return]

    return decorate



def _with_dtype_check(func: Any, checker: "_DtypeCheck") -> Callable[..., Any]:
    """`func` with its dtype check in front. When `func` takes plain parameters (Tensor methods such as
    ``__add__``), the wrapper is generated with the same signature and the fast path inline: the
    operators are the hottest path of eager code."""
    params = list(inspect.signature(func).parameters.values())
    if checker.fast_condition is None or not params or any(
            p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD or p.name.startswith("_tripy") for p in params):
        check = checker.check

        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:  # (an API boundary: see tracebacks.py)
            try:
                check(args, kwargs)
                return func(*args, **kwargs)
            except TripyException as e:
                strip_tripy_frames(e)
                raise

        checked.__tripy_api_boundary__ = True  # type: ignore[attr-defined]
        return checked
    names = [p.name for p in params]
    namespace: Dict[str, Any] = dict(checker.namespace, _tripy_func=func, _tripy_check=checker.check, _tripy_empty={},
                                     _tripy_error=TripyException, _tripy_strip=strip_tripy_frames)
    signature = []
    for i, p in enumerate(params):
        if p.default is inspect.Parameter.empty:
            signature.append(p.name)
        else:
            namespace[f"_tripy_default{i}"] = p.default
            signature.append(f"{p.name}=_tripy_default{i}")
    condition = checker.fast_condition([names[e[1]] for e in checker.entries])
    source = (f"def {func.__name__}({', '.join(signature)}):\n"  # (an API boundary: see tracebacks.py)
              f"    try:\n"
              f"        if not ({condition}):\n"
              f"            _tripy_check(({', '.join(names)},), _tripy_empty)\n"
              f"        return _tripy_func({', '.join(names)})\n"
              f"    except _tripy_error as e:\n"
              f"        _tripy_strip(e)\n"
              f"        raise\n")
    wrapper = codegen.make_function(func.__name__, source, namespace, f"<tripy dtype check of {func.__name__}>")
    wrapper.__tripy_api_boundary__ = True  # type: ignore[attr-defined]
    return functools.wraps(func)(wrapper)



class _DtypeCheck:
    """A precomputed dtype check: ``check(args, kwargs)`` raises on a violation. For declarations without
    sequences or exceptions, ``fast_condition(exprs)`` gives a Python expression over the argument
    expressions (one per entry) that is true when the call certainly passes (all tensors of allowed,
    matching dtypes), with the names it uses in ``namespace``; wrappers inline it."""

    __slots__ = ("check", "entries", "namespace", "fast_condition")

    def __init__(self, check: Callable[[tuple, dict], None], entries: List["Entry"], tensor_cls: Any,
                 simple: bool) -> None:
        self.check = check
        self.entries = entries
        # (__name__ marks the generated functions as library code, which error reports skip.)
        self.namespace: Dict[str, Any] = {"__name__": __name__, "_tripy_T": tensor_cls, "_tripy_N": NUMBERS}
        for i, e in enumerate(entries):
            self.namespace[f"_tripy_A{i}"] = e[3]
        self.fast_condition: Optional[Callable[[List[str]], str]] = self.condition if simple else None

    def condition(self, exprs: List[str]) -> str:
        """The first argument of each dtype variable must be a tensor of an allowed dtype; later ones a
        tensor of the same dtype, or a Python number (``x * 0.5``: numbers take the tensor's dtype, and
        the full check passes them too)."""
        parts = []
        first_of: Dict[str, str] = {}
        for i, (x, e) in enumerate(zip(exprs, self.entries)):
            var, allowed = e[2], e[3]
            if var in first_of:
                parts.append(f"(type({x}) is _tripy_T and {x}.trace_tensor.dtype is {first_of[var]}.trace_tensor.dtype"
                             f" or type({x}) in _tripy_N)")
                continue
            first_of[var] = x
            parts.append(f"type({x}) is _tripy_T")
            if allowed is not None:
                parts.append(f"{x}.trace_tensor.dtype in _tripy_A{i}")
        return " and ".join(parts)



def _dtype_checker(func: Any, what: str, constraints: Constraints, variables: Variables,
                   exceptions: Exceptions) -> Optional[_DtypeCheck]:
    """Validate a declaration and precompute its check: None when no call can violate it."""
    _validate(func, what, constraints, variables, exceptions)
    entries = _entries(func, constraints, variables, exceptions)
    if not entries:
        return None
    general = general_check(entries, what, variables, exceptions, Tensor, DimensionSize)
    simple = not exceptions and not any(e[5] for e in entries)
    if simple and len(entries) == 1:
        check = check_one(entries[0], general, Tensor)
    elif simple and len(entries) == 2 and entries[0][2] == entries[1][2]:
        check = check_pair(entries[0], entries[1], general, Tensor)
    elif not exceptions and len(entries) == 1:
        check = check_sequence(entries[0], general, Tensor)
    else:
        check = general
    checker = _DtypeCheck(check, entries, Tensor, simple)
    if simple and len(entries) > 2:  # e.g. tripy.where: a generated fast path over (args, kwargs)
        exprs = [f"v{i}" for i in range(len(entries))]
        lines = ["def check(args, kwargs):", "    n = len(args)"]
        lines += [f"    v{i} = args[{pos}] if {pos} < n else kwargs.get({pname!r})"
                  for i, (pname, pos, _, _, _, _) in enumerate(entries)]
        lines += [f"    if {checker.condition(exprs)}:", "        return", "    _tripy_general(args, kwargs)"]
        namespace = dict(checker.namespace, _tripy_general=general)
        checker.check = codegen.make_function("check", "\n".join(lines) + "\n", namespace, f"<tripy dtype check: {what}>")
    return checker


def _validate(func: Any, what: str, constraints: Constraints, variables: Variables, exceptions: Exceptions) -> None:
    """Assert that a declaration names parameters of `func` and declared variables (a mistake in tripy)."""
    params = inspect.signature(func).parameters
    names = {var for key, var in constraints.items() if key != RETURN}
    for key, var in constraints.items():
        if key == RETURN:
            for v in (var if isinstance(var, tuple) else (var,)):
                assert v in variables, f"{what}: the return value's dtype variable {v!r} is not in dtype_variables"
            continue
        assert key in params and params[key].kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                          inspect.Parameter.VAR_KEYWORD), \
            f"{what}: dtype_constraints names {key!r}, which is not a parameter"
        assert isinstance(var, str) and var in variables, f"{what}: dtype variable {var!r} of {key!r} is not declared"
    for var, listed in variables.items():
        assert listed and all(isinstance(d, dtypes.dtype) for d in listed), f"{what}: bad dtypes for {var!r}"
    for exc in exceptions:
        assert exc and all(v in names and isinstance(d, dtypes.dtype) for v, d in exc.items()), \
            f"{what}: a dtype exception must map declared variables (bound to parameters) to dtypes: {exc}"


def _entries(func: Any, constraints: Constraints, variables: Variables, exceptions: Exceptions) -> List[Entry]:
    """One entry per checked parameter (see ``Entry``): a parameter takes a sequence of tensors if its
    annotation says so; its elements then share the variable too. Parameters no call can violate are left out."""
    params = inspect.signature(func).parameters
    positional = [p.name for p in params.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    names = {var for key, var in constraints.items() if key != RETURN}
    shared = {var for var in names if sum(1 for k, v in constraints.items() if k != RETURN and v == var) > 1}
    everything = frozenset(dtypes.ALL_DTYPES)
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        hints = {}
    entries: List[Entry] = []
    for key, var in constraints.items():
        if key == RETURN:
            continue
        assert isinstance(var, str)
        allowed: Optional[frozenset] = frozenset(variables[var])
        if allowed == everything:
            allowed = None
        pos = positional.index(key) if key in positional else 1 << 30
        is_seq = is_sequence(hints.get(key))
        if allowed is not None or var in shared or exceptions or is_seq:  # else no call can violate it
            entries.append((key, pos, var, allowed, var in shared, is_seq))
    return entries
