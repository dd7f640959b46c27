"""Elementwise functions of one tensor: tanh, exp, log, ..."""

from __future__ import annotations

import dataclasses
import enum
from typing import Dict, List, Type

from tripy_flatir import dtypes
from tripy_flatir.ops.abs import AbsOp
from tripy_flatir.ops.ceil import CeilOp
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.cosine import CosineOp
from tripy_flatir.ops.erf import ErfOp
from tripy_flatir.ops.exp import ExpOp
from tripy_flatir.ops.expm1 import Expm1Op
from tripy_flatir.ops.floor import FloorOp
from tripy_flatir.ops.is_finite import IsFiniteOp
from tripy_flatir.ops.log import LogOp
from tripy_flatir.ops.log1p import Log1pOp
from tripy_flatir.ops.logistic import LogisticOp
from tripy_flatir.ops.negate import NegateOp
from tripy_flatir.ops.not_ import NotOp
from tripy_flatir.ops.round_nearest_even import RoundNearestEvenOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.ops.rsqrt import RsqrtOp
from tripy_flatir.ops.sign import SignOp
from tripy_flatir.ops.sine import SineOp
from tripy_flatir.ops.sqrt import SqrtOp
from tripy_flatir.ops.tan import TanOp
from tripy_flatir.ops.tanh import TanhOp
from tripy_flatir.ops.base import UnaryElementwiseOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp, intern_key
from tripy_trace.tensor import TraceTensor


class Kind(enum.Enum):
    TANH = enum.auto()
    EXP = enum.auto()
    LOG = enum.auto()
    SQRT = enum.auto()
    RSQRT = enum.auto()
    ABS = enum.auto()
    NEG = enum.auto()
    SIN = enum.auto()
    COS = enum.auto()
    TAN = enum.auto()
    SIGMOID = enum.auto()
    NOT = enum.auto()
    FLOOR = enum.auto()
    CEIL = enum.auto()
    SIGN = enum.auto()
    ROUND = enum.auto()
    LOG1P = enum.auto()
    EXPM1 = enum.auto()
    ISFINITE = enum.auto()
    ERF = enum.auto()

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
        if self.kind in (Kind.EXP, Kind.EXPM1):
            # select(x != x, x, exp(x)): XLA:CPU's exp gives garbage for a NaN it can see at compile time (e.g.
            # exp(x + nan), also under jax.jit); the select keeps the NaN.
            x, out = inputs[0], outputs[0]
            e, is_nan = FlatIRTensor.build(out.shape, out.dtype, out.device), FlatIRTensor.build(x.shape, dtypes.bool, x.device)
            FLAT_OPS[self.kind].build([x], [e])
            CompareOp.build([x, x], [is_nan], direction="NE")
            SelectOp.build([is_nan, x, e], [out])
            return
        FLAT_OPS[self.kind].build(inputs, outputs)


# Each kind's FlatIR op (which names its StableHLO op class).
FLAT_OPS: Dict[Kind, Type[UnaryElementwiseOp]] = {
    Kind.TANH: TanhOp,
    Kind.EXP: ExpOp,
    Kind.LOG: LogOp,
    Kind.SQRT: SqrtOp,
    Kind.RSQRT: RsqrtOp,
    Kind.ABS: AbsOp,
    Kind.NEG: NegateOp,
    Kind.SIN: SineOp,
    Kind.COS: CosineOp,
    Kind.TAN: TanOp,
    Kind.SIGMOID: LogisticOp,
    Kind.NOT: NotOp,
    Kind.FLOOR: FloorOp,
    Kind.CEIL: CeilOp,
    Kind.SIGN: SignOp,
    Kind.ROUND: RoundNearestEvenOp,
    Kind.LOG1P: Log1pOp,
    Kind.EXPM1: Expm1Op,
    Kind.ISFINITE: IsFiniteOp,
    Kind.ERF: ErfOp,
}
assert set(FLAT_OPS) == set(Kind), "every kind needs its FlatIR op"


_ISFINITE = Kind.ISFINITE
# id(kind) -> the interned key of a one-input UnaryElementwise of that kind (what BaseTraceOp.key_id would
# compute, without hashing the enum in Python on every evaluation).
_KIND_KEY_IDS = {id(k): intern_key(((UnaryElementwise, (k,)), 1, 1)) for k in Kind}
