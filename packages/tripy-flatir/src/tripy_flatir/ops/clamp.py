import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class ClampOp(BaseFlatIROp):
    """inputs (min, operand, max): operand clamped elementwise into [min, max]."""

    mlir_op = stablehlo.ClampOp
    elementwise = True

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(*operands).result]
