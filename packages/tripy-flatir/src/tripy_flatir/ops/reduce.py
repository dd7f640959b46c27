import dataclasses
from typing import Any, List

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp

_BODY = {
    "sum": stablehlo.AddOp,
    "prod": stablehlo.MulOp,
    "max": stablehlo.MaxOp,
    "min": stablehlo.MinOp,
    "and": stablehlo.AndOp,
    "or": stablehlo.OrOp,
}


@dataclasses.dataclass(repr=False, eq=False)
class ReduceOp(BaseFlatIROp):
    """stablehlo.reduce over `reduce_dims`; inputs are (operand, init value as a rank-0 tensor)."""

    mlir_op = stablehlo.ReduceOp

    reduce_mode: str
    reduce_dims: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        op = self.mlir_op([self.result_type()], [operands[0]], [operands[1]], i64_attr_array(self.reduce_dims))
        scalar = ir.RankedTensorType.get([], self.inputs[0].dtype.mlir_type())
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            stablehlo.ReturnOp([_BODY[self.reduce_mode](*block.arguments).result])
        return [op.result]
