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
not at run time. A violation is reported at the user's line, naming the op, the argument, its dtype and
the supported ones, and how to convert (tripy.cast). Rules that depend on another argument's value
(e.g. tripy.resize with mode="linear") stay in the op's body. The declaration is stored on the function
as ``__tripy_dtype_constraints__``, ``__tripy_dtype_variables__`` and ``__tripy_dtype_exceptions__``;
tests/e2e/test_dtype_constraints.py generates its dtype-parametrized tests from it.

How a call is checked (``DtypeRule.check``), top to bottom:

1. ``key``: the dtype of each checked argument (None for a Python number or an argument not given; a
   tuple of dtypes for a sequence). Whether a call passes depends on nothing else.
2. A key seen to pass before passes again: one tuple and one set lookup per call, which is what the
   eager hot path pays (every operator the user applies is checked).
3. A new key is checked in full (``_full_check``, which raises the error report on a violation) and
   remembered if it passes.

Tensor methods (``TENSOR_METHOD_REGISTRY``, e.g. ``__add__``) are not wrapped by @public_api; they use
the same declaration through ``@dtype_rules(...)``, placed below the registry decorator (also for a
function that is both public and a method, so both spellings check it). ``@public_api`` functions have
their rule checked by the argument-check wrapper (``argument_checks.py``), so each call has one wrapper.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import typing
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple, TypeVar, Union

from tripy_flatir import dtypes, stack_info
from tripy_flatir.exceptions import TripyException, raise_error
from tripy_frontend.tensor import DimensionSize, Tensor
from tripy_frontend.tracebacks import strip_tripy_frames

F = TypeVar("F")

RETURN = "return"
"""The key of ``dtype_constraints`` for the result (``return`` cannot be a parameter name)."""

Constraints = Mapping[str, Union[str, Tuple[str, ...]]]
Variables = Mapping[str, Sequence[dtypes.dtype]]
Exceptions = Sequence[Mapping[str, dtypes.dtype]]


def dtype_rules(
    dtype_constraints: Constraints,
    dtype_variables: Variables,
    dtype_exceptions: Optional[Exceptions] = None,
    name: Optional[str] = None,
) -> Callable[[F], F]:
    """Declare the dtypes a function accepts (see the module docstring) and check them at every call.
    `name` is how errors name the op (default ``tripy.<function name>``; operators pass e.g. ``"'+'"``)."""

    def decorate(func: F) -> F:
        what = name or f"tripy.{getattr(func, '__name__')}"
        rule = DtypeRule(func, what, dtype_constraints, dtype_variables, dtype_exceptions or ())
        checked: Any = func if rule.is_trivial else _with_check(func, rule)  # type: ignore[arg-type]
        checked.__tripy_dtype_constraints__ = dict(dtype_constraints)
        checked.__tripy_dtype_variables__ = {v: tuple(ds) for v, ds in dtype_variables.items()}
        checked.__tripy_dtype_exceptions__ = tuple(dict(e) for e in dtype_exceptions or ())
        checked.__tripy_dtype_rule__ = None if rule.is_trivial else rule
        checked.__tripy_unchecked__ = func
        return checked  # type: ignore[no-any-return]

    return decorate


def _with_check(func: Callable[..., Any], rule: "DtypeRule") -> Callable[..., Any]:
    """`func` with `rule` checked in front: an API boundary (see tracebacks.py)."""
    check = rule.check

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            check(args, kwargs)
            return func(*args, **kwargs)
        except TripyException as e:
            strip_tripy_frames(e)
            raise

    checked.__tripy_api_boundary__ = True  # type: ignore[attr-defined]
    return checked


class _Param(typing.NamedTuple):
    """One checked parameter."""

    name: str
    position: int  # among the positional parameters; a large number for a keyword-only one
    var: str  # its dtype variable
    allowed: Optional[FrozenSet[dtypes.dtype]]  # None: every dtype
    is_sequence: bool  # whether it takes a sequence of tensors (whose elements share the variable)


# A value bound to a dtype variable: (its dtype, its label in messages such as "'x'" or "'xs[1]'", the value).
Binding = Tuple[dtypes.dtype, str, Any]
_NUMBERS = (float, int, bool)  # (Python numbers next to tensors: not checked)
_MAX_PASSED = 256  # keys remembered per rule (distinct dtype combinations a program uses: a handful)


