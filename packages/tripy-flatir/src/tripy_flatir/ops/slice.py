import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class SliceOp(BaseFlatIROp):
    """Static slice: start, limit (exclusive) and stride per dim (strides positive)."""

    mlir_op = stablehlo.SliceOp

    start_indices: List[int]
    limit_indices: List[int]
    strides: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [
            self.mlir_op(
                operands[0],
                i64_attr_array(self.start_indices),
                i64_attr_array(self.limit_indices),
                i64_attr_array(self.strides),
            ).result
        ]
