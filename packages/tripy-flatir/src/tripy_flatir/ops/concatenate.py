import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class ConcatenateOp(BaseFlatIROp):
    """Joins the operands along `dim`."""

    mlir_op = stablehlo.ConcatenateOp

    dim: int

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(operands, self.dim).result]
