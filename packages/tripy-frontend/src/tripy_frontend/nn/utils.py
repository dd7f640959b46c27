"""Argument checks and math shared by the layers (not public)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.mean import mean
from tripy_frontend.ops.rsqrt import rsqrt
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.reshape import reshape

FLOAT_TYPES = (dtypes.float32, dtypes.float16, dtypes.bfloat16)


def check_int_arg(value: Any, what: str, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise_error(f"{what} must be an int >= {minimum}, but got {value!r}.", _stack.capture())
    return value


def check_float_dtype(dtype: Any, what: str) -> dtypes.dtype:
    if not any(dtype is d for d in FLOAT_TYPES):
        raise_error(
            f"{what}: dtype must be one of {', '.join(d.name for d in FLOAT_TYPES)}, but got {dtype!r}.",
            _stack.capture(),
        )
    return dtype


def check_input(x: Any, layer: Any, dtype: dtypes.dtype, min_rank: int = 1) -> None:
    """The input of a layer: a tensor of the layer's dtype with at least `min_rank` dims."""
    name = type(layer).__name__
    if not isinstance(x, Tensor):
        raise_error(f"{name} expects a tripy.Tensor input, but got {type(x).__name__}.", _stack.capture())
    if x.dtype is not dtype:
        raise_error(
            f"{name} was created with dtype {dtype}, but its input has dtype {x.dtype}.",
            _stack.capture(),
            [f"Cast the input with tp.cast(x, tp.{dtype}), or create the layer with dtype=tp.{x.dtype}."],
            [x.stack_info],
        )
    if x.rank < min_rank:
        raise_error(
            f"{name} expects an input of rank >= {min_rank}, but got shape {list(x.trace_tensor.shape)}.",
            _stack.capture(),
            [],
            [x.stack_info],
        )


def check_channels(x: Tensor, layer: Any, expected: int, what: str = "channels") -> None:
    """Dim 1 of an ``[N, C, ...]`` input must be `expected` (when known before run time)."""
    c = x.trace_tensor.shape[1]
    if c >= 0 and c != expected:
        raise_error(
            f"{type(layer).__name__} expects {expected} {what} (dim 1 of the input), but the input has shape "
            f"{list(x.trace_tensor.shape)}.",
            _stack.capture(),
            [],
            [x.stack_info],
        )


def normalize(x: Tensor, dims: Sequence[int], eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps), with the mean and the (biased) variance taken over `dims`."""

    centered = x - mean(x, dim=tuple(dims), keepdim=True)
    variance = mean(centered * centered, dim=tuple(dims), keepdim=True)
    return centered * rsqrt(variance + eps)


def in_float32(fn: Callable[..., Tensor], x: Tensor, *params: Tensor) -> Tensor:
    """``fn(x, *params)`` computed in float32 when `x` is float16 or bfloat16, and the result cast back: the
    mean and variance of a normalization lose too much in half precision (PyTorch's CPU kernels also
    accumulate in float32)."""

    if x.dtype not in (dtypes.float16, dtypes.bfloat16):
        return fn(x, *params)
    up = [cast(t, dtypes.float32) if t.dtype is x.dtype else t for t in (x, *params)]
    return cast(fn(*up), x.dtype)


def per_channel(p: Tensor, rank: int) -> Tensor:
    """A ``[C]`` parameter reshaped to ``[1, C, 1, ...]`` so it broadcasts over an ``[N, C, ...]`` input."""

    return reshape(p, (1, -1) + (1,) * (rank - 2))
