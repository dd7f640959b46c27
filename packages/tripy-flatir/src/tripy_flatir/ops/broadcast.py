import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class BroadcastOp(BaseFlatIROp):
    """stablehlo.broadcast_in_dim to a static shape: operand dim i maps to result dim broadcast_dim[i]."""

    mlir_op = stablehlo.BroadcastInDimOp

    broadcast_dim: List[int]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), operands[0], i64_attr_array(self.broadcast_dim)).result]
