"""Computations both importers build the same way from tripy's ops: convolutions through tripy's layers with the
model's own weights, and normalization over some dims."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import tripy_frontend.ops.mean as _mean
import tripy_frontend.ops.rsqrt as _rsqrt
from tripy_frontend.nn.conv import Conv
from tripy_frontend.nn.conv_transpose import ConvTranspose
from tripy_frontend.tensor import Tensor


def convolution(
    x: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    stride: Sequence[int],
    padding: Sequence[Tuple[Any, Any]],
    dilation: Sequence[int],
    groups: int,
    transposed: bool,
) -> Tensor:
    """``x`` through a tp.Conv (weight ``[O, C/groups, *k]``) or tp.ConvTranspose (weight ``[C, O/groups, *k]``)
    whose parameters are the model's `weight` and `bias`; `padding` holds tripy's (before, after) pairs."""
    shape = weight.trace_tensor.shape
    layer_type: Any = ConvTranspose if transposed else Conv
    channels = (shape[0], shape[1] * groups) if transposed else (shape[1] * groups, shape[0])
    layer = layer_type(
        *channels,
        tuple(shape[2:]),
        stride=tuple(stride),
        padding=list(padding),
        dilation=tuple(dilation),
        groups=groups,
        bias=bias is not None,
        dtype=weight.dtype,
    )
    layer.weight = weight
    if bias is not None:
        layer.bias = bias
    return layer(x)


def normalized(x: Tensor, dims: List[int], eps: float) -> Any:
    """``(x - mean) * rstd`` over `dims`, with the mean and rstd (kept dims), as layer/group norms compute them."""
    mean = _mean.mean(x, dims, keepdim=True)
    centered = x - mean
    rstd = _rsqrt.rsqrt(_mean.mean(centered * centered, dims, keepdim=True) + eps)
    return centered * rstd, mean, rstd
