import dataclasses

from jax.extend.mlir.dialects import chlo

from tripy_flatir.ops.base import UnaryElementwiseOp


@dataclasses.dataclass(repr=False, eq=False)
class ErfOp(UnaryElementwiseOp):
    """The Gauss error function (chlo.erf: StableHLO has no erf; CHLO's is decomposed by the compiler)."""

    mlir_op = chlo.ErfOp
