"""A runtime input of a compiled program (tp.InputInfo): shape with -1 for dynamic dims, no data."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, List

from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Placeholder(BaseTraceOp):
    shape: tuple
    dtype: Any
    device: Any

    is_input: ClassVar[bool] = True
    is_eager_input: ClassVar[bool] = True

    def infer_devices(self) -> None:
        self.outputs[0].device = self.device

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = tuple(self.shape)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        raise AssertionError("a placeholder is a program input")
