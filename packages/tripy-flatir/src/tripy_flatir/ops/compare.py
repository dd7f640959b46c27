import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp

DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


@dataclasses.dataclass(repr=False, eq=False)
class CompareOp(BaseFlatIROp):
    """Elementwise comparison producing bool; `direction` is one of EQ NE LT LE GT GE."""

    mlir_op = stablehlo.CompareOp
    elementwise = True

    direction: str

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        dt = self.inputs[0].dtype
        kind = "FLOAT" if dt.is_floating else ("UNSIGNED" if dt.name == "bool" else "SIGNED")
        return [
            self.mlir_op(
                operands[0],
                operands[1],
                stablehlo.ComparisonDirectionAttr.get(self.direction),
                compare_type=stablehlo.ComparisonTypeAttr.get(kind),
            ).result
        ]
