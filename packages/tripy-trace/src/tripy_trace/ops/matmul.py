"""Matrix product with NumPy's rules: 1-D operands are promoted (and the added dim removed), leading
(batch) dims broadcast."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir.ops.dot_general import DotOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering, symbolic
from tripy_trace.ops.base import BaseTraceOp, intern_key
from tripy_trace.tensor import TraceTensor


@dataclasses.dataclass(repr=False, eq=False)
class MatrixMultiply(BaseTraceOp):
    __slots__ = ()
    display_name = "'@' (matrix multiplication)"

    def infer(self, out: TraceTensor) -> None:
        a, b = self.inputs
        if a.device is not b.device:
            self.infer_devices()
        if a.dtype is not b.dtype:
            self.infer_dtypes()
        out.device = a.device
        out.dtype = a.dtype
        a_shape, b_shape = a.shape, b.shape
        if len(a_shape) == 2 and len(b_shape) == 2 and a_shape[1] == b_shape[0] != DYNAMIC:  # (the common case)
            out.shape = (a_shape[0], b_shape[1])
        else:
            self.infer_shapes()

    def infer_shapes(self) -> None:
        a, b = self.inputs
        if a.rank == 0 or b.rank == 0:
            self.raise_error(
                f"Matrix multiplication needs operands of rank >= 1, but got shapes {list(a.shape)} "
                f"and {list(b.shape)}.",
                ["Use '*' to multiply by a scalar."],
            )
        a_shape = (1,) + a.shape if a.rank == 1 else a.shape
        b_shape = b.shape + (1,) if b.rank == 1 else b.shape
        k_a, k_b = a_shape[-1], b_shape[-2]
        if DYNAMIC not in (k_a, k_b) and k_a != k_b:
            self.raise_error(
                f"Incompatible shapes for matrix multiplication: {list(a.shape)} @ {list(b.shape)}. The last dim of "
                f"the left operand ({k_a}) must equal the {'only' if b.rank == 1 else 'second-to-last'} dim of the "
                f"right operand ({k_b})."
            )
        maybe_batch = lowering.broadcast_shape(a_shape[:-2], b_shape[:-2])
        if maybe_batch is None:
            self.raise_error(
                f"Batch dims of the operands of matrix multiplication do not broadcast: "
                f"{list(a.shape)} @ {list(b.shape)}."
            )
        shape = list(maybe_batch) + [a_shape[-2], b_shape[-1]]
        if a.rank == 1:
            shape.pop(-2)
        if b.rank == 1:
            shape.pop(-1)
        self.outputs[0].shape = tuple(shape)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        a, b = dims
        a_dims = (1,) + a if len(a) == 1 else a
        b_dims = b + (1,) if len(b) == 1 else b
        out = symbolic.broadcast([a_dims[:-2], b_dims[:-2]]) + [a_dims[-2], b_dims[-1]]
        if len(a) == 1:
            out.pop(-2)
        if len(b) == 1:
            out.pop(-1)
        return out

    def key_id(self) -> int:
        if type(self) is MatrixMultiply and type(self._out) is not list and len(self.inputs) == 2:
            return _KEY_ID  # (no attributes: one id for every two-input matrix multiplication)
        return super().key_id()

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        a, b = inputs
        out = outputs[0]
        why = "to apply NumPy's rules for 1-D operands of matrix multiplication"
        if a.rank == 1:
            a = lowering.reshape(a, (1,) + a.shape, _shape_with_one(a, 0), reason=why)
        if b.rank == 1:
            b = lowering.reshape(b, b.shape + (1,), _shape_with_one(b, 1), reason=why)
        batch = lowering.broadcast_shape(a.shape[:-2], b.shape[:-2])
        assert batch is not None
        nb = len(batch)
        if a.shape[:-2] != batch or b.shape[:-2] != batch:

            def target(x: FlatIRTensor) -> tuple:
                return tuple(batch) + x.shape[-2:]

            def target_tensor(x: FlatIRTensor):  # type: ignore[no-untyped-def]
                parts = []
                for d in range(nb):
                    src = next(
                        (o for o in (a, b) if o.rank - 2 - nb + d >= 0 and o.shape[o.rank - 2 - nb + d] != 1), None
                    )
                    if src is None:  # every operand that has this batch dim has size 1 there
                        parts.append(lowering.constant([1], dtypes.int32, x.device, (1,)))
                    else:
                        parts.append(lowering.dim_size(src, src.rank - 2 - nb + d))
                parts += [lowering.dim_size(x, x.rank - 2), lowering.dim_size(x, x.rank - 1)]
                return lowering.concat_dims(parts, x.device)

            why_b = f"to broadcast the batch dims of the operands of matrix multiplication to {list(batch)}"
            a = lowering.broadcast_to(a, target(a), lambda: target_tensor(a), reason=why_b)
            b = lowering.broadcast_to(b, target(b), lambda: target_tensor(b), reason=why_b)
        full_shape = tuple(batch) + (a.shape[-2], b.shape[-1])
        result = out if full_shape == out.shape else FlatIRTensor.build(full_shape, out.dtype, out.device)
        DotOp.build(
            [a, b],
            [result],
            lhs_batching_dims=list(range(nb)),
            rhs_batching_dims=list(range(nb)),
            lhs_contracting_dims=[nb + 1],
            rhs_contracting_dims=[nb],
        )
        if result is not out:
            shape_tensor = None
            if not out.is_static:
                keep = [
                    d
                    for d in range(result.rank)
                    if not ((inputs[0].rank == 1 and d == nb) or (inputs[1].rank == 1 and d == nb + 1))
                ]
                shape_tensor = lowering.concat_dims([lowering.dim_size(result, d) for d in keep], out.device)
            lowering.reshape(result, out.shape, shape_tensor, out=out)


_KEY_ID = intern_key(((MatrixMultiply, ()), 2, 1))


def _shape_with_one(x: FlatIRTensor, position: int):  # type: ignore[no-untyped-def]
    if x.is_static:
        return None
    one = lowering.constant([1], dtypes.int32, x.device, (1,))
    parts = [lowering.dim_size(x, 0)]
    parts.insert(position, one)
    return lowering.concat_dims(parts, x.device)
