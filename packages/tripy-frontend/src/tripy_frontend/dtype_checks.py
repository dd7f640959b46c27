"""The dtype checks that ``dtype_rules`` builds from a declaration, and their error reports.

The checks run at every op call, so the common cases (every checked argument a tensor of an allowed,
matching dtype; a Python number next to a tensor) take unrolled fast paths of a few attribute reads
(``check_one``, ``check_pair``, ``check_sequence``). Anything else, and every error, goes through the
general check.
"""

from __future__ import annotations

import collections.abc
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tripy_flatir import dtypes, stack_info
from tripy_flatir.exceptions import raise_error
from tripy_frontend.tensor import DimensionSize
from tripy_frontend.tensor import Tensor

Variables = Mapping[str, Sequence[dtypes.dtype]]
Exceptions = Sequence[Mapping[str, dtypes.dtype]]
# One checked parameter: (name, position or a large number for keyword-only, dtype variable, the allowed
# dtypes or None for all of them, whether other parameters share the variable, whether it takes a sequence).
Entry = Tuple[str, int, str, Optional[frozenset], bool, bool]
Binding = Tuple[dtypes.dtype, str, int, Any]  # (dtype, parameter, index in a sequence or -1, the value)
NUMBERS = (int, float, bool)


def general_check(entries: List[Entry], what: str, variables: Variables, exceptions: Exceptions, tensor_cls: Any,
                  size_cls: Any) -> Callable[[tuple, dict], None]:
    """The full check of a declaration, and the one that reports violations."""
    dtype_of = _dtype_reader(tensor_cls, size_cls)

    def check(args: tuple, kwargs: dict) -> None:
        n = len(args)
        bound: Optional[Dict[str, Binding]] = None
        for pname, pos, var, allowed, is_shared, is_seq in entries:
            if pos < n:
                v = args[pos]
            elif kwargs and pname in kwargs:
                v = kwargs[pname]
            else:
                continue
            if is_seq and type(v) in (list, tuple):
                bound = bind_sequence(pname, v, var, allowed, bound)
                continue
            dt = dtype_of(v)
            if dt is None:
                continue
            if is_shared or exceptions:
                bound = bind(bound, var, allowed, (dt, pname, -1, v))
            elif allowed is not None and dt not in allowed:
                _unsupported(what, f"'{pname}'", dt, variables[var], v)
        if exceptions and bound:
            _check_exceptions(what, exceptions, {var: _labelled(b) for var, b in bound.items()})

    def bind_sequence(pname: str, seq: Any, var: str, allowed: Optional[frozenset],
                      bound: Optional[Dict[str, Binding]]) -> Dict[str, Binding]:
        bound = {} if bound is None else bound
        for i, item in enumerate(seq):
            dt = dtype_of(item)
            if dt is not None:
                bind(bound, var, allowed, (dt, pname, i, item))
        return bound

    def bind(bound: Optional[Dict[str, Binding]], var: str, allowed: Optional[frozenset],
             binding: Binding) -> Dict[str, Binding]:
        """Check one value's dtype against the allowed ones and the first value bound to `var`."""
        dt, pname, i, value = binding
        if allowed is not None and dt not in allowed:
            _unsupported(what, f"'{pname}'" if i < 0 else f"'{pname}[{i}]'", dt, variables[var], value)
        bound = {} if bound is None else bound
        first = bound.get(var)
        if first is None:
            bound[var] = binding
        elif first[0] is not dt:
            _mismatch(what, _labelled(first), _labelled(binding))
        return bound

    return check


def _dtype_reader(tensor_cls: Any, size_cls: Any) -> Callable[[Any], Optional[dtypes.dtype]]:
    """dtype_of(value): the dtype of a tensor or the dtype a ``tripy.dtype`` argument names; None for others."""

    def dtype_of(v: Any) -> Optional[dtypes.dtype]:
        cls = type(v)
        if cls is tensor_cls:
            return v.trace_tensor.dtype  # type: ignore[no-any-return]
        if cls is dtypes.dtype:
            return v  # type: ignore[no-any-return]
        if cls is size_cls:
            return dtypes.int32  # (reading .dtype would build a graph node for a static size)
        if isinstance(v, tensor_cls):
            return v.dtype  # type: ignore[no-any-return]
        return None

    return dtype_of


def check_one(entry: Entry, general: Callable[[tuple, dict], None], tensor_cls: Any) -> Callable[[tuple, dict], None]:
    """One checked parameter (most ops)."""
    pname, pos, _, allowed, _, _ = entry
    assert allowed is not None

    def check(args: tuple, kwargs: dict) -> None:
        v: Any = args[pos] if pos < len(args) else kwargs.get(pname)
        if type(v) is tensor_cls:
            if v.trace_tensor.dtype not in allowed:
                general(args, kwargs)
        elif v is not None:
            general(args, kwargs)

    return check


