"""Elementwise functions of two tensors with NumPy broadcasting: + - * / // % **, max, min, and, or, xor,
and the comparisons (which produce bool)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type

from tripy_flatir import dtypes
from tripy_flatir.ops.add import AddOp
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.convert import ConvertOp
from tripy_flatir.ops.divide import DivideOp
from tripy_flatir.ops.floor import FloorOp
from tripy_flatir.ops.multiply import MultiplyOp
from tripy_flatir.ops.remainder import RemOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.ops.subtract import SubtractOp
from tripy_flatir.ops.and_ import AndOp
from tripy_flatir.ops.power import PowOp
from tripy_flatir.ops.maximum import MaxOp
from tripy_flatir.ops.minimum import MinOp
from tripy_flatir.ops.or_ import OrOp
from tripy_flatir.ops.xor import XorOp
from tripy_flatir.ops.base import BinaryElementwiseOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace import lowering
from tripy_trace import symbolic
from tripy_trace.ops.base import BaseTraceOp, intern_key
from tripy_trace.tensor import TraceTensor


class Kind(enum.Enum):
    SUM = "'+'"
    SUB = "'-'"
    MUL = "'*'"
    DIV = "'/'"
    FLOOR_DIV = "'//'"
    MOD = "'%'"
    POW = "'**'"
    MAXIMUM = "tripy.maximum"
    MINIMUM = "tripy.minimum"
    AND = "'&'"
    OR = "'|'"
    XOR = "'^'"
    EQ = "'=='"
    NE = "'!='"
    LT = "'<'"
    LE = "'<='"
    GT = "'>'"
    GE = "'>='"

    @property
    def spelling(self) -> str:
        """How the user wrote the op, for messages: ``//``, ``**``, ``tripy.maximum``."""
        return self.value.strip("'")

    @property
    def is_comparison(self) -> bool:
        return self.name in ("EQ", "NE", "LT", "LE", "GT", "GE")

    def __str__(self) -> str:
        return f"Kind.{self.name}"


@dataclasses.dataclass(repr=False, eq=False)
class BinaryElementwise(BaseTraceOp):
    __slots__ = ("kind",)
    kind: Kind

    def name(self) -> str:
        return self.kind.value

    # (Inference is written out in one method: it runs for every operator the user applies, on the eager
    # hot path. Mismatches go to the base class's checks, which report them.)
    def infer(self, out: TraceTensor) -> None:
        a, b = self.inputs
        device = a.device
        if b.device is not device:  # (equal devices need not be the same object)
            self.infer_devices()
        if a.dtype is not b.dtype:
            self.infer_dtypes()
        out.device = device
        out.dtype = dtypes.bool if id(self.kind) in _COMPARISONS else a.dtype
        a_shape, b_shape = a.shape, b.shape
        if a_shape == b_shape or not b_shape:  # (a number next to a tensor is a rank-0 constant)
            out.shape = a_shape
        elif not a_shape:
            out.shape = b_shape
        else:
            shape = lowering.broadcast_shape(a_shape, b_shape)
            if shape is None:
                self.raise_error(
                    f"Shapes of the operands of {self.name()} are not compatible for broadcasting: "
                    f"{list(a_shape)} and {list(b_shape)}.",
                    ["Each dimension (aligned from the right) must be equal, or 1 in one of the operands."],
                )
            out.shape = shape

    def key_id(self) -> int:
        if type(self) is BinaryElementwise and type(self._out) is not list and len(self.inputs) == 2:
            return _KIND_KEY_IDS[id(self.kind)]
        return super().key_id()

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return symbolic.broadcast(dims)

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        fn = SIZE_ARITHMETIC.get(self.kind)
        return None if fn is None else symbolic.elementwise(values, fn)

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        out = outputs[0]
        a, b = lowering.broadcast_operands(inputs, out.shape, self.name())
        kind = self.kind
        if kind.is_comparison:
            CompareOp.build([a, b], [out], direction=kind.name)
        elif kind is Kind.FLOOR_DIV:
            _floor_div(a, b, out)
        elif kind is Kind.MOD:
            _python_mod(a, b, out)
        elif kind is Kind.DIV and not a.dtype.is_floating:
            _int_div(a, b, out)
        else:
            FLAT_OPS[kind].build([a, b], [out])


