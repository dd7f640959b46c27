import dataclasses
from typing import Any, List

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class ShardingConstraintOp(BaseFlatIROp):
    """The operand, split across devices as `sharding` (GSPMD text, ``tripy_flatir.sharding.Layout.gspmd``) says:
    XLA's ``Sharding`` custom call, which the SPMD partitioner reads as a constraint and removes."""

    mlir_op = stablehlo.CustomCallOp
    bounded = False  # a custom_call; sharded programs are static

    sharding: str

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        op = self.mlir_op([operands[0].type], [operands[0]], call_target_name="Sharding")
        op.attributes["mhlo.sharding"] = ir.StringAttr.get(self.sharding)
        return [op.result]
