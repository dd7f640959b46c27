import dataclasses

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import UnaryElementwiseOp


@dataclasses.dataclass(repr=False, eq=False)
class Expm1Op(UnaryElementwiseOp):
    mlir_op = stablehlo.Expm1Op
    guards_nan = True