# The FlatIR op (which names its StableHLO op class) of each kind that is one op; comparisons are a
# CompareOp with the kind's name as direction, FLOOR_DIV and MOD are lowered to several ops below.
FLAT_OPS: Dict[Kind, Type[BinaryElementwiseOp]] = {
    Kind.SUM: AddOp,
    Kind.SUB: SubtractOp,
    Kind.MUL: MultiplyOp,
    Kind.DIV: DivideOp,
    Kind.POW: PowOp,
    Kind.MAXIMUM: MaxOp,
    Kind.MINIMUM: MinOp,
    Kind.AND: AndOp,
    Kind.OR: OrOp,
    Kind.XOR: XorOp,
}


# Integer arithmetic that shape code does, on sizes as expressions (``/`` on integers rounds toward zero).
SIZE_ARITHMETIC = {
    Kind.SUM: symbolic.add,
    Kind.SUB: symbolic.sub,
    Kind.MUL: symbolic.mul,
    Kind.FLOOR_DIV: symbolic.floordiv,
    Kind.DIV: symbolic.truncdiv,
    Kind.MOD: symbolic.mod,
    Kind.MAXIMUM: symbolic.maximum,
    Kind.MINIMUM: symbolic.minimum,
}
_COMPARISONS = frozenset(id(k) for k in Kind if k.is_comparison)  # ids: Enum hashes in Python
# id(kind) -> the interned key of a two-input BinaryElementwise of that kind (what BaseTraceOp.key_id
# would compute, without hashing the enum in Python on every evaluation).
_KIND_KEY_IDS = {id(k): intern_key(((BinaryElementwise, (k,)), 2, 1)) for k in Kind}


def _like(t: FlatIRTensor, dtype=None) -> FlatIRTensor:  # type: ignore[no-untyped-def]
    return FlatIRTensor.build(t.shape, dtype or t.dtype, t.device)


def _differs_in_sign(a: FlatIRTensor, b: FlatIRTensor) -> FlatIRTensor:
    """(a < 0) xor (b < 0), elementwise."""
    zero = _full(a, 0)
    a_neg, b_neg, out = _like(a, dtypes.bool), _like(b, dtypes.bool), _like(a, dtypes.bool)
    CompareOp.build([a, zero], [a_neg], direction="LT")
    CompareOp.build([b, zero], [b_neg], direction="LT")
    # NE rather than XOR: StableHLO shape refinement folds compare but not xor, and this runs in shape
    # arithmetic (e.g. `x.shape[0] // 2` in a compiled program with a dynamic dim).
    CompareOp.build([a_neg, b_neg], [out], direction="NE")
    return out


def _full(like: FlatIRTensor, value: float) -> FlatIRTensor:
    return lowering.broadcast_to(
        lowering.constant(value, like.dtype, like.device), like.shape, lambda: lowering.shape_of(like)
    )


def _floor_div(a: FlatIRTensor, b: FlatIRTensor, out: FlatIRTensor) -> None:
    if a.dtype.is_floating:
        if a.dtype == dtypes.float16:  # (NumPy computes float16 '//' in float32 and rounds the result)
            q32 = _float_floor_div(lowering.convert(a, dtypes.float32), lowering.convert(b, dtypes.float32))
            ConvertOp.build([q32], [out])
            return
        _float_floor_div(a, b, out)
        return
    # Integer division truncates toward zero; floor division rounds down (as in Python and NumPy).
    q, r, q_minus_1, floored = _like(a), _like(a), _like(a), _like(a)
    b_zero, divisor = _guard_divisor(b)
    DivideOp.build([a, divisor], [q])
    RemOp.build([a, divisor], [r])
    zero, one = _full(a, 0), _full(a, 1)
    has_rem, adjust = _like(a, dtypes.bool), _like(a, dtypes.bool)
    CompareOp.build([r, zero], [has_rem], direction="NE")
    AndOp.build([has_rem, _differs_in_sign(a, b)], [adjust])
    SubtractOp.build([q, one], [q_minus_1])
    SelectOp.build([adjust, q_minus_1, q], [floored])
    SelectOp.build([b_zero, _full(a, 0), floored], [out])


