import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class DynamicSliceOp(BaseFlatIROp):
    """Slice whose bounds are run-time values: inputs (operand, start, limit, stride), each a 1-D int tensor."""

    mlir_op = stablehlo.RealDynamicSliceOp
    shape_operands = (1, 2, 3)

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [self.mlir_op(self.result_type(), *operands).result]
