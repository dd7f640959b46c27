"""Reshape to `shape` (no -1 here: the frontend has resolved it). inputs: (x) or (x, shape tensor)."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence, Tuple

from tripy_flatir.tensor import FlatIRTensor
from tripy_flatir.ops.dynamic_reshape import DynamicReshapeOp
from tripy_flatir.ops.reshape import ReshapeOp
from tripy_trace import symbolic
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Reshape(BaseTraceOp):
    shape: Tuple[int, ...]  # static dims; DYNAMIC (-1) where the size comes from the shape tensor
    display_name = "tripy.reshape"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.inputs[0].dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = tuple(self.shape)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return symbolic.from_shape_vector(self.shape, values[1] if len(values) > 1 else None)

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return values[0]

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:

        if outputs[0].is_static:
            ReshapeOp.build(inputs[:1], outputs)
        else:
            DynamicReshapeOp.build(inputs[:2], outputs)
