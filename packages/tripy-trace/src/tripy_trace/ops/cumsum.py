"""Cumulative sum along one dim.

Two lowerings, both built only from adds and selects (never multiplies, so ``inf`` and ``nan`` propagate
as in NumPy and integers stay exact; a product with a triangular matrix of ones would turn ``inf * 0``
into ``nan``):

* The length of `dim` is static (the usual case): a Hillis-Steele scan. ``ceil(log2(n))`` steps, each
  adding to the running result a copy of itself shifted by 1, 2, 4, ... along `dim` (a slice
  concatenated after zeros). O(n log n) work, all static slices. (reduce_window would also do, but
  XLA:CPU evaluates it as a sum over the full window for every output: O(n^2).)
* The length of `dim` is only known at run time: the number of scan steps is unknown, so a masked
  reduction, ``out[..., j, ...] = sum over i of (i <= j ? x[..., i, ...] : 0)``, from a broadcast with
  one extra axis, two iotas, a compare, a select and a reduce-sum. Correct for every length, O(n^2).
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir.ops.add import AddOp
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.concatenate import ConcatenateOp
from tripy_flatir.ops.dynamic_broadcast import DynamicBroadcastOp
from tripy_flatir.ops.dynamic_iota import DynamicIotaOp
from tripy_flatir.ops.real_dynamic_slice import DynamicSliceOp
from tripy_flatir.ops.reduce import ReduceOp
from tripy_flatir.ops.reshape import ReshapeOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.ops.slice import SliceOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Cumsum(BaseTraceOp):
    dim: int  # normalized, non-negative
    display_name = "tripy.cumsum"

    def infer_shapes(self) -> None:
        self.outputs[0].shape = self.inputs[0].shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        if inputs[0].shape[self.dim] == DYNAMIC:
            _masked_sum(inputs[0], outputs[0], self.dim)
        else:
            _scan(inputs[0], outputs[0], self.dim)


def _scan(x: FlatIRTensor, out: FlatIRTensor, p: int) -> None:
    n = x.shape[p]
    sizes = None if x.is_static else [lowering.dim_size(x, d) for d in range(x.rank)]

    def with_dim(size: int) -> tuple:
        return tuple(size if d == p else s for d, s in enumerate(x.shape))

    def runtime_shape(size: int) -> FlatIRTensor:
        assert sizes is not None
        parts = [lowering.constant([size], dtypes.int32, x.device, (1,)) if d == p else sizes[d] for d in range(x.rank)]
        return lowering.concat_dims(parts, x.device)

    zero = lowering.constant(0, x.dtype, x.device)
    y = x
    shift = 1
    while shift < n:
        # shifted[i] = y[i - shift] along p (zero for i < shift); y + shifted sums 2 * shift elements.
        zeros = _broadcast_in_dim(zero, with_dim(shift), [], None if sizes is None else runtime_shape(shift))
        body = FlatIRTensor.build(with_dim(n - shift), x.dtype, x.device)
        if sizes is None:
            SliceOp.build(
                [y], [body], start_indices=[0] * x.rank, limit_indices=list(with_dim(n - shift)), strides=[1] * x.rank
            )
        else:
            start = lowering.constant([0] * x.rank, dtypes.int32, x.device, (x.rank,))
            stride = lowering.constant([1] * x.rank, dtypes.int32, x.device, (x.rank,))
            DynamicSliceOp.build([y, start, runtime_shape(n - shift), stride], [body])
        shifted = FlatIRTensor.build(
            x.shape, x.dtype, x.device, reason=f"the running cumsum shifted by {shift} along dim {p}"
        )
        ConcatenateOp.build([zeros, body], [shifted], dim=p)
        last = shift * 2 >= n
        total = out if last else FlatIRTensor.build(x.shape, x.dtype, x.device)
        AddOp.build([y, shifted], [total])
        y, shift = total, shift * 2
    if n <= 1:  # nothing to add up: out is x
        if x.is_static:
            ReshapeOp.build([x], [out])
        else:
            lowering.reshape(x, out.shape, lowering.shape_of(x), out=out)


def _masked_sum(x: FlatIRTensor, out: FlatIRTensor, p: int) -> None:
    # Wide shape: x's shape with the scanned dim twice: axis p is i (source), axis p + 1 is j (output).
    wide = x.shape[: p + 1] + (x.shape[p],) + x.shape[p + 1 :]
    sizes = [lowering.dim_size(x, d) for d in range(x.rank)]
    wide_shape = lowering.concat_dims(sizes[: p + 1] + [sizes[p]] + sizes[p + 1 :], x.device)
    reason = "to pair every element with every output position along the cumsum dim"
    spread = _broadcast_in_dim(x, wide, [d if d <= p else d + 1 for d in range(x.rank)], wide_shape, reason)
    i_idx = FlatIRTensor.build(wide, dtypes.int32, x.device)
    j_idx = FlatIRTensor.build(wide, dtypes.int32, x.device)
    DynamicIotaOp.build([wide_shape], [i_idx], dim=p)
    DynamicIotaOp.build([wide_shape], [j_idx], dim=p + 1)
    keep = FlatIRTensor.build(wide, dtypes.bool, x.device, reason="which elements each cumsum position adds up")
    CompareOp.build([i_idx, j_idx], [keep], direction="LE")
    zero = lowering.constant(0, x.dtype, x.device)
    zeros = _broadcast_in_dim(zero, wide, [], wide_shape)
    masked = FlatIRTensor.build(wide, x.dtype, x.device)
    SelectOp.build([keep, spread, zeros], [masked])
    ReduceOp.build([masked, zero], [out], reduce_mode="sum", reduce_dims=[p])


def _broadcast_in_dim(
    x: FlatIRTensor,
    shape: Sequence[int],
    dims: List[int],
    shape_tensor: Optional[FlatIRTensor],
    reason: Optional[str] = None,
) -> FlatIRTensor:
    out = FlatIRTensor.build(shape, x.dtype, x.device, reason)
    if shape_tensor is None:
        BroadcastOp.build([x], [out], broadcast_dim=dims)
    else:
        DynamicBroadcastOp.build([x, shape_tensor], [out], broadcast_dim=dims)
    return out
