import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class TransposeOp(BaseFlatIROp):
    """Result dim i is operand dim perm[i]."""

    mlir_op = stablehlo.TransposeOp

    perm: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(operands[0], i64_attr_array(self.perm)).result]
