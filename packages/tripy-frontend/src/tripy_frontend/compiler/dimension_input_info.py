"""tp.DimensionInputInfo: a runtime input of a compiled function that is a shape value (a DimensionSize).

A compiled program takes its shapes from its inputs' dims (that is how one program serves a whole
range, see ``tripy_backend.ranges``), so a size given as a value enters the program the same way: as
dim 0 of a hidden, empty input of shape ``(value, 0)`` (no elements, no data to copy). Inside the
traced function the value is that input's ``shape[0]``, a run-time DimensionSize like any other, and
the executable makes the empty input from the value it is called with.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.compiler.input_info import Bounds, InputInfo
from tripy_frontend.compiler.named_dimension import check_bounds
from tripy_frontend.export import public_api
from tripy_frontend.tensor import DimensionSize, Tensor

# The element type of the hidden input (it holds no elements).
CARRIER_DTYPE = dtypes.bool


@public_api(document_under="compile")
class DimensionInputInfo(InputInfo):
    """Describes a runtime input of a function compiled with :func:`tripy.compile` that is a dimension
    size (a :class:`DimensionSize`, e.g. a target length to reshape to) rather than a tensor: the range
    of values it may take, ``(min, opt, max)``. The function receives a DimensionSize, known at run time,
    and the executable is called with a DimensionSize (or an int) in range; like a dynamic dim of an
    :class:`InputInfo`, the whole range is compiled once (where the program allows: a reshape whose other
    dims follow the value compiles each value at its first call). The value travels as dim 0 of an empty
    input of shape ``(value, 0)``, which is how logs and compiler errors show it.

    Args:
        value_bounds: The smallest value allowed, the value to optimize for and the largest allowed.

    .. code-block:: python

        import numpy as np

        def split_rows(x, n):
            return tp.reshape(x, (n, -1))

        exe = tp.compile(split_rows, args=[tp.InputInfo((4, 4), tp.float32), tp.DimensionInputInfo((1, 2, 8))])
        data = np.arange(16, dtype=np.float32).reshape(4, 4)
        out = exe(tp.Tensor(data), tp.DimensionSize(8))
        assert np.array_equal(np.from_dlpack(out), data.reshape(8, -1))

        info = tp.DimensionInputInfo(value_bounds=(1, 2, 8))
        assert (info.min, info.opt, info.max) == (1, 2, 8)
        assert info.value_bounds == tp.Bounds(min=(1,), opt=(2,), max=(8,))
    """

    _tripy_unchecked_init = True  # check_bounds validates each value with a precise message

    __slots__ = ()

    def __init__(self, value_bounds: Tuple[Any, Any, Any]) -> None:

        what = "tripy.DimensionInputInfo: value_bounds"
        if not isinstance(value_bounds, (list, tuple)) or len(value_bounds) != 3:
            raise_error(
                f"{what} must be a (min, opt, max) triple of ints, but got {value_bounds!r}.",
                _stack.capture(),
                ["For example: tp.DimensionInputInfo((1, 4, 8))."],
            )
        # (a DimensionSize bound known only at run time is read now, as nvtripy does)
        values = tuple(int(v) if isinstance(v, DimensionSize) else v for v in value_bounds)
        lo, opt, hi = check_bounds(values, what)
        self.shape_bounds = Bounds((lo, 0), (opt, 0), (hi, 0))
        self.dimension_names: Dict[int, str] = {}
        self.dtype: dtypes.dtype = CARRIER_DTYPE
        self.sharding, self.layout = None, None  # (a shape value is on every device)

    @property
    def value_bounds(self) -> Bounds:
        """The value's bounds, as nvtripy gives them: ``Bounds(min=(lo,), opt=(opt,), max=(hi,))``."""
        b = self.shape_bounds
        return Bounds(b.min[:1], b.opt[:1], b.max[:1])

    @property
    def min(self) -> int:
        return self.shape_bounds.min[0]

    @property
    def opt(self) -> int:
        return self.shape_bounds.opt[0]

    @property
    def max(self) -> int:
        return self.shape_bounds.max[0]

    def __repr__(self) -> str:
        return f"DimensionInputInfo(min={self.min}, opt={self.opt}, max={self.max})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DimensionInputInfo) and self.shape_bounds == other.shape_bounds

    __hash__ = InputInfo.__hash__

    def to_json(self) -> Dict[str, Any]:
        return {"kind": "dimension", "min": self.min, "opt": self.opt, "max": self.max}

    @classmethod
    def from_json(cls, data: Any) -> "DimensionInputInfo":
        """Rebuild from to_json() output; raises ValueError (not TripyException) on malformed data."""
        values = [data.get(k) for k in ("min", "opt", "max")]
        if (
            not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
            or not 0 <= values[0] <= values[1] <= values[2]
        ):
            raise ValueError(f"invalid dimension input bounds {values}")
        info = cls.__new__(cls)
        info.shape_bounds = Bounds((values[0], 0), (values[1], 0), (values[2], 0))
        info.dimension_names = {}
        info.dtype = CARRIER_DTYPE
        info.sharding, info.layout = None, None
        return info

    # ---- the executable's side ----------------------------------------------------------------------------
    def carrier(self, name: str, value: Any) -> np.ndarray:
        """The hidden input for `value` (what the executable was called with for input `name`): an empty
        array of shape ``(value, 0)``. Raises a report for anything but an integer in range."""
        if isinstance(value, Tensor) and not isinstance(value, bool):
            if value.dtype is not dtypes.int32 or value.rank != 0:
                raise_error(
                    f"Input '{name}' must be a tripy.DimensionSize (or an int), but got a tensor of data type "
                    f"{value.dtype} and rank {value.rank}.",
                    _stack.capture(),
                    [f"It takes values in [{self.min}, {self.max}]: pass tp.DimensionSize(n) or an int."],
                    [value.stack_info],
                )
            value = int(value)
        elif not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise_error(
                f"Input '{name}' must be a tripy.DimensionSize (or an int), but got {type(value).__name__}.",
                _stack.capture(),
                [f"It takes values in [{self.min}, {self.max}]: pass tp.DimensionSize(n)."],
            )
        value = int(value)
        if not self.min <= value <= self.max:
            raise_error(
                f"Input '{name}' is {value}, which is outside the allowed range [{self.min}, {self.max}].",
                _stack.capture(),
                [
                    f"'{name}' was compiled as {self}. To accept other values, compile again "
                    "with wider bounds in its tripy.DimensionInputInfo."
                ],
            )
        return np.empty((value, 0), dtype=np.bool_)


def input_info_from_json(data: Any) -> InputInfo:
    """An InputInfo or DimensionInputInfo from its to_json() output (ValueError if malformed)."""
    if isinstance(data, dict) and data.get("kind") == "dimension":
        return DimensionInputInfo.from_json(data)
    return InputInfo.from_json(data)
