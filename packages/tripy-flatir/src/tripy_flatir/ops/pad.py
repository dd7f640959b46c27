import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class PadOp(BaseFlatIROp):
    """stablehlo.pad with static edge padding; inputs are (operand, padding value as a rank-0 tensor).
    Negative padding removes elements."""

    mlir_op = stablehlo.PadOp

    padding_low: List[int]
    padding_high: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        interior = [0] * len(self.padding_low)
        return [
            self.mlir_op(
                operands[0],
                operands[1],
                i64_attr_array(self.padding_low),
                i64_attr_array(self.padding_high),
                i64_attr_array(interior),
            ).result
        ]
