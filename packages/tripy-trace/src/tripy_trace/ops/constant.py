"""A small literal (a Python scalar or a short list) embedded in the program."""

from __future__ import annotations

import dataclasses
from typing import Any, List

import numpy as np

from tripy_flatir.ops.constant import ConstantOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Constant(BaseTraceOp):
    value: Any  # a NumPy array (small)
    dtype: Any
    device: Any

    def infer_devices(self) -> None:
        self.outputs[0].device = self.device

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = tuple(np.shape(self.value))

    def cache_key(self) -> tuple:
        v = np.asarray(self.value)
        return (Constant, self.dtype.name, v.shape, v.tobytes())

    def __str__(self) -> str:
        return f"{self.outputs[0].name} = constant(value={np.asarray(self.value).tolist()}, dtype={self.dtype})"

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        ConstantOp.build([], outputs, data=np.asarray(self.value, dtype=self.dtype.numpy_dtype))