class DtypeRule:
    """One function's declaration, ready to check its calls (see the module docstring)."""

    def __init__(
        self, func: Any, what: str, constraints: Constraints, variables: Variables, exceptions: Exceptions
    ) -> None:
        _validate(func, what, constraints, variables, exceptions)
        self.what = what
        self.variables = variables
        self.exceptions = exceptions
        self.params = _checked_params(func, constraints, variables, exceptions)
        self.is_trivial = not self.params  # (no call can violate the declaration)
        self._positions = tuple((p.name, p.position, p.is_sequence) for p in self.params)
        self._passed: Set[Any] = set()

    def check(self, args: tuple, kwargs: dict) -> None:
        """Raise the error report if a call with these arguments violates the declaration."""
        n = len(args)
        positions = self._positions
        if len(positions) <= 2:  # (nearly every op: its one or two parameters read without a loop)
            name, position, is_sequence = positions[0]
            v = args[position] if position < n else kwargs.get(name)
            key = v.trace_tensor.dtype if type(v) is Tensor else _dtype_key(v, is_sequence)
            if len(positions) == 2:
                name, position, is_sequence = positions[1]
                v = args[position] if position < n else kwargs.get(name)
                key = (key, v.trace_tensor.dtype if type(v) is Tensor else _dtype_key(v, is_sequence))
        else:
            keys = []
            for name, position, is_sequence in positions:
                v = args[position] if position < n else kwargs.get(name)
                keys.append(v.trace_tensor.dtype if type(v) is Tensor else _dtype_key(v, is_sequence))
            key = tuple(keys)
        if key not in self._passed:
            self._full_check(args, kwargs)
            if len(self._passed) >= _MAX_PASSED:
                self._passed.clear()
            self._passed.add(key)

    def _full_check(self, args: tuple, kwargs: dict) -> None:
        """Bind each checked argument's dtype to its variable, reporting the first violation."""
        bound: Dict[str, Binding] = {}
        for p in self.params:
            if p.position < len(args):
                v = args[p.position]
            elif p.name in kwargs:
                v = kwargs[p.name]
            else:
                continue
            if p.is_sequence and type(v) in (list, tuple):
                for i, item in enumerate(v):
                    self._bind(bound, p, item, f"'{p.name}[{i}]'")
            else:
                self._bind(bound, p, v, f"'{p.name}'")
        for exception in self.exceptions:
            if all(var in bound and bound[var][0] is dt for var, dt in exception.items()):
                self._unsupported_combination([bound[var] for var in exception])

    def _bind(self, bound: Dict[str, Binding], p: _Param, value: Any, label: str) -> None:
        """Check one value's dtype against the allowed ones and the first value bound to its variable."""
        dt = _dtype_of(value)
        if dt is None:
            return
        if p.allowed is not None and dt not in p.allowed:
            self._unsupported(label, dt, value, self.variables[p.var])
        first = bound.setdefault(p.var, (dt, label, value))
        if first[0] is not dt:
            self._mismatch(first, (dt, label, value))

    # ---- the error reports ------------------------------------------------------------------------
    def _is_operator(self) -> bool:
        return self.what.startswith("'")

    def _unsupported(
        self, label: str, dt: dtypes.dtype, value: Any, allowed: Sequence[dtypes.dtype]
    ) -> typing.NoReturn:
        where = "" if self._is_operator() else f" for argument {label}"
        fix = (
            "Pass one of these dtypes."
            if isinstance(value, dtypes.dtype)
            else f"Use tripy.cast() to convert, e.g. tripy.cast(x, tripy.{allowed[0]})."
        )
        _report(
            f"{self.what} does not support dtype {dt}{where}.",
            [f"Supported dtypes: {', '.join(d.name for d in allowed)}.", fix],
            _origin(value),
        )

    def _mismatch(self, first: Binding, second: Binding) -> typing.NoReturn:
        if self._is_operator():
            prefix = f"Operands of {self.what}"
        else:
            prefix = f"{self.what}: {first[1]} and {second[1]}"
        _report(
            f"{prefix} must have the same data type, but got {first[0]} and {second[0]}.",
            [f"Use tripy.cast() to convert one of them, e.g. tripy.cast(x, tripy.{first[0]})."],
            _origin(first[2]) + _origin(second[2]),
        )

    def _unsupported_combination(self, bindings: List[Binding]) -> typing.NoReturn:
        argument = "" if self._is_operator() else "argument "
        parts = [f"dtype {dt} for {argument}{label}" for dt, label, _ in bindings]
        _report(
            f"{self.what} does not support {' together with '.join(parts)}.",
            ["This combination of data types is not supported; use tripy.cast() to convert."],
            [o for _, _, value in bindings for o in _origin(value)],
        )


