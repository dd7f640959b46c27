"""Elementwise conversion to another dtype."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence

from tripy_flatir import dtypes
from tripy_flatir.ops.and_ import AndOp
from tripy_flatir.ops.bitcast_convert import BitcastConvertOp
from tripy_flatir.ops.convert import ConvertOp
from tripy_flatir.ops.divide import DivideOp
from tripy_flatir.ops.maximum import MaxOp
from tripy_flatir.ops.multiply import MultiplyOp
from tripy_flatir.ops.round_nearest_even import RoundNearestEvenOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.ops.subtract import SubtractOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp


@dataclasses.dataclass(repr=False, eq=False)
class Cast(BaseTraceOp):
    dtype: Any
    display_name = "tripy.cast"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = self.inputs[0].shape

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return dims[0]

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return values[0]

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, out = inputs[0], outputs[0]
        if x.dtype is dtypes.bool and out.dtype.is_floating:
            # select(x, 1, 0), not convert: XLA rewrites convert(pred) * y to select(pred, y, 0), which gives 0
            # where NumPy's 0.0 * nan is nan (and 0.0 * inf too).
            one, zero = (
                lowering.broadcast_to(
                    lowering.constant(v, out.dtype, out.device), x.shape, lambda: lowering.shape_of(x), force=True
                )
                for v in (1, 0)
            )
            SelectOp.build([x, one, zero], [out])
        elif x.dtype is dtypes.float32 and out.dtype is dtypes.float8:
            _to_float8(x, out)
        else:
            ConvertOp.build(inputs, outputs)


# float32 bits: the exponent field; one in its lowest place; float8 (e4m3fn) keeps 3 of float32's 23 mantissa bits
# and spaces its subnormals 2**-9 apart.
_EXPONENT, _EXPONENT_ONE = 0x7F800000, 1 << 23
_FLOAT8_MANTISSA_BITS, _FLOAT8_SUBNORMAL_STEP = 3, (127 - 9) << 23


def _to_float8(x: FlatIRTensor, out: FlatIRTensor) -> None:
    """convert(x) from float32 to float8, rounded once to the nearest (ties to even). jaxlib 0.6.2's XLA converts
    through float16 and so rounds twice: -42.01 became -42.0 (a tie), then -40, where the nearest float8 is -44.
    Rounding to float8's grid in float32 first (x / step, an exact power of two, rounded to an integer, times step)
    leaves the conversion nothing to round. (From float16 and bfloat16 XLA rounds once.)"""
    shape = None if x.is_static else lowering.shape_of(x)

    def full(value: int) -> FlatIRTensor:
        return lowering.broadcast_to(
            lowering.constant(value, dtypes.int32, x.device), x.shape, lambda: shape, force=True
        )

    def apply(op: Any, operands: List[FlatIRTensor], dtype: Any) -> FlatIRTensor:
        result = FlatIRTensor.build(x.shape, dtype, x.device)
        op.build(operands, [result])
        return result

    bits = apply(BitcastConvertOp, [x], dtypes.int32)
    exponent = apply(AndOp, [bits, full(_EXPONENT)], dtypes.int32)
    step_bits = apply(SubtractOp, [exponent, full(_FLOAT8_MANTISSA_BITS * _EXPONENT_ONE)], dtypes.int32)
    step_bits = apply(MaxOp, [step_bits, full(_FLOAT8_SUBNORMAL_STEP)], dtypes.int32)
    step = apply(BitcastConvertOp, [step_bits], dtypes.float32)
    steps = apply(RoundNearestEvenOp, [apply(DivideOp, [x, step], dtypes.float32)], dtypes.float32)
    ConvertOp.build([apply(MultiplyOp, [steps, step], dtypes.float32)], [out])
