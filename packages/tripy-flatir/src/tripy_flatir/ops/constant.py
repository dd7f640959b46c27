import dataclasses
from typing import Any, List

import numpy as np
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import dense_attr
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class ConstantOp(BaseFlatIROp):
    """A literal. Only for small values (scalars, shapes): tensor data enters programs as arguments."""

    mlir_op = stablehlo.ConstantOp

    data: Any

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        out = self.outputs[0]
        return [self.mlir_op(dense_attr(np.asarray(self.data), out.dtype, out.shape)).result]
