"""Reorder dimensions: output dim i is input dim perm[i]."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence, Tuple

from tripy_flatir.ops.transpose import TransposeOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Permute(BaseTraceOp):
    perm: Tuple[int, ...]
    display_name = "tripy.permute"

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        if sorted(self.perm) != list(range(x.rank)):
            self.raise_error(
                f"permute: {list(self.perm)} is not a permutation of the {x.rank} dims of a tensor "
                f"of shape {list(x.shape)}.",
                [f"Give each of the dims 0..{x.rank - 1} exactly once."],
            )
        self.outputs[0].shape = tuple(x.shape[p] for p in self.perm)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return [dims[0][p] for p in self.perm]

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        TransposeOp.build(inputs, outputs, perm=list(self.perm))
