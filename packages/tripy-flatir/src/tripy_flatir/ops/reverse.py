import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class ReverseOp(BaseFlatIROp):
    """Reverses the order of elements along each of `dims`."""

    mlir_op = stablehlo.ReverseOp

    dims: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(operands[0], i64_attr_array(self.dims)).result]
