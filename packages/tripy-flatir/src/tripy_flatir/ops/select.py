import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class SelectOp(BaseFlatIROp):
    """inputs (pred, on_true, on_false): pred ? on_true : on_false, elementwise."""

    mlir_op = stablehlo.SelectOp
    elementwise = True

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(*operands).result]
