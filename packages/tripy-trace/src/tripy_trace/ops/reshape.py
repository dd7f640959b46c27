"""Reshape to `shape` (no -1 here: the frontend has resolved it). inputs: (x) or (x, shape tensor)."""

from __future__ import annotations

import dataclasses
from typing import List, Tuple

from tripy_flatir.tensor import FlatIRTensor
from tripy_flatir.ops.dynamic_reshape import DynamicReshapeOp
from tripy_flatir.ops.reshape import ReshapeOp
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Reshape(BaseTraceOp):
    shape: Tuple[int, ...]  # static dims; DYNAMIC (-1) where the size comes from the shape tensor
    display_name = "tripy.reshape"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.inputs[0].dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = tuple(self.shape)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:

        if outputs[0].is_static:
            ReshapeOp.build(inputs[:1], outputs)
        else:
            DynamicReshapeOp.build(inputs[:2], outputs)