def _guard_divisor(b: FlatIRTensor) -> Tuple[FlatIRTensor, FlatIRTensor]:
    """(b == 0, b with 1 where it is 0) for an integer divisor. Integer x // 0, x % 0 and x / 0 give 0, as in
    NumPy (XLA's integer division by zero gives -1 and x), and a division by zero never runs, not even when
    StableHLO's shape refinement folds shape arithmetic (it divides in C++ and the process dies of SIGFPE)."""
    zero, one = _full(b, 0), _full(b, 1)
    b_zero, divisor = _like(b, dtypes.bool), _like(b)
    CompareOp.build([b, zero], [b_zero], direction="EQ")
    SelectOp.build([b_zero, one, b], [divisor])
    return b_zero, divisor


def _int_div(a: FlatIRTensor, b: FlatIRTensor, out: FlatIRTensor) -> None:
    """Integer '/' (StableHLO's division, rounding toward zero), 0 where the divisor is 0."""
    q = _like(a)
    b_zero, divisor = _guard_divisor(b)
    DivideOp.build([a, divisor], [q])
    SelectOp.build([b_zero, _full(a, 0), q], [out])


def _float_floor_div(a: FlatIRTensor, b: FlatIRTensor, out: "FlatIRTensor | None" = None) -> FlatIRTensor:
    """floor(a / b) as Python and NumPy compute it (npy_divmod): from the exact remainder, so that e.g.
    inf // 2 is nan and 1 // -inf is -1; a // 0 is a / 0."""
    out = out if out is not None else _like(a)
    mod, a_minus_mod, div, div_minus_1, adjusted, floor, frac, floor_plus_1, rounded = (_like(a) for _ in range(9))
    q, signed_zero, zero_or_floor = _like(a), _like(a), _like(a)
    zero, one, half = _full(a, 0.0), _full(a, 1.0), _full(a, 0.5)
    has_mod, adjust, round_up, div_is_zero, b_is_zero = (_like(a, dtypes.bool) for _ in range(5))
    RemOp.build([a, b], [mod])  # fmod: exact
    SubtractOp.build([a, mod], [a_minus_mod])
    DivideOp.build([a_minus_mod, b], [div])
    CompareOp.build([mod, zero], [has_mod], direction="NE")
    AndOp.build([has_mod, _differs_in_sign(b, mod)], [adjust])
    SubtractOp.build([div, one], [div_minus_1])
    SelectOp.build([adjust, div_minus_1, div], [adjusted])
    FloorOp.build([adjusted], [floor])
    SubtractOp.build([adjusted, floor], [frac])
    CompareOp.build([frac, half], [round_up], direction="GT")
    AddOp.build([floor, one], [floor_plus_1])
    SelectOp.build([round_up, floor_plus_1, floor], [rounded])
    DivideOp.build([a, b], [q])
    MultiplyOp.build([q, zero], [signed_zero])  # copysign(0, a / b): |a / b| < 1 where the quotient is 0
    CompareOp.build([adjusted, zero], [div_is_zero], direction="EQ")
    SelectOp.build([div_is_zero, signed_zero, rounded], [zero_or_floor])
    CompareOp.build([b, zero], [b_is_zero], direction="EQ")
    SelectOp.build([b_is_zero, q, zero_or_floor], [out])
    return out


def _python_mod(a: FlatIRTensor, b: FlatIRTensor, out: FlatIRTensor) -> None:
    # stablehlo.remainder takes the sign of the dividend; Python/NumPy's % takes the sign of the divisor.
    floating = a.dtype.is_floating
    b_zero, divisor = (b, b) if floating else _guard_divisor(b)  # (b_zero: for integers only)
    r, r_plus_b = _like(a), _like(a)
    RemOp.build([a, divisor], [r])
    zero = _full(a, 0)
    has_rem, adjust = _like(a, dtypes.bool), _like(a, dtypes.bool)
    CompareOp.build([r, zero], [has_rem], direction="NE")
    AndOp.build([has_rem, _differs_in_sign(r, b)], [adjust])
    AddOp.build([r, b], [r_plus_b])
    if floating:
        SelectOp.build([adjust, r_plus_b, r], [out])
        return
    python_r = _like(a)
    SelectOp.build([adjust, r_plus_b, r], [python_r])
    SelectOp.build([b_zero, zero, python_r], [out])
