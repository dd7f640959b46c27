import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class GetDimensionSizeOp(BaseFlatIROp):
    """The run-time size of dimension `dim` of the operand, as a rank-0 int32 tensor."""

    mlir_op = stablehlo.GetDimensionSizeOp

    dim: int

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(operands[0], self.dim).result]
