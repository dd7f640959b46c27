"""argmax / argmin over one dim: the index (int32) of the first largest / smallest value."""

from __future__ import annotations

import dataclasses
from typing import List

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir.ops.arg_reduce import ArgReduceOp
from tripy_flatir.ops.dynamic_iota import DynamicIotaOp
from tripy_flatir.ops.iota import IotaOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class ArgReduce(BaseTraceOp):
    mode: str  # max | min
    dim: int  # normalized, non-negative
    keepdim: bool

    def name(self) -> str:
        return f"tripy.arg{self.mode}"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = dtypes.int32

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        if x.shape[self.dim] == 0:
            self.raise_error(
                f"{self.name()}: cannot reduce over dim {self.dim}, which has size 0.",
                ["An empty dimension has no largest or smallest element."],
            )
        if self.keepdim:
            self.outputs[0].shape = tuple(1 if d == self.dim else s for d, s in enumerate(x.shape))
        else:
            self.outputs[0].shape = tuple(s for d, s in enumerate(x.shape) if d != self.dim)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, out = inputs[0], outputs[0]
        index = FlatIRTensor.build(
            x.shape, dtypes.int32, x.device, reason=f"the indices along dim {self.dim} that {self.name()} picks from"
        )
        if x.is_static:
            IotaOp.build([], [index], dim=self.dim)
        else:
            DynamicIotaOp.build([lowering.shape_of(x)], [index], dim=self.dim)
        if x.dtype.is_floating:
            init = -np.inf if self.mode == "max" else np.inf
        else:
            info = np.iinfo(x.dtype.numpy_dtype)
            init = info.min if self.mode == "max" else info.max
        reduced_shape = tuple(s for d, s in enumerate(x.shape) if d != self.dim)
        values = FlatIRTensor.build(reduced_shape, x.dtype, x.device)
        indices = out if not self.keepdim else FlatIRTensor.build(reduced_shape, dtypes.int32, x.device)
        ArgReduceOp.build(
            [
                x,
                index,
                lowering.constant(init, x.dtype, x.device),
                lowering.constant(np.iinfo(np.int32).max, dtypes.int32, x.device),
            ],
            [values, indices],
            mode=self.mode,
            reduce_dim=self.dim,
        )
        if self.keepdim:
            shape_tensor = None
            if not out.is_static:
                one = lowering.constant([1], dtypes.int32, x.device, (1,))
                shape_tensor = lowering.concat_dims(
                    [one if d == self.dim else lowering.dim_size(x, d) for d in range(x.rank)], x.device
                )
            lowering.reshape(indices, out.shape, shape_tensor, out=out)
