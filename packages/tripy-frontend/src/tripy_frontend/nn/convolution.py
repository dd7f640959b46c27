"""The convolution used by tp.Conv and tp.ConvTranspose (frontend-internal), and their argument checks."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_backend import plan
from tripy_trace.ops.convolution import Convolution
from tripy_trace.ops.storage import Storage
from tripy_trace.tensor import TraceTensor
from tripy_frontend.compiler.tracing import traced_function
from tripy_frontend.nn.utils import FLOAT_TYPES, check_int_arg
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.permute import permute
from tripy_frontend.ops.reshape import reshape


def _int_tuple(value: Any, n: int, name: str, what: str, minimum: int) -> Tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * n
    if (
        not isinstance(value, Sequence)
        or len(value) != n
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum for v in value)
    ):
        raise_error(
            f"{what}: {name} must be a sequence of {n} int(s) >= {minimum} (one per spatial dim), but got {value!r}.",
            _stack.capture(),
        )
    return tuple(int(v) for v in value)


def check_conv_args(
    what: str,
    in_channels: int,
    out_channels: int,
    kernel_dims: Any,
    padding: Any,
    stride: Any,
    groups: Any,
    dilation: Any,
) -> Tuple[Tuple[int, ...], Tuple[Tuple[int, int], ...], Tuple[int, ...], int, Tuple[int, ...]]:
    """Validate and normalize (kernel_dims, padding, stride, groups, dilation), with nvtripy's defaults."""
    check_int_arg(in_channels, f"{what}: in_channels")
    check_int_arg(out_channels, f"{what}: out_channels")
    if not isinstance(kernel_dims, Sequence) or not 1 <= len(kernel_dims) <= 3:
        raise_error(
            f"{what}: kernel_dims must be a sequence of 1 to 3 ints (one per spatial dim), but got {kernel_dims!r}.",
            _stack.capture(),
        )
    n = len(kernel_dims)
    kernel = _int_tuple(kernel_dims, n, "kernel_dims", what, 1)
    if padding is None:
        pads: Tuple[Tuple[int, int], ...] = ((0, 0),) * n
    else:
        if (
            not isinstance(padding, Sequence)
            or len(padding) != n
            or not all(
                isinstance(p, Sequence) and len(p) == 2 and all(isinstance(v, int) and v >= 0 for v in p)
                for p in padding
            )
        ):
            raise_error(
                f"{what}: padding must be a sequence of {n} (before, after) pairs of ints >= 0, but got {padding!r}.",
                _stack.capture(),
                [f"For example: padding={((1, 1),) * n}"],
            )
        pads = tuple((int(p[0]), int(p[1])) for p in padding)
    strides = _int_tuple(stride if stride is not None else 1, n, "stride", what, 1)
    dilations = _int_tuple(dilation if dilation is not None else 1, n, "dilation", what, 1)
    g = check_int_arg(groups if groups is not None else 1, f"{what}: groups")
    if in_channels % g or out_channels % g:
        raise_error(
            f"{what}: groups ({g}) must divide both in_channels ({in_channels}) and out_channels ({out_channels}).",
            _stack.capture(),
        )
    return kernel, pads, strides, g, dilations


def convolution(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    stride: Sequence[int],
    padding: Sequence[Sequence[int]],
    groups: int,
    dilation: Sequence[int],
    what: str,
    in_channels: int,
    lhs_dilation: Optional[Sequence[int]] = None,
    flip_kernel: bool = False,
) -> Tensor:
    """Cross-correlation of ``input [N, C, *spatial]`` with ``weight [O, C / groups, *kernel]`` plus
    ``bias [O]``. `lhs_dilation` inserts zeros between input elements (for transposed convolutions)."""

    n = len(stride)
    if not isinstance(input, Tensor):
        raise_error(f"{what} expects a tripy.Tensor input, but got {type(input).__name__}.", _stack.capture())
    if input.dtype not in FLOAT_TYPES or input.dtype is not weight.dtype:
        raise_error(
            f"{what} has {weight.dtype} parameters, but its input has dtype {input.dtype}.",
            _stack.capture(),
            [f"Cast the input with tp.cast(x, tp.{weight.dtype})."],
            [input.stack_info],
        )
    if input.rank != n + 2:
        raise_error(
            f"{what} has {n} spatial dim(s), so it expects an input of rank {n + 2} ([N, C, *spatial]), but "
            f"got shape {list(input.trace_tensor.shape)}.",
            _stack.capture(),
            [],
            [input.stack_info],
        )
    c = input.trace_tensor.shape[1]
    if c >= 0 and c != in_channels:
        raise_error(
            f"{what} expects {in_channels} input channels (dim 1 of the input), but the input has shape "
            f"{list(input.trace_tensor.shape)}.",
            _stack.capture(),
            [],
            [input.stack_info],
        )
    # The kernel in the layout the backend asks for (tripy_backend.plan): in tp.compile a transpose is done once
    # (compiler/hoisting.py) instead of on every call inside the program.
    kernel_last = weight.trace_tensor.rank == n + 2 and plan.convolution_kernel_last()
    if kernel_last:
        weight = permute(weight, tuple(range(2, n + 2)) + (1, 0))
    out = Tensor._from_op(
        Convolution,
        [input, weight],
        stride=tuple(stride),
        padding=tuple((int(p[0]), int(p[1])) for p in padding),
        lhs_dilation=tuple(lhs_dilation or (1,) * n),
        rhs_dilation=tuple(dilation),
        groups=groups,
        flip_kernel=flip_kernel,
        kernel_last=kernel_last,
    )
    if bias is not None:
        out = out + reshape(bias, (1, -1) + (1,) * n)
    return out


def scaled_convolution(x: Tensor, scale: Tensor) -> Optional[Tensor]:
    """``x * scale`` per channel with the scale folded into the kernel, when tp.compile is tracing, `x` is the
    result of a convolution (without bias) and both its kernel and the ``[C]`` `scale` are baked in: then
    tp.compile computes the scaled kernel once (``compiler/hoisting.py``) and the program skips a pass over the
    activations (a BatchNorm after a convolution becomes a bias add). None otherwise: eager evaluation would
    scale the kernel on every call."""

    conv = x.trace_tensor.producer
    if traced_function() is None or not isinstance(conv, Convolution) or scale.dtype is not x.dtype:
        return None
    if not (_baked_in(conv.inputs[1]) and _baked_in(scale.trace_tensor)):
        return None
    n = len(conv.stride)
    per_output = (1,) * (n + 1) + (-1,) if conv.kernel_last else (-1,) + (1,) * (n + 1)
    kernel = Tensor._from_trace_tensor(conv.inputs[1]) * reshape(scale, per_output)
    return Tensor._from_op(
        Convolution,
        [Tensor._from_trace_tensor(conv.inputs[0]), kernel],
        stride=conv.stride,
        padding=conv.padding,
        lhs_dilation=conv.lhs_dilation,
        rhs_dilation=conv.rhs_dilation,
        groups=conv.groups,
        flip_kernel=conv.flip_kernel,
        kernel_last=conv.kernel_last,
    )


def _baked_in(t: TraceTensor) -> bool:
    """Whether `t` is computed from stored data only (no runtime input of the program being traced)."""
    stack, seen = [t], set()
    while stack:
        op = stack.pop().producer
        if id(op) in seen:
            continue
        seen.add(id(op))
        if op.is_input and not isinstance(op, Storage):  # type: ignore[union-attr]
            return False
        stack += op.inputs  # type: ignore[union-attr]
    return True
