"""A tensor of a sharded program, required to be split across devices as its layout says (``tp.shard`` of a
tensor computed from a compiled function's inputs)."""

from __future__ import annotations

import dataclasses
from typing import Any, List

from tripy_flatir.ops.sharding_constraint import ShardingConstraintOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class ShardingConstraint(BaseTraceOp):
    layout: Any  # a tripy_flatir.sharding.Layout
    display_name = "tripy.shard"

    def infer_shapes(self) -> None:
        self.outputs[0].shape = self.inputs[0].shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        ShardingConstraintOp.build(inputs, outputs, sharding=self.layout.gspmd())
