import dataclasses
from typing import Any, List

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class DynamicIotaOp(BaseFlatIROp):
    """0, 1, 2, ... along `dim`; input is the output shape as a 1-D integer tensor."""

    mlir_op = stablehlo.DynamicIotaOp
    shape_operands = (0,)

    dim: int

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        dim = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.dim)
        return [self.mlir_op(self.result_type(), operands[0], dim).result]
