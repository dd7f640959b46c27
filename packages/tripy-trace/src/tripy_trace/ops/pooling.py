"""Max and average pooling over the trailing (spatial) dims of an (N, C, *spatial) tensor.

For each spatial dim: out = floor((size + pad_before + pad_after - kernel) / stride) + 1. Max pooling never
picks a padded position (padding is -inf); average pooling counts padded positions as zeros and divides
by the kernel volume when `count_include_pad`, otherwise divides by the number of real elements in each
window. Both lower to stablehlo.reduce_window.
"""

from __future__ import annotations

import dataclasses
import math
from typing import List, Tuple

import numpy as np

from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.divide import DivideOp
from tripy_flatir.ops.dynamic_broadcast import DynamicBroadcastOp
from tripy_flatir.ops.reduce_window import ReduceWindowOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Pooling(BaseTraceOp):
    kind: str  # "max" | "avg"
    kernel_dims: Tuple[int, ...]
    stride: Tuple[int, ...]
    padding: Tuple[Tuple[int, int], ...]
    count_include_pad: bool = True

    def name(self) -> str:
        return f"tripy.{self.kind}pool"

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        m = len(self.kernel_dims)
        if x.rank != m + 2:
            self.raise_error(
                f"{self.name()}: a {m}-D kernel needs an input of rank {m + 2} (N, C, {m} spatial dims), "
                f"but the input has shape {list(x.shape)}."
            )
        shape = list(x.shape[:2])
        for i, (n, k, s, (lo, hi)) in enumerate(zip(x.shape[2:], self.kernel_dims, self.stride, self.padding)):
            if n == DYNAMIC:
                shape.append(DYNAMIC)
                continue
            if n + lo + hi < k:
                self.raise_error(
                    f"{self.name()}: the kernel size {k} of spatial dim {i} is larger than that dim "
                    f"with its padding ({n} + {lo} + {hi}); input shape {list(x.shape)}."
                )
            shape.append((n + lo + hi - k) // s + 1)
        self.outputs[0].shape = tuple(shape)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, out = inputs[0], outputs[0]
        window = [1, 1] + list(self.kernel_dims)
        strides = [1, 1] + list(self.stride)
        padding = [(0, 0), (0, 0)] + [tuple(p) for p in self.padding]
        if self.kind == "max":
            if x.dtype.is_floating:
                init = -np.inf
            else:
                init = np.iinfo(x.dtype.numpy_dtype).min
            ReduceWindowOp.build(
                [x, lowering.constant(init, x.dtype, x.device)],
                [out],
                reduce_mode="max",
                window_dims=window,
                window_strides=strides,
                padding=padding,
            )
            return

        zero = lowering.constant(0, x.dtype, x.device)
        sums = FlatIRTensor.build(out.shape, x.dtype, x.device, reason="to sum each pooling window")
        ReduceWindowOp.build(
            [x, zero], [sums], reduce_mode="sum", window_dims=window, window_strides=strides, padding=padding
        )
        if self.count_include_pad:
            volume = lowering.constant(float(math.prod(self.kernel_dims)), x.dtype, x.device)
            divisor = lowering.broadcast_to(
                volume,
                out.shape,
                lambda: lowering.shape_of(sums),
                reason="to divide each window sum by the kernel volume",
            )
        else:
            divisor = self._window_counts(x, sums)
        DivideOp.build([sums, divisor], [out])

    def _window_counts(self, x: FlatIRTensor, sums: FlatIRTensor) -> FlatIRTensor:
        """The number of real (not padded) elements in each window, broadcast to the output's shape."""
        spatial = x.shape[2:]
        one = lowering.constant(1, x.dtype, x.device)
        why = "to count the elements of each pooling window that are not padding"
        ones = lowering.broadcast_to(
            one,
            spatial,
            lambda: lowering.concat_dims([lowering.dim_size(x, d) for d in range(2, x.rank)], x.device),
            reason=why,
        )
        counts = FlatIRTensor.build(sums.shape[2:], x.dtype, x.device, reason=why)
        ReduceWindowOp.build(
            [ones, lowering.constant(0, x.dtype, x.device)],
            [counts],
            reduce_mode="sum",
            window_dims=list(self.kernel_dims),
            window_strides=list(self.stride),
            padding=[tuple(p) for p in self.padding],
        )
        full = FlatIRTensor.build(sums.shape, x.dtype, x.device, reason=why)
        dims = list(range(2, sums.rank))
        if sums.is_static:
            BroadcastOp.build([counts], [full], broadcast_dim=dims)
        else:
            DynamicBroadcastOp.build([counts, lowering.shape_of(sums)], [full], broadcast_dim=dims)
        return full