def check_pair(first: Entry, second: Entry, general: Callable[[tuple, dict], None],
                tensor_cls: Any) -> Callable[[tuple, dict], None]:
    """Two parameters that share a dtype variable (the binary ops), either of which may be a number."""
    name_a, pos_a, _, allowed, _, _ = first
    name_b, pos_b, _, _, _, _ = second

    def check(args: tuple, kwargs: dict) -> None:
        n = len(args)
        a: Any = args[pos_a] if pos_a < n else kwargs.get(name_a)
        b: Any = args[pos_b] if pos_b < n else kwargs.get(name_b)
        if type(a) is tensor_cls:
            da = a.trace_tensor.dtype
            if type(b) is tensor_cls:
                if da is b.trace_tensor.dtype and (allowed is None or da in allowed):
                    return
            elif type(b) in NUMBERS and (allowed is None or da in allowed):
                return
        elif type(b) is tensor_cls and type(a) in NUMBERS:
            if allowed is None or b.trace_tensor.dtype in allowed:
                return
        general(args, kwargs)

    return check


def check_sequence(entry: Entry, general: Callable[[tuple, dict], None],
                    tensor_cls: Any) -> Callable[[tuple, dict], None]:
    """One parameter that takes a sequence of tensors (e.g. tripy.concatenate)."""
    pname, pos, _, allowed, _, _ = entry

    def check(args: tuple, kwargs: dict) -> None:
        seq: Any = args[pos] if pos < len(args) else kwargs.get(pname)
        if type(seq) in (list, tuple) and seq and type(seq[0]) is tensor_cls:
            dt = seq[0].trace_tensor.dtype
            if allowed is None or dt in allowed:
                for item in seq:
                    if type(item) is not tensor_cls or item.trace_tensor.dtype is not dt:
                        break
                else:
                    return
        general(args, kwargs)

    return check



def _labelled(binding: Binding) -> Tuple[dtypes.dtype, str, Any]:
    dt, pname, index, value = binding
    return dt, f"'{pname}'" if index < 0 else f"'{pname}[{index}]'", value


def is_sequence(annotation: Any) -> bool:
    """Whether a parameter's annotation allows a sequence (of tensors)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        return any(is_sequence(a) for a in typing.get_args(annotation))
    return origin in (list, tuple, collections.abc.Sequence)


def _is_operator(what: str) -> bool:
    return what.startswith("'")


def _origin(value: Any) -> List[Any]:
    """Where a tensor argument was created (not for sizes from ``t.shape``, which have no such place)."""
    if not isinstance(value, Tensor) or isinstance(value, DimensionSize):
        return []
    return [value.stack_info] if value.stack_info is not None else []


def _unsupported(what: str, label: str, dt: dtypes.dtype, allowed: Sequence[dtypes.dtype],
                 value: Any) -> typing.NoReturn:
    where = "" if _is_operator(what) else f" for argument {label}"
    fix = ("Pass one of these dtypes." if isinstance(value, dtypes.dtype) else
           f"Use tripy.cast() to convert, e.g. tripy.cast(x, tripy.{allowed[0]}).")
    _report_dtype(f"{what} does not support dtype {dt}{where}.",
                  [f"Supported dtypes: {', '.join(d.name for d in allowed)}.", fix], _origin(value))


def _mismatch(what: str, first: Tuple[dtypes.dtype, str, Any],
              second: Tuple[dtypes.dtype, str, Any]) -> typing.NoReturn:
    names = "Operands" if _is_operator(what) else f"{first[1]} and {second[1]}"
    prefix = f"{names} of {what}" if _is_operator(what) else f"{what}: {names}"
    _report_dtype(f"{prefix} must have the same data type, but got {first[0]} and {second[0]}.",
                  [f"Use tripy.cast() to convert one of them, e.g. tripy.cast(x, tripy.{first[0]})."],
                  _origin(first[2]) + _origin(second[2]))


def _check_exceptions(what: str, exceptions: Exceptions, bound: Dict[str, Tuple[dtypes.dtype, str, Any]]) -> None:
    for exc in exceptions:
        if all(var in bound and bound[var][0] is dt for var, dt in exc.items()):
            parts = [f"dtype {bound[var][0]} for {'' if _is_operator(what) else 'argument '}{bound[var][1]}"
                     for var in exc]
            _report_dtype(f"{what} does not support {' together with '.join(parts)}.",
                          ["This combination of data types is not supported; use tripy.cast() to convert."],
                          [o for var in exc for o in _origin(bound[var][2])])


def _report_dtype(message: str, details: List[str], origins: List[Any]) -> typing.NoReturn:
    raise_error(message, stack_info.capture(), details, origins)
