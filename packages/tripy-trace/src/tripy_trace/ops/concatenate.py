"""Join tensors along an existing dim."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence

from tripy_flatir.ops.concatenate import ConcatenateOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import symbolic
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Concatenate(BaseTraceOp):
    dim: int  # non-negative
    display_name = "tripy.concatenate"

    def infer_shapes(self) -> None:
        first = self.inputs[0]
        for i, t in enumerate(self.inputs):
            if t.rank != first.rank:
                self.raise_error(
                    f"concatenate: all inputs must have the same rank, but input 0 has shape "
                    f"{list(first.shape)} and input {i} has shape {list(t.shape)}."
                )
            for d in range(t.rank):
                if d != self.dim and DYNAMIC not in (t.shape[d], first.shape[d]) and t.shape[d] != first.shape[d]:
                    self.raise_error(
                        f"concatenate: inputs must match in every dim except dim {self.dim}, but input 0 "
                        f"has shape {list(first.shape)} and input {i} has shape {list(t.shape)}."
                    )
        shape = list(first.shape)
        sizes = [t.shape[self.dim] for t in self.inputs]
        shape[self.dim] = DYNAMIC if DYNAMIC in sizes else sum(sizes)
        for d in range(len(shape)):
            if d != self.dim and shape[d] == DYNAMIC:
                shape[d] = next((t.shape[d] for t in self.inputs if t.shape[d] != DYNAMIC), DYNAMIC)
        self.outputs[0].shape = tuple(shape)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        out = list(dims[0])  # (the inputs agree on every other dim)
        total: Any = 0
        for d in dims:
            total = symbolic.add(total, d[self.dim])
        out[self.dim] = total
        return out

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        if any(v is None for v in values):
            return None
        return [e for v in values for e in v]  # type: ignore[union-attr]

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        ConcatenateOp.build(inputs, outputs, dim=self.dim)
