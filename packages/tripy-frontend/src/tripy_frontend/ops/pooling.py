"""Argument checks shared by tripy.maxpool and tripy.avgpool (each has its own file)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.pooling import Pooling
from tripy_frontend.tensor import Tensor


def _int_list(value: Any, what: str, name: str, length: int, minimum: int) -> Tuple[int, ...]:
    if (
        not isinstance(value, Sequence)
        or isinstance(value, (str, Tensor))
        or len(value) != length
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= minimum for v in value)
    ):
        raise_error(
            f"{what}: {name} must be a sequence of {length} ints >= {minimum} (one per spatial dim), "
            f"but got {value!r}.",
            _stack.capture(),
        )
    return tuple(int(v) for v in value)


def pool(
    input: Tensor,
    kind: str,
    kernel_dims: Sequence[int],
    stride: Optional[Sequence[int]],
    padding: Optional[Sequence[Sequence[int]]],
    count_include_pad: bool,
) -> Tensor:
    what = f"tripy.{kind}pool"
    if not isinstance(kernel_dims, Sequence) or len(kernel_dims) not in (2, 3):
        raise_error(
            f"{what}: kernel_dims must have 2 or 3 entries (2-D or 3-D pooling), but got {kernel_dims!r}.",
            _stack.capture(),
        )
    m = len(kernel_dims)
    kernel = _int_list(kernel_dims, what, "kernel_dims", m, 1)
    strides = _int_list(stride if stride is not None else [1] * m, what, "stride", m, 1)
    if padding is None:
        padding = [(0, 0)] * m
    if (
        not isinstance(padding, Sequence)
        or len(padding) != m
        or not all(isinstance(p, Sequence) and len(p) == 2 for p in padding)
    ):
        raise_error(
            f"{what}: padding must be a sequence of {m} (before, after) pairs, one per spatial dim, but got "
            f"{padding!r}.",
            _stack.capture(),
        )
    pads = tuple(_int_list(p, what, f"padding of spatial dim {i}", 2, 0) for i, p in enumerate(padding))
    for i, ((lo, hi), k) in enumerate(zip(pads, kernel)):
        if lo >= k or hi >= k:
            raise_error(
                f"{what}: padding {(lo, hi)} of spatial dim {i} must be smaller than the kernel size {k}.",
                _stack.capture(),
                ["Otherwise some windows would cover padding only."],
            )
    if input.rank != m + 2:
        raise_error(
            f"{what}: a {m}-D kernel needs an input of rank {m + 2} (N, C, {m} spatial dims), but the input "
            f"has shape {list(input.trace_tensor.shape)}.",
            _stack.capture(),
            [],
            [input.stack_info],
        )
    return Tensor._from_op(
        Pooling,
        [input],
        kind=kind,
        kernel_dims=kernel,
        stride=strides,
        padding=pads,
        count_include_pad=bool(count_include_pad),
    )
