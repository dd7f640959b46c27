"""Reductions (sum, prod, max, min, all, any) over some dims, with or without keeping them."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir.ops.reduce import ReduceOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


_WIDENED = (dtypes.float16, dtypes.bfloat16)


@dataclasses.dataclass(repr=False, eq=False)
class Reduce(BaseTraceOp):
    __slots__ = ("kind", "dims", "keepdim")
    kind: str  # sum | prod | max | min | and | or
    dims: Tuple[int, ...]  # normalized, non-negative, sorted, unique
    keepdim: bool

    def name(self) -> str:
        return {"and": "tripy.all", "or": "tripy.any"}.get(self.kind, f"tripy.{self.kind}")

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        empty = next((d for d in self.dims if x.shape[d] == 0), None)
        if empty is not None and self.kind in ("max", "min"):
            self.raise_error(
                f"{self.name()}: cannot reduce over dim {empty}, which has size 0.",
                ["An empty dimension has no largest or smallest element (NumPy raises too)."],
            )
        if self.keepdim:
            shape = tuple(1 if d in self.dims else s for d, s in enumerate(x.shape))
        else:
            shape = tuple(s for d, s in enumerate(x.shape) if d not in self.dims)
        self.outputs[0].shape = shape

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        kept = [1 if d in self.dims else s for d, s in enumerate(dims[0])]
        return kept if self.keepdim else [s for d, s in enumerate(dims[0]) if d not in self.dims]

    def init_value(self, dtype) -> object:  # type: ignore[no-untyped-def]
        if self.kind == "sum":
            return 0
        if self.kind == "prod":
            return 1
        if self.kind in ("and", "or"):
            return self.kind == "and"
        if dtype.is_floating:
            return -np.inf if self.kind == "max" else np.inf
        info = np.iinfo(dtype.numpy_dtype)
        return info.min if self.kind == "max" else info.max

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, out = inputs[0], outputs[0]
        if x.dtype in _WIDENED and self.kind in ("sum", "prod"):
            # Accumulate in float32 and round once, as NumPy does: in float16 an intermediate product or sum
            # overflows (300 * 300 * 0 * 300 would be inf * 0 = nan).
            wide = FlatIRTensor.build(out.shape, dtypes.float32, out.device)
            self.to_flat_ir([lowering.convert(x, dtypes.float32)], [wide])
            lowering.convert(wide, out.dtype, out=out)
            return
        init = lowering.constant(self.init_value(x.dtype), x.dtype, x.device)
        reduced_shape = tuple(s for d, s in enumerate(x.shape) if d not in self.dims)
        if not self.keepdim:
            ReduceOp.build([x, init], [out], reduce_mode=self.kind, reduce_dims=list(self.dims))
            return
        reduced = FlatIRTensor.build(reduced_shape, x.dtype, x.device)
        ReduceOp.build([x, init], [reduced], reduce_mode=self.kind, reduce_dims=list(self.dims))
        shape_tensor = None
        if not out.is_static:
            one = lowering.constant([1], dtypes.int32, x.device, (1,))
            shape_tensor = lowering.concat_dims(
                [one if d in self.dims else lowering.dim_size(x, d) for d in range(x.rank)], x.device
            )
        lowering.reshape(reduced, out.shape, shape_tensor, out=out)
