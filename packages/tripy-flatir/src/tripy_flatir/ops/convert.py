import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class ConvertOp(BaseFlatIROp):
    """Elementwise conversion to the output's dtype."""

    mlir_op = stablehlo.ConvertOp
    elementwise = True

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), operands[0]).result]
