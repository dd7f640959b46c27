"""``numpy.take(x, index, axis=dim)``: output shape x.shape[:dim] + index.shape + x.shape[dim + 1:].
inputs: (x, index) with an integer index tensor. Negative indices count from the end; indices still out of
range are clamped into the dim (stablehlo.gather's behaviour)."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir.ops.add import AddOp
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.dynamic_gather import DynamicGatherOp
from tripy_flatir.ops.gather import GatherOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Gather(BaseTraceOp):
    dim: int  # non-negative
    display_name = "tripy.gather"

    def infer_dtypes(self) -> None:
        x, index = self.inputs
        if index.dtype not in (dtypes.int32, dtypes.int64):
            self.raise_error(
                f"tripy.gather: the index must be an int32 or int64 tensor, but it has dtype {index.dtype}.",
                ["Use tripy.cast(index, tp.int32)."],
            )
        self.outputs[0].dtype = x.dtype

    def infer_shapes(self) -> None:
        x, index = self.inputs
        if not 0 <= self.dim < x.rank:
            self.raise_error(f"tripy.gather: dim {self.dim} is out of range for a tensor of rank {x.rank}.")
        self.outputs[0].shape = x.shape[: self.dim] + index.shape + x.shape[self.dim + 1 :]

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return dims[0][: self.dim] + dims[1] + dims[0][self.dim + 1 :]

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        take(inputs[0], inputs[1], self.dim, outputs[0])


def take(x: FlatIRTensor, index: FlatIRTensor, dim: int, out: Optional[FlatIRTensor] = None) -> FlatIRTensor:
    """Bind ``numpy.take(x, index, axis=dim)`` (negative indices wrap, out-of-range ones clamp) to `out`."""
    out_shape = x.shape[:dim] + index.shape + x.shape[dim + 1 :]
    out = out or FlatIRTensor.build(out_shape, x.dtype, x.device)
    index = _wrap_negative(x, index, dim)
    # stablehlo.gather reads each index as a vector along a trailing dim of size 1.
    vector_shape = index.shape + (1,)
    shape_tensor = None
    if DYNAMIC in vector_shape:
        one = lowering.constant([1], dtypes.int32, x.device, (1,))
        shape_tensor = lowering.concat_dims([lowering.shape_of(index), one], x.device)
    indices = lowering.reshape(
        index, vector_shape, shape_tensor, reason="to give gather its indices as vectors of length 1"
    )
    if all(s != DYNAMIC for d, s in enumerate(x.shape) if d != dim):
        GatherOp.build([x, indices], [out], dim=dim)
    else:
        one = lowering.constant([1], dtypes.int32, x.device, (1,))
        sizes = lowering.concat_dims([one if d == dim else lowering.dim_size(x, d) for d in range(x.rank)], x.device)
        DynamicGatherOp.build([x, indices, sizes], [out], dim=dim)
    return out


def _wrap_negative(x: FlatIRTensor, index: FlatIRTensor, dim: int) -> FlatIRTensor:
    """index < 0 ? index + size : index, elementwise."""

    def full(value_1d: FlatIRTensor) -> FlatIRTensor:
        scalar = lowering.reshape(lowering.convert(value_1d, index.dtype), ())
        return lowering.broadcast_to(scalar, index.shape, lambda: lowering.shape_of(index))

    size = full(lowering.dim_size(x, dim))
    zero = full(lowering.constant([0], dtypes.int32, x.device, (1,)))
    is_negative = FlatIRTensor.build(index.shape, dtypes.bool, x.device)
    CompareOp.build([index, zero], [is_negative], direction="LT")
    wrapped = FlatIRTensor.build(index.shape, index.dtype, x.device)
    AddOp.build([index, size], [wrapped])
    result = FlatIRTensor.build(index.shape, index.dtype, x.device, reason="to count negative indices from the end")
    SelectOp.build([is_negative, wrapped, index], [result])
    return result
