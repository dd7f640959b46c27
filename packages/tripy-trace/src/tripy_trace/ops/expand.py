"""Broadcast to a larger shape (NumPy rules). inputs: (x) or (x, shape tensor)."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence, Tuple

from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.dynamic_broadcast import DynamicBroadcastOp
from tripy_trace import symbolic
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Expand(BaseTraceOp):
    shape: Tuple[int, ...]  # DYNAMIC where the size comes from the shape tensor
    display_name = "tripy.expand"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.inputs[0].dtype

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        if x.rank > len(self.shape):
            self.raise_error(
                f"Cannot expand a tensor of rank {x.rank} (shape {list(x.shape)}) to the smaller rank "
                f"{len(self.shape)} (shape {list(self.shape)})."
            )
        offset = len(self.shape) - x.rank
        for i, d in enumerate(x.shape):
            target = self.shape[offset + i]
            if d not in (1, DYNAMIC) and target not in (d, DYNAMIC):
                self.raise_error(
                    f"Cannot expand dim {i} of size {d} to size {target} "
                    f"(input shape {list(x.shape)}, target shape {list(self.shape)}).",
                    ["Only dims of size 1 can be expanded."],
                )
        self.outputs[0].shape = tuple(self.shape)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return symbolic.from_shape_vector(self.shape, values[1] if len(values) > 1 else None)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:

        dims = list(range(outputs[0].rank - inputs[0].rank, outputs[0].rank))
        if outputs[0].is_static:
            BroadcastOp.build(inputs[:1], outputs, broadcast_dim=dims)
        else:
            DynamicBroadcastOp.build(inputs[:2], outputs, broadcast_dim=dims)
