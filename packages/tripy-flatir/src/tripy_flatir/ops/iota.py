import dataclasses
from typing import Any, List

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class IotaOp(BaseFlatIROp):
    """0, 1, 2, ... along `dim` of a static output shape."""

    mlir_op = stablehlo.IotaOp

    dim: int

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.dim)).result]
