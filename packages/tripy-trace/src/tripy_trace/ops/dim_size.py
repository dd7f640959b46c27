"""The size of one dimension as a rank-0 int32 tensor (shapes are values)."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir.tensor import FlatIRTensor
from tripy_flatir.ops.constant import ConstantOp
from tripy_flatir.ops.get_dimension_size import GetDimensionSizeOp
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class DimSize(BaseTraceOp):
    dim: int

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = dtypes.int32

    def infer_shapes(self) -> None:
        self.outputs[0].shape = ()

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return (dims[0][self.dim],)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:

        size = inputs[0].shape[self.dim]
        if size >= 0:
            import numpy as np

            ConstantOp.build([], outputs, data=np.int32(size))
        else:
            GetDimensionSizeOp.build(inputs, outputs, dim=self.dim)
