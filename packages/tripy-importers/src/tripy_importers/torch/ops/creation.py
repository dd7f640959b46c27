"""ATen operators that make new tensors: constants, ranges, tensors shaped like another."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import tripy_frontend.ops.arange as _arange
import tripy_frontend.ops.full as _full
from tripy_flatir import dtypes
from tripy_frontend.tensor import Tensor
from tripy_importers.torch.ops.registry import aten


def _value(value: Any, dtype: Optional[dtypes.dtype]) -> Any:
    if dtype is dtypes.bool:
        return bool(value)
    return int(value) if dtype in (dtypes.int32, dtypes.int64, dtypes.int8) and value == int(value) else value


@aten("full.default")
def full(size: Sequence[Any], value: Any, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    dtype = dtype or (dtypes.float32 if isinstance(value, float) else dtypes.int64)
    return _full.full(list(size), _value(value, dtype), dtype)


@aten("full_like.default")
def full_like(a: Tensor, value: Any, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    return _full.full_like(a, _value(value, dtype or a.dtype), dtype)


@aten("zeros.default", "empty.memory_format", "new_zeros.default", "new_empty.default")
def zeros(*args: Any, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    size = args[-1]  # (size) or (self, size)
    return _full.full(list(size), 0, dtype or dtypes.float32)


@aten("ones.default", "new_ones.default")
def ones(*args: Any, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    return _full.full(list(args[-1]), 1, dtype or dtypes.float32)


@aten("zeros_like.default", "empty_like.default")
def zeros_like(a: Tensor, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    return _full.full_like(a, 0, dtype)


@aten("ones_like.default")
def ones_like(a: Tensor, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    return _full.full_like(a, 1, dtype)


@aten("scalar_tensor.default")
def scalar_tensor(value: Any, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    dtype = dtype or dtypes.float32
    return _full.full([], _value(value, dtype), dtype)


@aten("arange.start_step", "arange.start", "arange.default")
def arange(*args: Any, dtype: Optional[dtypes.dtype] = None, **kwargs: Any) -> Tensor:
    start, end, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    dtype = dtype or (dtypes.float32 if any(isinstance(v, float) for v in (start, end, step)) else dtypes.int64)
    return _arange.arange(start, end, step, dtype)
