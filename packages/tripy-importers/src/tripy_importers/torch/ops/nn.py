"""ATen's neural-network operators: matrix products, convolutions, normalizations, pooling, attention, resizing."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import tripy_frontend.ops.avgpool as _avgpool
import tripy_frontend.ops.expand as _expand
import tripy_frontend.ops.maxpool as _maxpool
import tripy_frontend.ops.mean as _mean
import tripy_frontend.ops.reshape as _reshape
import tripy_frontend.ops.resize as _resize
import tripy_frontend.ops.rsqrt as _rsqrt
import tripy_frontend.ops.softmax as _softmax
import tripy_frontend.ops.transpose as _transpose
import tripy_frontend.ops.tril as _tril
import tripy_frontend.ops.full as _full
import tripy_frontend.ops.where as _where
from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.tensor import Tensor
from tripy_importers import layers
from tripy_importers.torch.ops.registry import aten


@aten("mm.default", "bmm.default", "matmul.default")
def mm(a: Tensor, b: Tensor) -> Tensor:
    return a @ b


@aten("addmm.default")
def addmm(bias: Tensor, a: Tensor, b: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    product = a @ b
    product = product if alpha == 1 else product * alpha
    return product + (bias if beta == 1 else bias * beta)


@aten("linear.default")
def linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    out = x @ _transpose.transpose(weight, 0, 1)
    return out if bias is None else out + bias


@aten("convolution.default")
def convolution(
    x: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Tensor:
    """Through tp.Conv / tp.ConvTranspose, with the program's weight and bias as the layer's parameters."""
    if transposed:
        pads = [(p, p - op) for p, op in zip(padding, output_padding)]
    else:
        pads = [(p, p) for p in padding]
    return layers.convolution(x, weight, bias, stride, pads, dilation, groups, transposed)


@aten("native_layer_norm.default")
def native_layer_norm(
    x: Tensor, shape: Sequence[int], weight: Optional[Tensor], bias: Optional[Tensor], eps: float
) -> Any:
    out, mean, rstd = layers.normalized(x, list(range(x.rank - len(shape), x.rank)), eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


@aten("layer_norm.default")
def layer_norm(
    x: Tensor,
    shape: Sequence[int],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
    cudnn_enable: bool = True,
) -> Tensor:
    return native_layer_norm(x, shape, weight, bias, eps)[0]


def _per_channel(v: Tensor, rank: int) -> Tensor:
    return _reshape.reshape(v, [1, -1] + [1] * (rank - 2))


@aten("_native_batch_norm_legit_no_training.default")
def batch_norm(
    x: Tensor,
    weight: Optional[Tensor],
    bias: Optional[Tensor],
    running_mean: Tensor,
    running_var: Tensor,
    momentum: float,
    eps: float,
) -> Any:
    scale = _rsqrt.rsqrt(running_var + eps)
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale
    if bias is not None:
        shift = shift + bias
    return x * _per_channel(scale, x.rank) + _per_channel(shift, x.rank), running_mean, running_var


@aten("native_group_norm.default")
def group_norm(
    x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], n: Any, c: int, hw: Any, groups: int, eps: float
) -> Any:
    grouped = _reshape.reshape(x, [x.shape[0], groups, -1])
    out, mean, rstd = layers.normalized(grouped, [2], eps)
    out = _reshape.reshape(out, list(x.shape))
    if weight is not None:
        out = out * _per_channel(weight, x.rank)
    if bias is not None:
        out = out + _per_channel(bias, x.rank)
    return out, _reshape.reshape(mean, [x.shape[0], groups]), _reshape.reshape(rstd, [x.shape[0], groups])


def _check_pool(what: str, dilation: Sequence[int], ceil_mode: bool) -> None:
    if any(d != 1 for d in dilation) or ceil_mode:
        raise_error(
            f"tripy imports {what} without dilation or ceil_mode; this one has dilation={list(dilation)}, "
            f"ceil_mode={ceil_mode}.",
            _stack.capture(),
        )


@aten("max_pool2d_with_indices.default", "max_pool3d_with_indices.default", "max_pool2d.default")
def max_pool(
    x: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> Any:
    n = len(kernel)
    _check_pool("max pooling", dilation, ceil_mode)
    pads = [(p, p) for p in (list(padding) * n if len(padding) == 1 else padding)]
    out = _maxpool.maxpool(x, list(kernel), list(stride) or list(kernel), pads)
    return out, None


@aten("avg_pool2d.default", "avg_pool3d.default")
def avg_pool(
    x: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Any = None,
) -> Tensor:
    n = len(kernel)
    _check_pool("average pooling", (1,), ceil_mode)
    pads = [(p, p) for p in (list(padding) * n if len(padding) == 1 else padding)]
    return _avgpool.avgpool(x, list(kernel), list(stride) or list(kernel), pads, count_include_pad)


@aten("_adaptive_avg_pool2d.default", "adaptive_avg_pool2d.default")
def adaptive_avg_pool(x: Tensor, output_size: Sequence[int]) -> Tensor:
    """Global pooling (output size 1) as a mean; other sizes as an average pool where the input divides evenly."""
    if all(s == 1 for s in output_size):
        return _mean.mean(x, list(range(x.rank - len(output_size), x.rank)), keepdim=True)
    spatial = x.trace_tensor.shape[x.rank - len(output_size) :]
    kernel = [size // out for size, out in zip(spatial, output_size)]
    return _avgpool.avgpool(x, kernel, kernel)


@aten("scaled_dot_product_attention.default")
def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Optional[Tensor] = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: Optional[float] = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q @ kᵀ * scale + mask) @ v``; with grouped-query attention each key/value head serves
    ``q_heads // kv_heads`` query heads."""
    if enable_gqa and q.trace_tensor.shape[-3] != k.trace_tensor.shape[-3]:
        k, v = _repeat_heads(k, q), _repeat_heads(v, q)
    scale = 1.0 / math.sqrt(q.trace_tensor.shape[-1]) if scale is None else scale
    scores = (q * scale) @ _transpose.transpose(k, -2, -1)
    if is_causal:
        ones = _full.full([q.shape[-2], k.shape[-2]], 1.0, dtypes.float32)
        attn_mask = _tril.tril(ones) > 0.5
    if attn_mask is not None:
        if attn_mask.dtype is dtypes.bool:
            attn_mask = _where.where(
                attn_mask, _full.full([], 0.0, scores.dtype), _full.full([], float("-inf"), scores.dtype)
            )
        scores = scores + attn_mask
    return _softmax.softmax(scores, scores.rank - 1) @ v


