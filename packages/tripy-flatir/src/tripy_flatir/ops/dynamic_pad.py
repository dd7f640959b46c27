import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class DynamicPadOp(BaseFlatIROp):
    """stablehlo.dynamic_pad: inputs are (operand, padding value (rank 0), padding low, padding high,
    interior padding), the last three 1-D integer tensors with one entry per dim."""

    mlir_op = stablehlo.DynamicPadOp
    shape_operands = (2, 3, 4)
    bounded = False  # XLA's dynamic padder gets it wrong with padded operands

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), *operands).result]
