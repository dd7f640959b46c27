import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp
from tripy_flatir.ops.gather import take_dimension_numbers


@dataclasses.dataclass(repr=False, eq=False)
class DynamicGatherOp(BaseFlatIROp):
    """``numpy.take`` along `dim` as a stablehlo.dynamic_gather: inputs are (operand, indices of shape
    index_shape + [1], slice sizes as a 1-D integer tensor: the operand's shape with 1 at `dim`)."""

    mlir_op = stablehlo.DynamicGatherOp
    shape_operands = (2,)

    dim: int

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        operand, indices = self.inputs[0], self.inputs[1]
        numbers = take_dimension_numbers(operand.rank, indices.rank - 1, self.dim)
        return [self.mlir_op(operands[0], operands[1], operands[2], numbers).result]
