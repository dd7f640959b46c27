"""Elementwise functions of one tensor: tanh, exp, log, ..."""

from __future__ import annotations

import dataclasses
import enum
from typing import List

from tripy_flatir import dtypes
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp, intern_key
from tripy_trace.tensor import TraceTensor


class Kind(enum.Enum):
    TANH = "TanhOp"
    EXP = "ExpOp"
    LOG = "LogOp"
    SQRT = "SqrtOp"
    RSQRT = "RsqrtOp"
    ABS = "AbsOp"
    NEG = "NegateOp"
    SIN = "SineOp"
    COS = "CosineOp"
    TAN = "TanOp"
    SIGMOID = "LogisticOp"
    NOT = "NotOp"
    FLOOR = "FloorOp"
    CEIL = "CeilOp"
    SIGN = "SignOp"
    ROUND = "RoundNearestEvenOp"
    LOG1P = "Log1pOp"
    EXPM1 = "Expm1Op"
    ISFINITE = "IsFiniteOp"
    ERF = "ErfOp"

    def __str__(self) -> str:
        return f"Kind.{self.name}"


@dataclasses.dataclass(repr=False, eq=False)
class UnaryElementwise(BaseTraceOp):
    __slots__ = ("kind",)
    kind: Kind

    def name(self) -> str:
        return f"tripy.{self.kind.name.lower()}"

    # (Inference in one method: it runs for every elementwise function the user calls, on the eager hot path.)
    def infer(self, out: TraceTensor) -> None:
        x = self.inputs[0]
        out.device = x.device
        out.dtype = dtypes.bool if self.kind is _ISFINITE else x.dtype
        out.shape = x.shape

    def key_id(self) -> int:
        if type(self) is UnaryElementwise and type(self._out) is not list and len(self.inputs) == 1:
            return _KIND_KEY_IDS[id(self.kind)]
        return super().key_id()

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        import tripy_flatir.ops as flat_ops

        if self.kind in (Kind.EXP, Kind.EXPM1):
            # select(x != x, x, exp(x)): XLA:CPU's exp gives garbage for a NaN it can see at compile time (e.g.
            # exp(x + nan), also under jax.jit); the select keeps the NaN.
            x, out = inputs[0], outputs[0]
            e, is_nan = FlatIRTensor.build(out.shape, out.dtype, out.device), FlatIRTensor.build(x.shape, dtypes.bool, x.device)
            getattr(flat_ops, self.kind.value).build([x], [e])
            CompareOp.build([x, x], [is_nan], direction="NE")
            SelectOp.build([is_nan, x, e], [out])
            return
        getattr(flat_ops, self.kind.value).build(inputs, outputs)


_ISFINITE = Kind.ISFINITE
# id(kind) -> the interned key of a one-input UnaryElementwise of that kind (what BaseTraceOp.key_id would
# compute, without hashing the enum in Python on every evaluation).
_KIND_KEY_IDS = {id(k): intern_key(((UnaryElementwise, (k,)), 1, 1)) for k in Kind}
