"""Elementwise conversion to another dtype."""

from __future__ import annotations

import dataclasses
from typing import Any, List

from tripy_flatir.ops.convert import ConvertOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Cast(BaseTraceOp):
    dtype: Any
    display_name = "tripy.cast"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = self.inputs[0].shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        ConvertOp.build(inputs, outputs)
