"""Data that already exists in a device buffer. It enters programs as an argument, never as a literal."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, List

from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Storage(BaseTraceOp):
    data: Any  # a backend device buffer
    shape: tuple
    dtype: Any
    device: Any

    is_input: ClassVar[bool] = True

    def infer_devices(self) -> None:
        self.outputs[0].device = self.device

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = tuple(self.shape)

    def cache_key(self) -> tuple:
        return (Storage,)  # shape/dtype/device of inputs are added by the Trace; the data never is

    def __str__(self) -> str:
        return f"{self.outputs[0].name} = storage(shape={list(self.shape)}, dtype={self.dtype}, device={self.device})"

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        raise AssertionError("storage is a program input")
