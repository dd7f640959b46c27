"""0, 1, 2, ... along `dim`. inputs: () or (shape tensor)."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence, Tuple

from tripy_flatir.tensor import FlatIRTensor
from tripy_flatir.ops.dynamic_iota import DynamicIotaOp
from tripy_flatir.ops.iota import IotaOp
from tripy_trace import symbolic
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Iota(BaseTraceOp):
    dim: int
    shape: Tuple[int, ...]
    dtype: Any
    display_name = "tripy.iota"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        if not -len(self.shape) <= self.dim < max(len(self.shape), 1):
            self.raise_error(f"iota: dim {self.dim} is out of range for shape {list(self.shape)}.")
        self.outputs[0].shape = tuple(self.shape)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return symbolic.from_shape_vector(self.shape, values[0] if len(values) > 0 else None)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:

        dim = self.dim % max(len(self.shape), 1)
        if outputs[0].is_static:
            IotaOp.build([], outputs, dim=dim)
        else:
            DynamicIotaOp.build(inputs[:1], outputs, dim=dim)
