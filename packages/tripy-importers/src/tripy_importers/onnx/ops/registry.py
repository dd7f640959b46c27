"""The ONNX operators tripy imports, and how shape values travel between them.

A function takes a node's inputs (``None`` for an omitted optional input) and its attributes as keyword arguments,
and returns its output (a tuple for several). An input is a ``tp.Tensor``, or a :class:`Dims`: ONNX computes shapes
with small int64 tensors (``Shape``, ``Gather``, ``Concat``, ...), and keeping those as tripy sizes instead of tensors
lets ``tp.reshape``, ``tp.expand`` and ``tp.arange`` take them, static ones folded and dynamic ones as
``tp.DimensionSize`` s, so a model compiled over a range of shapes computes its shapes from the input's dims.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Sequence, Tuple

import numpy as np

import tripy_frontend.ops.cast as _cast
import tripy_frontend.ops.full as _full
import tripy_frontend.ops.stack as _stack
from tripy_flatir import dtypes
from tripy_frontend.tensor import DimensionSize, Tensor, static_value

OPS: Dict[str, Callable[..., Any]] = {}


def onnx_op(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function for each ONNX operator type in `names` (the default domain)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            OPS[name] = fn
        return fn

    return register


@dataclass(frozen=True)
class Dims:
    """A small ONNX integer tensor of rank 0 or 1 whose elements are Python ints or ``tp.DimensionSize`` s.

    Shape subgraphs stay in this form (static values fold as Python ints); an operator that needs a real tensor
    turns it into one with :func:`tensor`.
    """

    values: Tuple[Any, ...]
    scalar: bool = False
    dtype: dtypes.dtype = dtypes.int64

    @property
    def static(self) -> bool:
        return all(isinstance(v, int) for v in self.values)

    def ints(self) -> Tuple[int, ...]:
        """The values as Python ints (run-time sizes evaluated; only for values that must be static)."""
        return tuple(int(v) for v in self.values)

    def with_values(self, values: Sequence[Any], scalar: bool = False) -> "Dims":
        return Dims(tuple(values), scalar, self.dtype)


def size(value: Any) -> Any:
    """A DimensionSize as an int where it is static (folding at import and at trace time)."""
    if isinstance(value, DimensionSize):
        known = static_value(value)
        return value if known is None else known
    return int(value) if isinstance(value, (np.integer, bool)) else value


def dims_of(sizes: Sequence[Any], scalar: bool = False) -> Dims:
    return Dims(tuple(size(s) for s in sizes), scalar)


def tensor(value: Any, like: Any = None) -> Any:
    """`value` as a ``tp.Tensor``: a Dims becomes a tensor of its dtype (static values as constant data, run-time
    sizes stacked); tensors pass through. With `like`, a Python number becomes a rank-0 tensor of `like`'s dtype."""
    if isinstance(value, Dims):
        if value.static:
            data = np.array(value.values if not value.scalar else value.values[0], dtype=value.dtype.numpy_dtype)
            return Tensor(data)
        parts = [
            _full.full([], v, value.dtype) if isinstance(v, int) else _cast.cast(v, value.dtype) for v in value.values
        ]
        return parts[0] if value.scalar else _stack.stack(parts, 0)
    if isinstance(value, DimensionSize):
        return _cast.cast(value, dtypes.int64)
    if like is not None and isinstance(value, (int, float, bool)):
        return _full.full([], value, like.dtype)
    return value


def rank(value: Any) -> int:
    if isinstance(value, Dims):
        return 0 if value.scalar else 1
    return value.rank


def axes(value: Any) -> Tuple[int, ...]:
    """An axes input (a static Dims) as ints, or () when omitted."""
    if value is None:
        return ()
    if not isinstance(value, Dims) or not value.static:
        raise ValueError("axes computed at run time")
    return value.ints()


# ONNX's TensorProto element types as tripy dtypes (tripy has no float64: it computes those in float32).
ONNX_DTYPES = {
    1: dtypes.float32,
    3: dtypes.int8,
    6: dtypes.int32,
    7: dtypes.int64,
    9: dtypes.bool,
    10: dtypes.float16,
    11: dtypes.float32,
    16: dtypes.bfloat16,
    2: dtypes.int32,
}


def onnx_dtype(elem_type: int) -> dtypes.dtype:
    found = ONNX_DTYPES.get(elem_type)
    if found is None:
        raise ValueError(f"element type {elem_type}")
    return found
