"""ONNX's neural-network operators: matrix products, convolutions, pooling, normalizations."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import tripy_frontend.ops.avgpool as _avgpool
import tripy_frontend.ops.max as _max
import tripy_frontend.ops.maxpool as _maxpool
import tripy_frontend.ops.mean as _mean
import tripy_frontend.ops.reshape as _reshape
import tripy_frontend.ops.rsqrt as _rsqrt
import tripy_frontend.ops.transpose as _transpose
from tripy_frontend.tensor import Tensor
from tripy_importers import layers
from tripy_importers.onnx.ops.registry import onnx_op


@onnx_op("MatMul")
def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a @ b


@onnx_op("Gemm")
def gemm(
    a: Tensor,
    b: Tensor,
    c: Optional[Tensor] = None,
    alpha: float = 1.0,
    beta: float = 1.0,
    transA: int = 0,
    transB: int = 0,
) -> Tensor:  # noqa: N803 (ONNX's attribute names)
    out = (_transpose.transpose(a, 0, 1) if transA else a) @ (_transpose.transpose(b, 0, 1) if transB else b)
    if alpha != 1.0:
        out = out * alpha
    if c is not None:
        out = out + (c if beta == 1.0 else c * beta)
    return out


def _pads(pads: Optional[Sequence[int]], n: int) -> List[Any]:
    """ONNX's [begin..., end...] pads as (begin, end) pairs."""
    pads = list(pads or [0] * (2 * n))
    return [(pads[i], pads[i + n]) for i in range(n)]


def _check_auto_pad(auto_pad: str) -> None:
    if auto_pad not in ("NOTSET", "VALID"):
        raise ValueError(f"auto_pad={auto_pad}")


@onnx_op("Conv")
def conv(
    x: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    auto_pad: str = "NOTSET",
    dilations: Optional[List[int]] = None,
    group: int = 1,
    kernel_shape: Optional[List[int]] = None,
    pads: Optional[List[int]] = None,
    strides: Optional[List[int]] = None,
) -> Tensor:
    """Through tp.Conv, with the model's weight and bias as the layer's parameters."""
    _check_auto_pad(auto_pad)
    n = weight.rank - 2
    return layers.convolution(
        x, weight, bias, strides or [1] * n, _pads(pads, n), dilations or [1] * n, group, transposed=False
    )


@onnx_op("ConvTranspose")
def conv_transpose(
    x: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    auto_pad: str = "NOTSET",
    dilations: Optional[List[int]] = None,
    group: int = 1,
    kernel_shape: Optional[List[int]] = None,
    output_padding: Optional[List[int]] = None,
    output_shape: Any = None,
    pads: Optional[List[int]] = None,
    strides: Optional[List[int]] = None,
) -> Tensor:
    _check_auto_pad(auto_pad)
    n = weight.rank - 2
    extra = list(output_padding or [0] * n)
    pairs = [(b, e - p) for (b, e), p in zip(_pads(pads, n), extra)]
    return layers.convolution(x, weight, bias, strides or [1] * n, pairs, dilations or [1] * n, group, transposed=True)


@onnx_op("MaxPool")
def max_pool(
    x: Tensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    dilations: Optional[List[int]] = None,
    kernel_shape: Sequence[int] = (),
    pads: Optional[List[int]] = None,
    storage_order: int = 0,
    strides: Optional[List[int]] = None,
) -> Tensor:
    _check_auto_pad(auto_pad)
    if ceil_mode or any(d != 1 for d in dilations or []):
        raise ValueError("MaxPool with ceil_mode or dilations")
    n = len(kernel_shape)
    return _maxpool.maxpool(x, list(kernel_shape), list(strides or [1] * n), _pads(pads, n))


@onnx_op("AveragePool")
def average_pool(
    x: Tensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    count_include_pad: int = 0,
    dilations: Optional[List[int]] = None,
    kernel_shape: Sequence[int] = (),
    pads: Optional[List[int]] = None,
    strides: Optional[List[int]] = None,
) -> Tensor:
    _check_auto_pad(auto_pad)
    if ceil_mode:
        raise ValueError("AveragePool with ceil_mode")
    n = len(kernel_shape)
    return _avgpool.avgpool(x, list(kernel_shape), list(strides or [1] * n), _pads(pads, n), bool(count_include_pad))


@onnx_op("GlobalAveragePool")
def global_average_pool(x: Tensor) -> Tensor:
    return _mean.mean(x, list(range(2, x.rank)), keepdim=True)


@onnx_op("GlobalMaxPool")
def global_max_pool(x: Tensor) -> Tensor:
    return _max.max(x, list(range(2, x.rank)), keepdim=True)


@onnx_op("LayerNormalization")
def layer_norm(
    x: Tensor, scale: Tensor, bias: Optional[Tensor] = None, axis: int = -1, epsilon: float = 1e-5, stash_type: int = 1
) -> Any:
    out, mean, rstd = layers.normalized(x, list(range(axis % x.rank, x.rank)), epsilon)
    out = out * scale
    return (out if bias is None else out + bias), mean, rstd


def _per_channel(v: Tensor, rank: int) -> Tensor:
    return _reshape.reshape(v, [1, -1] + [1] * (rank - 2))


@onnx_op("BatchNormalization")
def batch_norm(
    x: Tensor,
    scale: Tensor,
    bias: Tensor,
    mean: Tensor,
    var: Tensor,
    epsilon: float = 1e-5,
    momentum: float = 0.9,
    training_mode: int = 0,
) -> Tensor:
    factor = _rsqrt.rsqrt(var + epsilon) * scale
    shift = bias - mean * factor
    return x * _per_channel(factor, x.rank) + _per_channel(shift, x.rank)


@onnx_op("InstanceNormalization")
def instance_norm(x: Tensor, scale: Tensor, bias: Tensor, epsilon: float = 1e-5) -> Tensor:
    out = layers.normalized(x, list(range(2, x.rank)), epsilon)[0]
    return out * _per_channel(scale, x.rank) + _per_channel(bias, x.rank)


@onnx_op("GroupNormalization")
def group_norm(
    x: Tensor, scale: Tensor, bias: Tensor, epsilon: float = 1e-5, num_groups: int = 1, stash_type: int = 1
) -> Tensor:
    """Opset 21's GroupNormalization (per-channel scale and bias)."""
    grouped = _reshape.reshape(x, [x.shape[0], num_groups, -1])
    out = _reshape.reshape(layers.normalized(grouped, [2], epsilon)[0], list(x.shape))
    return out * _per_channel(scale, x.rank) + _per_channel(bias, x.rank)
