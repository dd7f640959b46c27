"""ATen reductions, scans and normalizations over a dim: sums, means, maxima, softmax, variance, cumulative sums."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import tripy_frontend.ops.all as _all
import tripy_frontend.ops.any as _any
import tripy_frontend.ops.argmax as _argmax
import tripy_frontend.ops.argmin as _argmin
import tripy_frontend.ops.cast as _cast
import tripy_frontend.ops.cumsum as _cumsum
import tripy_frontend.ops.exp as _exp
import tripy_frontend.ops.log as _log
import tripy_frontend.ops.max as _max
import tripy_frontend.ops.mean as _mean
import tripy_frontend.ops.min as _min
import tripy_frontend.ops.prod as _prod
import tripy_frontend.ops.softmax as _softmax
import tripy_frontend.ops.sum as _sum
import tripy_frontend.ops.topk as _topk
from tripy_flatir import dtypes
from tripy_frontend.tensor import Tensor
from tripy_importers.torch.ops.registry import aten


def _dims(a: Tensor, dim: Any) -> Any:
    """PyTorch's dim argument as tripy's: None or an empty list mean every dim."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    if isinstance(dim, int):
        return dim % max(a.rank, 1)
    return [d % a.rank for d in dim]


def _accumulate(a: Tensor, dtype: Optional[dtypes.dtype]) -> Tensor:
    if dtype is not None and a.dtype is not dtype:
        return _cast.cast(a, dtype)
    if a.dtype is dtypes.bool:  # PyTorch sums bools as int64
        return _cast.cast(a, dtypes.int64)
    return a


@aten("sum.dim_IntList", "sum.default")
def sum_(a: Tensor, dim: Any = None, keepdim: bool = False, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    return _sum.sum(_accumulate(a, dtype), _dims(a, dim), keepdim)


@aten("mean.dim", "mean.default")
def mean(a: Tensor, dim: Any = None, keepdim: bool = False, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    return _mean.mean(_accumulate(a, dtype), _dims(a, dim), keepdim)


@aten("prod.dim_int", "prod.default")
def prod(a: Tensor, dim: Any = None, keepdim: bool = False, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    return _prod.prod(_accumulate(a, dtype), _dims(a, dim), keepdim)


@aten("amax.default")
def amax(a: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return _max.max(a, _dims(a, dim), keepdim)


@aten("amin.default")
def amin(a: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return _min.min(a, _dims(a, dim), keepdim)


@aten("max.dim")
def max_dim(a: Tensor, dim: int, keepdim: bool = False) -> Any:
    return _max.max(a, dim % a.rank, keepdim), _argmax.argmax(a, dim % a.rank, keepdim)


@aten("min.dim")
def min_dim(a: Tensor, dim: int, keepdim: bool = False) -> Any:
    return _min.min(a, dim % a.rank, keepdim), _argmin.argmin(a, dim % a.rank, keepdim)


@aten("max.default")
def max_all(a: Tensor) -> Tensor:
    return _max.max(a)


@aten("min.default")
def min_all(a: Tensor) -> Tensor:
    return _min.min(a)


@aten("argmax.default")
def argmax(a: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    return _argmax.argmax(a, None if dim is None else dim % a.rank, keepdim)


@aten("argmin.default")
def argmin(a: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    return _argmin.argmin(a, None if dim is None else dim % a.rank, keepdim)


@aten("any.dim", "any.dims", "any.default")
def any_(a: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _any.any(a if a.dtype is dtypes.bool else a != 0, _dims(a, dim), keepdim)


@aten("all.dim", "all.dims", "all.default")
def all_(a: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _all.all(a if a.dtype is dtypes.bool else a != 0, _dims(a, dim), keepdim)


@aten("_softmax.default", "softmax.int")
def softmax(a: Tensor, dim: int, half_to_float: Any = False) -> Tensor:
    return _softmax.softmax(a, dim % a.rank)


@aten("_log_softmax.default", "log_softmax.int")
def log_softmax(a: Tensor, dim: int, half_to_float: Any = False) -> Tensor:
    shifted = a - _max.max(a, dim % a.rank, keepdim=True)
    return shifted - _log.log(_sum.sum(_exp.exp(shifted), dim % a.rank, keepdim=True))


@aten("var.correction", "var.dim")
def var(a: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False, **kwargs: Any) -> Tensor:
    if isinstance(correction, bool):  # var.dim's `unbiased`
        correction = 1 if correction else 0
    dims = _dims(a, dim)
    centered = a - _mean.mean(a, dims, keepdim=True)
    count: Any = 1
    for d in range(a.rank) if dims is None else ([dims] if isinstance(dims, int) else dims):
        count = count * a.shape[d]
    divisor = _cast.cast(count, a.dtype) - (1.0 if correction is None else float(correction))
    return _sum.sum(centered * centered, dims, keepdim) / divisor


@aten("cumsum.default")
def cumsum(a: Tensor, dim: int, dtype: Optional[dtypes.dtype] = None) -> Tensor:
    return _cumsum.cumsum(_accumulate(a, dtype), dim % a.rank)


@aten("topk.default")
def topk(a: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    if largest:
        return _topk.topk(a, k, dim % a.rank)
    values, indices = _topk.topk(-a, k, dim % a.rank)
    return -values, indices
