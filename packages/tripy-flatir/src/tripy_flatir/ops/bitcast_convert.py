import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class BitcastConvertOp(BaseFlatIROp):
    """Elementwise reinterpretation of the bits as the output's dtype (of the same width)."""

    mlir_op = stablehlo.BitcastConvertOp
    elementwise = True

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), operands[0]).result]
