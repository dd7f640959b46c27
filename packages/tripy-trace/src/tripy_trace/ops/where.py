"""Elementwise selection: where(condition, input, other), with NumPy broadcasting of all three."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace import lowering
from tripy_trace import symbolic
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Where(BaseTraceOp):
    display_name = "tripy.where"

    def infer_dtypes(self) -> None:
        cond, a, b = self.inputs
        if cond.dtype is not dtypes.bool:
            self.raise_error(
                f"tripy.where: condition must have dtype bool, but got {cond.dtype}.",
                ["Compare to make a bool tensor, e.g. tp.where(x > 0, ...), or use tripy.cast()."],
            )
        if a.dtype is not b.dtype:
            self.raise_error(
                f"tripy.where: input and other must have the same data type, but got: {a.dtype} and {b.dtype}.",
                ["Use tripy.cast() to convert one of them."],
            )
        self.outputs[0].dtype = a.dtype

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return symbolic.broadcast(dims)

    def infer_shapes(self) -> None:
        cond, a, b = self.inputs
        shape = lowering.broadcast_shape(a.shape, b.shape)
        shape = None if shape is None else lowering.broadcast_shape(cond.shape, shape)
        if shape is None:
            self.raise_error(
                f"tripy.where: shapes of condition, input and other are not compatible for broadcasting: "
                f"{list(cond.shape)}, {list(a.shape)} and {list(b.shape)}.",
                ["Each dimension (aligned from the right) must be equal, or 1 in all but one of them."],
            )
        self.outputs[0].shape = shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        operands = lowering.broadcast_operands(inputs, outputs[0].shape, "tripy.where")
        SelectOp.build(operands, outputs)
