import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class DynamicReshapeOp(BaseFlatIROp):
    """Reshape; inputs are (operand, output shape as a 1-D integer tensor)."""

    mlir_op = stablehlo.DynamicReshapeOp
    shape_operands = (1,)

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), operands[0], operands[1]).result]