def _repeat_heads(kv: Tensor, q: Tensor) -> Tensor:
    """[B, H_kv, S, D] -> [B, H_q, S, D], each key/value head repeated for its group of query heads."""
    groups = q.trace_tensor.shape[-3] // kv.trace_tensor.shape[-3]
    b, h, s, d = kv.shape
    expanded = _expand.expand(_reshape.reshape(kv, [b, h, 1, s, d]), [b, h, groups, s, d])
    return _reshape.reshape(expanded, [b, h * groups, s, d])


def _resized(x: Tensor, mode: str, output_size: Any, scales: Any, align_corners: bool) -> Tensor:
    if output_size is not None:
        return _resize.resize(x, list(x.shape[:2]) + list(output_size), mode=mode, align_corners=align_corners)
    return _resize.resize(x, [1.0, 1.0] + [float(s) for s in scales], mode=mode, align_corners=align_corners)


@aten("upsample_nearest2d.vec")
def upsample_nearest(x: Tensor, output_size: Any, scale_factors: Any) -> Tensor:
    return _resized(x, "nearest", output_size, scale_factors, False)


@aten("upsample_bilinear2d.vec")
def upsample_bilinear(x: Tensor, output_size: Any, align_corners: bool, scale_factors: Any) -> Tensor:
    return _resized(x, "linear", output_size, scale_factors, align_corners)
