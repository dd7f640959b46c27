"""``tp.types``: the type aliases nvtripy's signatures use, for annotating user code.

def scale(x: tp.types.TensorLike, n: tp.types.IntLike) -> tp.Tensor: ...
"""

from __future__ import annotations

import numbers
from typing import Sequence, Union

from tripy_frontend.tensor import DimensionSize, Tensor

TensorLike = Union[Tensor, bool, int, float, numbers.Number]  # (the builtins spelled out for type checkers)
"""A tensor or a Python number (which tripy ops broadcast like a rank-0 tensor)."""

IntLike = Union[int, DimensionSize]
"""An int, or a dimension size (``t.shape[i]``), which may only be known at run time."""

ShapeLike = Sequence[IntLike]
"""A shape: a sequence of IntLike."""

__all__ = ["TensorLike", "IntLike", "ShapeLike"]
