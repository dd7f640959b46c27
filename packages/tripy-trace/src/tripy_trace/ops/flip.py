"""Reverse the order of elements along some dims."""

from __future__ import annotations

import dataclasses
from typing import List, Tuple

from tripy_flatir.ops.reverse import ReverseOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Flip(BaseTraceOp):
    dims: Tuple[int, ...]  # non-negative, unique, non-empty
    display_name = "tripy.flip"

    def infer_shapes(self) -> None:
        self.outputs[0].shape = self.inputs[0].shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        ReverseOp.build(inputs, outputs, dims=list(self.dims))
