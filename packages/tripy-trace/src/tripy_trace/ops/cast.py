"""Elementwise conversion to another dtype."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir.ops.convert import ConvertOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Cast(BaseTraceOp):
    dtype: Any
    display_name = "tripy.cast"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = self.inputs[0].shape

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return dims[0]

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return values[0]

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, out = inputs[0], outputs[0]
        if x.dtype is dtypes.bool and out.dtype.is_floating:
            # select(x, 1, 0), not convert: XLA rewrites convert(pred) * y to select(pred, y, 0), which gives 0
            # where NumPy's 0.0 * nan is nan (and 0.0 * inf too).
            one, zero = (
                lowering.broadcast_to(
                    lowering.constant(v, out.dtype, out.device), x.shape, lambda: lowering.shape_of(x), force=True
                )
                for v in (1, 0)
            )
            SelectOp.build([x, one, zero], [out])
        else:
            ConvertOp.build(inputs, outputs)
