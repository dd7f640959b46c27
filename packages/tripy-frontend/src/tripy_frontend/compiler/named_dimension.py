"""tp.NamedDimension: a dynamic dimension with a name; dims that share a name must be equal at run time."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.tensor import DimensionSize, static_value


def check_bounds(bounds: Any, what: str) -> Tuple[int, int, int]:
    """Validate a (min, opt, max) triple of non-negative ints with min <= opt <= max."""

    values = []
    for v in bounds:
        if isinstance(v, DimensionSize) and static_value(v) is not None:
            v = static_value(v)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise_error(f"{what}: bounds must be ints, but got {type(v).__name__}.", _stack.capture())
        values.append(int(v))
    lo, opt, hi = values
    if lo < 0:
        raise_error(f"{what}: the minimum {lo} is negative.", _stack.capture(), ["Dimension sizes are >= 0."])
    if not lo <= opt <= hi:
        raise_error(f"{what}: bounds (min={lo}, opt={opt}, max={hi}) must satisfy min <= opt <= max.", _stack.capture())
    return lo, opt, hi


@public_api(document_under="compile")
class NamedDimension:
    """A dynamic dimension with a name and bounds. Use it in the shape of one or more
    :class:`InputInfo` s: every dim that uses it (or another NamedDimension of the same name) must
    have the same size at run time, and calling an executable with sizes that differ is an error.

    Args:
        name: The name of the dimension.
        min: The smallest size allowed.
        opt: The size to optimize for.
        max: The largest size allowed.

    .. code-block:: python

        batch = tp.NamedDimension("batch", 1, 4, 8)
        assert batch.bounds == (1, 4, 8)
        x_info = tp.InputInfo((batch, 16), dtype=tp.float32)
        y_info = tp.InputInfo((batch,), dtype=tp.float32)
        assert x_info.dimension_names == {0: "batch"} and y_info.shape_bounds.max == (8,)
    """

    __slots__ = ("name", "bounds")

    def __init__(self, name: str, min: int, opt: int, max: int) -> None:  # noqa: A002
        if not isinstance(name, str) or not name:
            raise_error(f"tripy.NamedDimension: name must be a non-empty string, but got {name!r}.", _stack.capture())
        self.name: str = name
        self.bounds: Tuple[int, int, int] = check_bounds((min, opt, max), f"tripy.NamedDimension('{name}')")

    @property
    def min(self) -> int:
        return self.bounds[0]

    @property
    def opt(self) -> int:
        return self.bounds[1]

    @property
    def max(self) -> int:
        return self.bounds[2]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedDimension) and (self.name, self.bounds) == (other.name, other.bounds)

    def __hash__(self) -> int:
        return hash((self.name, self.bounds))

    def __repr__(self) -> str:
        return f"NamedDimension({self.name!r}, min={self.bounds[0]}, opt={self.bounds[1]}, max={self.bounds[2]})"
