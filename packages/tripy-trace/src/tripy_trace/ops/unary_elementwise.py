"""Elementwise functions of one tensor: tanh, exp, log, ..."""

from __future__ import annotations

import dataclasses
import enum
from typing import List

from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp


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
    kind: Kind

    def name(self) -> str:
        return f"tripy.{self.kind.name.lower()}"

    def infer_dtypes(self) -> None:
        from tripy_flatir import dtypes

        super().infer_dtypes()
        if self.kind is Kind.ISFINITE:
            self.outputs[0].dtype = dtypes.bool

    def infer_shapes(self) -> None:
        self.outputs[0].shape = self.inputs[0].shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        import tripy_flatir.ops as flat_ops

        getattr(flat_ops, self.kind.value).build(inputs, outputs)