def _dtype_of(v: Any) -> Optional[dtypes.dtype]:
    """The dtype of a tensor or the dtype a ``tripy.dtype`` argument names; None for other values."""
    cls = type(v)
    if cls is Tensor:
        return v.trace_tensor.dtype  # type: ignore[no-any-return]
    if cls is dtypes.dtype:
        return v  # type: ignore[no-any-return]
    if cls is DimensionSize:
        return dtypes.int32  # (reading .dtype would build a graph node for a static size)
    if isinstance(v, Tensor):
        return v.dtype
    return None


def _dtype_key(v: Any, is_sequence: bool) -> Any:
    """What ``DtypeRule.check`` keys a value other than a plain Tensor by."""
    if type(v) in _NUMBERS:
        return None
    if is_sequence and type(v) in (list, tuple):
        return tuple(_dtype_of(item) for item in v)
    return _dtype_of(v)


def _origin(value: Any) -> List[Any]:
    """Where a tensor argument was created (not for sizes from ``t.shape``, which have no such place)."""
    if not isinstance(value, Tensor) or isinstance(value, DimensionSize):
        return []
    return [value.stack_info] if value.stack_info is not None else []


def _report(message: str, details: List[str], origins: List[Any]) -> typing.NoReturn:
    raise_error(message, stack_info.capture(), details, origins)


# ---- reading a declaration (once, when the op is defined) --------------------------------------------
def _validate(func: Any, what: str, constraints: Constraints, variables: Variables, exceptions: Exceptions) -> None:
    """Assert that a declaration names parameters of `func` and declared variables (a mistake in tripy)."""
    params = inspect.signature(func).parameters
    names = {var for key, var in constraints.items() if key != RETURN}
    for key, var in constraints.items():
        if key == RETURN:
            for v in var if isinstance(var, tuple) else (var,):
                assert v in variables, f"{what}: the return value's dtype variable {v!r} is not in dtype_variables"
            continue
        assert key in params and params[key].kind not in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ), f"{what}: dtype_constraints names {key!r}, which is not a parameter"
        assert isinstance(var, str) and var in variables, f"{what}: dtype variable {var!r} of {key!r} is not declared"
    for var, listed in variables.items():
        assert listed and all(isinstance(d, dtypes.dtype) for d in listed), f"{what}: bad dtypes for {var!r}"
    for exc in exceptions:
        assert exc and all(v in names and isinstance(d, dtypes.dtype) for v, d in exc.items()), (
            f"{what}: a dtype exception must map declared variables (bound to parameters) to dtypes: {exc}"
        )


def _checked_params(func: Any, constraints: Constraints, variables: Variables, exceptions: Exceptions) -> List[_Param]:
    """The parameters a call could violate the declaration through. A parameter takes a sequence of
    tensors if its annotation says so; its elements then share the variable too."""
    params = inspect.signature(func).parameters
    positional = [
        p.name
        for p in params.values()
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    uses = collections.Counter(var for key, var in constraints.items() if key != RETURN)
    everything = frozenset(dtypes.ALL_DTYPES)
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        hints = {}
    checked = []
    for key, var in constraints.items():
        if key == RETURN:
            continue
        assert isinstance(var, str)
        allowed: Optional[FrozenSet[dtypes.dtype]] = frozenset(variables[var])
        if allowed == everything:
            allowed = None
        is_seq = _is_sequence(hints.get(key))
        if allowed is not None or uses[var] > 1 or exceptions or is_seq:  # else no call can violate it
            checked.append(_Param(key, positional.index(key) if key in positional else 1 << 30, var, allowed, is_seq))
    return checked


def _is_sequence(annotation: Any) -> bool:
    """Whether a parameter's annotation allows a sequence (of tensors)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        return any(_is_sequence(a) for a in typing.get_args(annotation))
    return origin in (list, tuple, collections.abc.Sequence)
