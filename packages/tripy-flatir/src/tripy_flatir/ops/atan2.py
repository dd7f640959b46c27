import dataclasses

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BinaryElementwiseOp


@dataclasses.dataclass(repr=False, eq=False)
class Atan2Op(BinaryElementwiseOp):
    mlir_op = stablehlo.Atan2Op
