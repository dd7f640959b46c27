"""The k largest values along one dim, largest first, and their int32 indices."""

from __future__ import annotations

import dataclasses
from typing import List

from tripy_flatir import dtypes
from tripy_flatir.ops.dynamic_iota import DynamicIotaOp
from tripy_flatir.ops.iota import IotaOp
from tripy_flatir.ops.real_dynamic_slice import DynamicSliceOp
from tripy_flatir.ops.slice import SliceOp
from tripy_flatir.ops.sort import SortOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class TopK(BaseTraceOp):
    k: int
    dim: int  # normalized, non-negative
    display_name = "tripy.topk"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.inputs[0].dtype
        self.outputs[1].dtype = dtypes.int32

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        size = x.shape[self.dim]
        if size != DYNAMIC and self.k > size:
            self.raise_error(
                f"tripy.topk: k ({self.k}) is larger than the size of dim {self.dim} ({size}).",
                [f"Use a k in [0, {size}]."],
            )
        shape = tuple(self.k if d == self.dim else s for d, s in enumerate(x.shape))
        self.outputs[0].shape = shape
        self.outputs[1].shape = shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        # Sort (values, indices) along dim, largest first (stable, so ties keep the lower index first),
        # then keep the first k.
        x = inputs[0]
        index = FlatIRTensor.build(x.shape, dtypes.int32, x.device, reason="the indices that tripy.topk sorts along")
        if x.is_static:
            IotaOp.build([], [index], dim=self.dim)
        else:
            DynamicIotaOp.build([lowering.shape_of(x)], [index], dim=self.dim)
        sorted_values = FlatIRTensor.build(x.shape, x.dtype, x.device)
        sorted_index = FlatIRTensor.build(x.shape, dtypes.int32, x.device)
        SortOp.build([x, index], [sorted_values, sorted_index], dim=self.dim, descending=True)
        for src, out in zip((sorted_values, sorted_index), outputs):
            if x.is_static:
                SliceOp.build(
                    [src], [out], start_indices=[0] * x.rank, limit_indices=list(out.shape), strides=[1] * x.rank
                )
            else:
                start = lowering.constant([0] * x.rank, dtypes.int32, x.device, (x.rank,))
                limit = lowering.concat_dims(
                    [
                        lowering.constant([self.k], dtypes.int32, x.device, (1,))
                        if d == self.dim
                        else lowering.dim_size(x, d)
                        for d in range(x.rank)
                    ],
                    x.device,
                )
                stride = lowering.constant([1] * x.rank, dtypes.int32, x.device, (x.rank,))
                DynamicSliceOp.build([src, start, limit, stride], [out])
