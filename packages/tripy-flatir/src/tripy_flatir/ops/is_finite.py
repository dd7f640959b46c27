import dataclasses

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import UnaryElementwiseOp


@dataclasses.dataclass(repr=False, eq=False)
class IsFiniteOp(UnaryElementwiseOp):
    mlir_op = stablehlo.IsFiniteOp
    returns_bool = True
