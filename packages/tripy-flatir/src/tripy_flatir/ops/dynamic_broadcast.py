import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class DynamicBroadcastOp(BaseFlatIROp):
    """stablehlo.dynamic_broadcast_in_dim: inputs are (operand, output shape as a 1-D integer tensor)."""

    mlir_op = stablehlo.DynamicBroadcastInDimOp
    shape_operands = (1,)

    broadcast_dim: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), operands[0], operands[1], i64_attr_array(self.broadcast_dim)).result]
