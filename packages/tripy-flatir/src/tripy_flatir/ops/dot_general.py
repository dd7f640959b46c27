import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class DotOp(BaseFlatIROp):
    """stablehlo.dot_general with explicit batching and contracting dims."""

    mlir_op = stablehlo.DotGeneralOp

    lhs_batching_dims: List[int]
    rhs_batching_dims: List[int]
    lhs_contracting_dims: List[int]
    rhs_contracting_dims: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        dims = stablehlo.DotDimensionNumbers.get(
            lhs_batching_dimensions=self.lhs_batching_dims,
            rhs_batching_dimensions=self.rhs_batching_dims,
            lhs_contracting_dimensions=self.lhs_contracting_dims,
            rhs_contracting_dimensions=self.rhs_contracting_dims,
        )
        return [self.mlir_op(self.result_type(), operands[0], operands[1], dims).result]
