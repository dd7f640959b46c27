import dataclasses

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import UnaryElementwiseOp


@dataclasses.dataclass(repr=False, eq=False)
class ExpOp(UnaryElementwiseOp):
    mlir_op = stablehlo.ExpOp
    guards_nan = True
