"""Data types. One `dtype` object per element type, shared by every layer."""

from __future__ import annotations

import builtins
from typing import Any, Callable

import ml_dtypes
import numpy as np


class dtype:
    """A tripy data type, e.g. ``tp.float32``. Compare with ``==`` or ``is``; each exists once."""

    __slots__ = ("name", "itemsize", "numpy_dtype", "is_floating", "is_integer", "_mlir")

    def __init__(self, name: str, itemsize: float, numpy_dtype: Any, is_floating: builtins.bool, is_integer: builtins.bool,
                 mlir: Callable[[], Any]) -> None:
        self.name = name
        self.itemsize = itemsize
        self.numpy_dtype = np.dtype(numpy_dtype) if numpy_dtype is not None else None
        self.is_floating = is_floating
        self.is_integer = is_integer
        self._mlir = mlir

    def mlir_type(self) -> Any:
        """The MLIR element type (needs an active MLIR context)."""
        return self._mlir()

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:  # pickle as the module-level singleton
        return self.name


def _ir() -> Any:
    from jax.extend.mlir import ir

    return ir


float32 = dtype("float32", 4, np.float32, True, False, lambda: _ir().F32Type.get())
float16 = dtype("float16", 2, np.float16, True, False, lambda: _ir().F16Type.get())
bfloat16 = dtype("bfloat16", 2, ml_dtypes.bfloat16, True, False, lambda: _ir().BF16Type.get())
float8 = dtype("float8", 1, ml_dtypes.float8_e4m3fn, True, False, lambda: _ir().Float8E4M3FNType.get())
int4 = dtype("int4", 0.5, ml_dtypes.int4, False, True, lambda: _ir().IntegerType.get_signless(4))
int8 = dtype("int8", 1, np.int8, False, True, lambda: _ir().IntegerType.get_signless(8))
int32 = dtype("int32", 4, np.int32, False, True, lambda: _ir().IntegerType.get_signless(32))
int64 = dtype("int64", 8, np.int64, False, True, lambda: _ir().IntegerType.get_signless(64))
bool = dtype("bool", 1, np.bool_, False, False, lambda: _ir().IntegerType.get_signless(1))  # noqa: A001

ALL_DTYPES: tuple[dtype, ...] = (float32, float16, bfloat16, float8, int4, int8, int32, int64, bool)
FLOATING: tuple[dtype, ...] = tuple(d for d in ALL_DTYPES if d.is_floating)
INTEGER: tuple[dtype, ...] = tuple(d for d in ALL_DTYPES if d.is_integer)

_FROM_NUMPY = {d.numpy_dtype: d for d in ALL_DTYPES}


def from_numpy(np_dtype: Any) -> dtype | None:
    """The tripy dtype for a NumPy dtype, or None if tripy has no such type."""
    return _FROM_NUMPY.get(np.dtype(np_dtype))


def by_name(name: str) -> dtype | None:
    return next((d for d in ALL_DTYPES if d.name == name), None)
