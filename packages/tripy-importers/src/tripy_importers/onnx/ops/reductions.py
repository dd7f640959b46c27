"""ONNX reductions and normalizations over axes: ReduceSum/Mean/Max/Min/Prod, ArgMax/ArgMin, Softmax, CumSum."""

from __future__ import annotations

from typing import Any, Callable

import tripy_frontend.ops.argmax as _argmax
import tripy_frontend.ops.argmin as _argmin
import tripy_frontend.ops.cumsum as _cumsum
import tripy_frontend.ops.exp as _exp
import tripy_frontend.ops.flip as _flip
import tripy_frontend.ops.log as _log
import tripy_frontend.ops.max as _max
import tripy_frontend.ops.mean as _mean
import tripy_frontend.ops.min as _min
import tripy_frontend.ops.prod as _prod
import tripy_frontend.ops.softmax as _softmax
import tripy_frontend.ops.sqrt as _sqrt
import tripy_frontend.ops.sum as _sum
from tripy_frontend.tensor import Tensor
from tripy_importers.onnx.ops.registry import axes, onnx_op


def _reduce(fn: Callable[..., Tensor], square: bool = False) -> Callable[..., Any]:
    """An ONNX Reduce* (opset 18: the axes are an input; none means every axis, or nothing with
    `noop_with_empty_axes`)."""

    def call(x: Tensor, dims: Any = None, keepdims: int = 1, noop_with_empty_axes: int = 0) -> Tensor:
        chosen = [d % x.rank for d in axes(dims)]
        if not chosen and noop_with_empty_axes:
            return x
        return fn(x * x if square else x, chosen or None, bool(keepdims))

    return call


onnx_op("ReduceSum")(_reduce(_sum.sum))
onnx_op("ReduceMean")(_reduce(_mean.mean))
onnx_op("ReduceMax")(_reduce(_max.max))
onnx_op("ReduceMin")(_reduce(_min.min))
onnx_op("ReduceProd")(_reduce(_prod.prod))
onnx_op("ReduceSumSquare")(_reduce(_sum.sum, square=True))


@onnx_op("ReduceL2")
def reduce_l2(x: Tensor, dims: Any = None, keepdims: int = 1, noop_with_empty_axes: int = 0) -> Tensor:
    return _sqrt.sqrt(_reduce(_sum.sum, square=True)(x, dims, keepdims, noop_with_empty_axes))


@onnx_op("ArgMax")
def argmax(x: Tensor, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> Tensor:
    return _argmax.argmax(x, axis % x.rank, bool(keepdims))


@onnx_op("ArgMin")
def argmin(x: Tensor, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> Tensor:
    return _argmin.argmin(x, axis % x.rank, bool(keepdims))


@onnx_op("Softmax")
def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return _softmax.softmax(x, axis % x.rank)


@onnx_op("LogSoftmax")
def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    shifted = x - _max.max(x, axis % x.rank, keepdim=True)
    return shifted - _log.log(_sum.sum(_exp.exp(shifted), axis % x.rank, keepdim=True))


@onnx_op("CumSum")
def cumsum(x: Tensor, axis: Any, exclusive: int = 0, reverse: int = 0) -> Tensor:
    dim = axes(axis)[0] % x.rank
    if reverse:
        x = _flip.flip(x, dim)
    out = _cumsum.cumsum(x, dim)
    if exclusive:
        out = out - x
    return _flip.flip(out, dim) if reverse else out
