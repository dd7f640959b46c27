"""Placeholders for module parameters that have no value yet.

A layer's constructor knows the shape and dtype of each parameter but not its value, which usually
comes from ``load_state_dict``. Until then the attribute holds a placeholder: it has a shape and a
dtype (so state dicts can be checked against it) but no data, and calling the module raises an error
naming every parameter that was never set. Once set, a parameter is a plain ``tp.Tensor``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, cast

import numpy as np

from tripy_flatir import dtypes
from tripy_frontend.tensor import Tensor


class ParameterBase:
    """A parameter slot without a value: only its expected shape (None if not known) and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Optional[Sequence[int]], dtype: dtypes.dtype) -> None:
        self.shape: Optional[Tuple[int, ...]] = None if shape is None else tuple(int(d) for d in shape)
        self.dtype = dtype

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    def __repr__(self) -> str:
        shape = "unknown" if self.shape is None else list(self.shape)
        return f"{type(self).__name__}(shape={shape}, dtype={self.dtype})"

    __str__ = __repr__


class DefaultParameter(ParameterBase):
    """A required parameter that has not been set yet."""

    __slots__ = ()


class OptionalParameter(ParameterBase):
    """A parameter that may stay unset (e.g. a quantization scale that is only needed in some modes).
    ``load_state_dict`` does not report it as missing."""

    __slots__ = ()


def unset(shape: Optional[Sequence[int]], dtype: dtypes.dtype) -> Tensor:
    """A required parameter's slot (a DefaultParameter), typed as the Tensor the attribute holds once set, so
    type checkers see ``layer.weight`` as a Tensor (as PyTorch types a layer's weight)."""
    return cast(Tensor, DefaultParameter(shape, dtype))


def unset_optional(shape: Optional[Sequence[int]], dtype: dtypes.dtype) -> Tensor:
    """An optional parameter's slot (an OptionalParameter), typed likewise."""
    return cast(Tensor, OptionalParameter(shape, dtype))


def static_shape(value: Any) -> Optional[Tuple[int, ...]]:
    """The shape of a parameter or candidate value (-1 where only known at run time), None if unknown."""
    if isinstance(value, ParameterBase):
        return value.shape
    if isinstance(value, Tensor):
        return tuple(value.trace_tensor.shape)
    if isinstance(value, np.ndarray):
        return tuple(value.shape)
    return None
