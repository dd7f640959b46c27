"""A tensor of one value: fill(value, shape) with value a rank-0 tensor and shape static or a 1-D tensor."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence, Tuple

from tripy_flatir.tensor import FlatIRTensor
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.dynamic_broadcast import DynamicBroadcastOp
from tripy_trace import symbolic
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Fill(BaseTraceOp):
    """inputs: (value: rank 0) or (value, shape tensor: 1-D int32). `shape` holds the static dims (-1 = dynamic)."""

    shape: Tuple[int, ...]

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.inputs[0].dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = tuple(self.shape)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return symbolic.from_shape_vector(self.shape, values[1] if len(values) > 1 else None)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:

        out = outputs[0]
        if out.is_static:
            BroadcastOp.build([inputs[0]], [out], broadcast_dim=[])
        else:
            DynamicBroadcastOp.build([inputs[0], inputs[1]], [out], broadcast_dim=[])
