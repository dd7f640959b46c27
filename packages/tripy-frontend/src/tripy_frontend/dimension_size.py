"""Shapes are values: ``t.shape`` is a tuple of DimensionSize, a rank-0 int32 tensor whose value is
known statically when the dim is static (and folds in shape arithmetic), and computed at run time
when it is not (compiled programs with dynamic dims)."""

from __future__ import annotations

import operator
from typing import Any, Callable, Optional

import numpy as np

from tripy_flatir import dtypes, stack_info
from tripy_flatir.device import CPU
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind
from tripy_trace.ops.constant import Constant
from tripy_trace.ops.dim_size import DimSize
from tripy_trace.tensor import TraceTensor
from tripy_frontend.public_names import public_class
from tripy_frontend.tensor import Tensor


@public_class
class DimensionSize(Tensor):
    """The size of one dimension: a rank-0 int32 tensor. Static sizes behave like Python ints, and every
    size prints as a number.

    Arithmetic on sizes and ints gives DimensionSizes: ``+``, ``-``, ``*``, ``//`` and ``%`` as Python's
    ints do, and ``/`` as nvtripy's does, an int32 division that rounds toward zero (``7 / 2 == 3``,
    so ``x - (x / y) * y`` is the remainder), whether the sizes are static or known only at run time.

    .. code-block:: python

        a = tp.ones((2, 3, 8))
        assert str(a.shape[1]) == "3"
        half = a.shape[2] / 2
        assert isinstance(half, tp.DimensionSize) and half == 4
        assert a.shape[1] / 2 == 1 and a.shape[1] - (a.shape[1] / 2) * 2 == 1
        assert tp.reshape(a, (2, a.shape[1], a.shape[2] / 2, -1)).shape == (2, 3, 4, 2)
        assert tp.DimensionSize(5, name="five") + 1 == 6
    """

    __slots__ = ("_static", "_tt")

    def __init__(self, data: Any, name: Optional[str] = None) -> None:  # noqa: D107
        self._static: Optional[int] = int(data)
        self._tt: Optional[TraceTensor] = None
        if name:
            self.trace_tensor.name = name

    @property  # type: ignore[override]
    def trace_tensor(self) -> TraceTensor:  # built lazily: most static sizes never enter a graph
        if self._tt is None:

            op = Constant.build([], stack_info.capture(), value=np.int32(self._static or 0), dtype=dtypes.int32, device=CPU)
            self._tt = op.outputs[0]
        return self._tt

    @trace_tensor.setter
    def trace_tensor(self, value: TraceTensor) -> None:
        self._tt = value

    @classmethod
    def _dynamic(cls, tensor: Tensor) -> "DimensionSize":
        d = cls.__new__(cls)
        d._static = None
        d._tt = tensor.trace_tensor
        return d

    def __repr__(self) -> str:
        return str(self._static) if self._static is not None else str(int(self))

    __str__ = __repr__

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool) or isinstance(other, DimensionSize):
            return _integer_div(self, other)
        return Tensor.__truediv__(self, other)  # type: ignore[attr-defined]

    def __rtruediv__(self, other: Any) -> Any:
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            return _integer_div_reflected(self, other)
        return Tensor.__rtruediv__(self, other)  # type: ignore[attr-defined]

    def __int__(self) -> int:
        return self._static if self._static is not None else int(Tensor._scalar(self))

    def __index__(self) -> int:
        return int(self)

    def _numpy(self) -> np.ndarray:
        # A static size converts (float(), NumPy, ...) without evaluating its tensor: evaluation would turn
        # it into stored data, a program argument, where shape arithmetic needs a constant it can fold.
        if self._static is not None:
            return np.array(self._static, dtype=np.int32)
        return super()._numpy()

    __hash__ = Tensor.__hash__


def static_value(t: Any) -> Optional[int]:
    """The statically known value of a DimensionSize (None if only known at run time)."""
    if isinstance(t, DimensionSize):
        return t._static
    return None


class Shape(tuple):
    """A tensor's shape: a tuple of DimensionSizes that also compares equal to a list, as older nvtripy's
    shapes did (``t.shape == [2, 3]`` and ``t.shape == (2, 3)``)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__


def shape_of(t: Tensor) -> tuple:
    out = []
    for d, size in enumerate(t.trace_tensor.shape):
        if size >= 0:
            out.append(DimensionSize(size))
        else:
            out.append(DimensionSize._dynamic(Tensor._from_op(DimSize, [t], dim=d)))
    return Shape(out)


def _arith(kind: Kind, fold: Callable[[int, int], Any], reflected: bool = False) -> Callable[..., Any]:
    def method(self: DimensionSize, other: Any) -> Any:
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            other = DimensionSize(int(other))
        if not isinstance(other, DimensionSize):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        if a._static is not None and b._static is not None:
            result = fold(a._static, b._static)
            return DimensionSize(result) if not isinstance(result, bool) else result
        out = Tensor._from_op(BinaryElementwise, [a, b], kind=kind)
        return DimensionSize._dynamic(out) if not kind.is_comparison else out

    return method


for _name, _kind, _fold in [("add", Kind.SUM, operator.add), ("sub", Kind.SUB, operator.sub),
                            ("mul", Kind.MUL, operator.mul), ("floordiv", Kind.FLOOR_DIV, operator.floordiv),
                            ("mod", Kind.MOD, operator.mod)]:
    setattr(DimensionSize, f"__{_name}__", _arith(_kind, _fold))
    setattr(DimensionSize, f"__r{_name}__", _arith(_kind, _fold, reflected=True))
def _truncating_div(a: int, b: int) -> int:
    """int32 division as nvtripy's (TensorRT's) and StableHLO's: rounds toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_integer_div = _arith(Kind.DIV, _truncating_div)
_integer_div_reflected = _arith(Kind.DIV, _truncating_div, reflected=True)
for _name, _kind, _fold in [("eq", Kind.EQ, operator.eq), ("ne", Kind.NE, operator.ne), ("lt", Kind.LT, operator.lt),
                            ("le", Kind.LE, operator.le), ("gt", Kind.GT, operator.gt), ("ge", Kind.GE, operator.ge)]:
    setattr(DimensionSize, f"__{_name}__", _arith(_kind, _fold))
