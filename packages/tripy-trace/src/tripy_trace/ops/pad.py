"""Constant padding: `low[d]` elements before and `high[d]` after each dim d, filled with a value.
inputs: (x, value: rank 0) or (x, value, low: 1-D int32, high: 1-D int32) when some amounts are only
known at run time (None in `low`/`high`). Negative amounts remove elements."""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Tuple

from tripy_flatir.ops.dynamic_pad import DynamicPadOp
from tripy_flatir.ops.pad import PadOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_flatir import dtypes
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Pad(BaseTraceOp):
    low: Tuple[Optional[int], ...]  # None: only known at run time
    high: Tuple[Optional[int], ...]
    display_name = "tripy.pad"

    def infer_dtypes(self) -> None:
        x, value = self.inputs[:2]
        if value.dtype is not x.dtype:
            self.raise_error(
                f"tripy.pad: the padding value has dtype {value.dtype}, but the input has dtype {x.dtype}."
            )
        self.outputs[0].dtype = x.dtype

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        if len(self.low) != x.rank or len(self.high) != x.rank:
            self.raise_error(
                f"tripy.pad: `pad` must have one (before, after) pair per dim of the input, which has "
                f"rank {x.rank} (shape {list(x.shape)}), but it has {len(self.low)}."
            )
        shape = []
        for d, (n, lo, hi) in enumerate(zip(x.shape, self.low, self.high)):
            if n == DYNAMIC or lo is None or hi is None:
                shape.append(DYNAMIC)
                continue
            if n + lo + hi < 0:
                self.raise_error(
                    f"tripy.pad: padding ({lo}, {hi}) of dim {d} (size {n}) would leave a negative size {n + lo + hi}.",
                    ["Negative padding removes elements; it cannot remove more than the dim has."],
                )
            shape.append(n + lo + hi)
        self.outputs[0].shape = tuple(shape)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, value = inputs[:2]
        if len(inputs) == 2:
            PadOp.build([x, value], outputs, padding_low=list(self.low), padding_high=list(self.high))
            return

        interior = lowering.constant([0] * x.rank, dtypes.int32, x.device, (x.rank,))
        DynamicPadOp.build([x, value, inputs[2], inputs[3], interior], outputs)
