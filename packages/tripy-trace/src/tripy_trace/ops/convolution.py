"""Convolution of a channels-first input with a kernel (one stablehlo.convolution).

Covers regular, strided, padded, dilated and grouped convolutions over 1-3 spatial dims, and, with
`lhs_dilation` and a flipped kernel, transposed convolutions.
"""

from __future__ import annotations

import dataclasses
from typing import List, Tuple

from tripy_flatir.ops.convolution import ConvolutionOp, output_size
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Convolution(BaseTraceOp):
    """inputs: (input ``[N, C, *spatial]``, weight ``[O, C / groups, *kernel]``, or
    ``[*kernel, C / groups, O]`` with `kernel_last`: the layout XLA:CPU's convolutions read)."""

    stride: Tuple[int, ...]
    padding: Tuple[Tuple[int, int], ...]
    lhs_dilation: Tuple[int, ...]
    rhs_dilation: Tuple[int, ...]
    groups: int
    flip_kernel: bool = False
    kernel_last: bool = False
    display_name = "convolution"

    def infer_shapes(self) -> None:
        x, w = self.inputs
        n = len(self.stride)
        if x.rank != n + 2 or w.rank != n + 2:
            self.raise_error(
                f"A convolution over {n} spatial dim(s) needs an input and a weight of rank {n + 2}, but "
                f"got an input of shape {list(x.shape)} and a weight of shape {list(w.shape)}.",
                [
                    "The input is laid out as [N, C, *spatial], the weight as [out_channels, "
                    "in_channels / groups, *kernel_dims]."
                ],
            )
        c_in = x.shape[1]
        c_per_group, c_out = (w.shape[n], w.shape[n + 1]) if self.kernel_last else (w.shape[1], w.shape[0])
        kernel = w.shape[:n] if self.kernel_last else w.shape[2:]
        if DYNAMIC not in (c_in, c_per_group) and c_in != c_per_group * self.groups:
            self.raise_error(
                f"The input has {c_in} channels (shape {list(x.shape)}), but the weight (shape "
                f"{list(w.shape)}) with groups={self.groups} expects {c_per_group * self.groups}.",
                ["Dim 1 of the input must equal weight.shape[1] * groups."],
            )
        if c_out != DYNAMIC and c_out % self.groups:
            self.raise_error(f"The number of output channels ({c_out}) is not divisible by groups={self.groups}.")
        spatial = []
        for i in range(n):
            k = kernel[i]
            size = x.shape[2 + i] if k != DYNAMIC else DYNAMIC
            out = output_size(size, k, self.stride[i], self.padding[i], self.lhs_dilation[i], self.rhs_dilation[i])
            if size != DYNAMIC and out <= 0:
                self.raise_error(
                    f"The convolution output would be empty along spatial dim {i}: input size {x.shape[2 + i]}, "
                    f"kernel size {k}, padding {list(self.padding[i])}, stride {self.stride[i]}, dilation "
                    f"{self.rhs_dilation[i]}.",
                    ["The (padded) input must be at least as large as the (dilated) kernel."],
                )
            spatial.append(out)
        self.outputs[0].shape = (x.shape[0], c_out, *spatial)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        ConvolutionOp.build(
            inputs,
            outputs,
            window_strides=list(self.stride),
            padding=[tuple(p) for p in self.padding],
            lhs_dilation=list(self.lhs_dilation),
            rhs_dilation=list(self.rhs_dilation),
            feature_group_count=self.groups,
            window_reversal=[True] * len(self.stride) if self.flip_kernel else None,
            kernel_last=self.kernel_last,
        )
