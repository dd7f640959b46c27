"""Integer arithmetic on sizes and indices that are either static (Python ints) or only known at run time
(1-element int32 FlatIR tensors, as made by ``lowering.dim_size``).

Static operands fold to Python ints; anything else builds FlatIR ops. One formula written against this
interface therefore serves both shape inference (all ints, no graph) and lowering (mixed), so the static
and the dynamic paths cannot disagree. ``Arith()`` with no device only accepts ints.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence, Type, Union

from tripy_flatir import dtypes
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace import lowering
from tripy_flatir.ops.add import AddOp
from tripy_flatir.ops.base import BinaryElementwiseOp
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.divide import DivideOp
from tripy_flatir.ops.maximum import MaxOp
from tripy_flatir.ops.minimum import MinOp
from tripy_flatir.ops.multiply import MultiplyOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.ops.subtract import SubtractOp

Value = Union[int, FlatIRTensor]


class Arith:
    def __init__(self, device: Any = None) -> None:
        self.device = device

    # ---- conversions ------------------------------------------------------------------------------
    def tensor(self, v: Value) -> FlatIRTensor:
        """`v` as a 1-element int32 tensor."""
        if isinstance(v, FlatIRTensor):
            return v

        assert self.device is not None, "run-time arithmetic needs a device"
        return lowering.constant([int(v)], dtypes.int32, self.device, (1,))

    @staticmethod
    def is_static(v: Any) -> bool:
        return not isinstance(v, FlatIRTensor)

    # ---- arithmetic -------------------------------------------------------------------------------
    def _binary(self, a: Value, b: Value, fold: Callable[[int, int], int], flat_op: Type[BinaryElementwiseOp]) -> Value:
        if self.is_static(a) and self.is_static(b):
            return fold(int(a), int(b))  # type: ignore[arg-type]

        out = FlatIRTensor.build((1,), dtypes.int32, self.device)
        flat_op.build([self.tensor(a), self.tensor(b)], [out])
        return out

    def add(self, a: Value, b: Value) -> Value:
        if self.is_static(b) and b == 0:
            return a
        if self.is_static(a) and a == 0:
            return b
        return self._binary(a, b, operator.add, AddOp)

    def sub(self, a: Value, b: Value) -> Value:
        if self.is_static(b) and b == 0:
            return a
        return self._binary(a, b, operator.sub, SubtractOp)

    def mul(self, a: Value, b: Value) -> Value:
        if self.is_static(b) and b == 1:
            return a
        if self.is_static(a) and a == 1:
            return b
        return self._binary(a, b, operator.mul, MultiplyOp)

    def maximum(self, a: Value, b: Value) -> Value:
        return self._binary(a, b, max, MaxOp)

    def minimum(self, a: Value, b: Value) -> Value:
        return self._binary(a, b, min, MinOp)

    def floordiv(self, a: Value, b: int) -> Value:
        """Floor division (rounding toward -inf, as in Python) by a positive static int."""
        assert isinstance(b, int) and b > 0
        if b == 1:
            return a
        if self.is_static(a):
            return int(a) // b  # type: ignore[arg-type]
        # stablehlo.divide truncates toward zero; shift negative numerators so that truncation floors.
        shifted = self.select_negative(a, self.sub(a, b - 1), a)
        return self._binary(shifted, b, operator.floordiv, DivideOp)

    def select_negative(self, cond: Value, if_negative: Value, otherwise: Value) -> Value:
        """``if_negative if cond < 0 else otherwise``."""
        if self.is_static(cond):
            return if_negative if int(cond) < 0 else otherwise  # type: ignore[arg-type]
        if self.is_static(if_negative) and self.is_static(otherwise) and if_negative == otherwise:
            return if_negative

        is_neg = FlatIRTensor.build((1,), dtypes.bool, self.device)
        CompareOp.build([self.tensor(cond), self.tensor(0)], [is_neg], direction="LT")
        out = FlatIRTensor.build((1,), dtypes.int32, self.device)
        SelectOp.build([is_neg, self.tensor(if_negative), self.tensor(otherwise)], [out])
        return out

    def concat(self, values: Sequence[Value]) -> FlatIRTensor:
        """The values as one 1-D int32 tensor (a shape or a list of indices)."""

        if all(self.is_static(v) for v in values):
            return lowering.constant([int(v) for v in values], dtypes.int32, self.device, (len(values),))  # type: ignore[arg-type]
        return lowering.concat_dims([self.tensor(v) for v in values], self.device)


INT_ARITH = Arith()
