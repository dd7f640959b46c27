"""Data types. Each dtype is a class (as in nvtripy), shared by every layer.

``tp.float32`` is a class whose metaclass is ``tp.dtype``, so ``isinstance(tp.float32, tp.dtype)`` holds,
and the category classes ``tp.floating`` and ``tp.integer`` are its bases::

    issubclass(tp.float16, tp.floating)   # True
    issubclass(tp.int8, tp.integer)       # True

Each dtype exists once: compare with ``==`` or ``is``.
"""

from __future__ import annotations

import builtins
from typing import Any, Callable, Optional

import ml_dtypes
import numpy as np


class dtype(type):
    """The type of every tripy data type (``tp.float32``, ``tp.int8``, ...): a metaclass, as in nvtripy.

    .. code-block:: python

        assert isinstance(tp.float32, tp.dtype)
        assert issubclass(tp.float32, tp.floating)
        assert tp.float32.itemsize == 4 and tp.float32.shortname == "f32"
    """

    name: str
    """The human-readable name, e.g. ``"float32"``."""
    shortname: str
    """A short name, e.g. ``"f32"``."""
    itemsize: float
    """Bytes per element (``0.5`` for int4)."""
    numpy_dtype: Any
    is_floating: builtins.bool
    is_integer: builtins.bool
    _mlir: Optional[Callable[[], Any]]

    def mlir_type(cls) -> Any:
        """The MLIR element type (needs an active MLIR context)."""
        assert cls._mlir is not None, f"{cls.name} is a dtype category, not an element type"
        return cls._mlir()

    def __repr__(cls) -> str:
        return cls.name

    __str__ = __repr__


class _BaseDtype(metaclass=dtype):
    name = "BaseDtype"
    shortname = ""
    itemsize = -1
    numpy_dtype = None
    is_floating = False
    is_integer = False
    _mlir = None


_BaseDtype.__module__ = __name__


class integer(_BaseDtype):
    """The category of all integer data types: ``issubclass(tp.int32, tp.integer)``."""

    name = "integer"
    is_integer = True


class floating(_BaseDtype):
    """The category of all floating-point data types: ``issubclass(tp.float16, tp.floating)``."""

    name = "floating"
    is_floating = True


def _make(
    name: str, shortname: str, base: type, itemsize: float, numpy_dtype: Any, doc: str, mlir: Callable[[], Any]
) -> dtype:
    cls = dtype(
        name,
        (base,),
        {
            "name": name,
            "shortname": shortname,
            "itemsize": itemsize,
            "numpy_dtype": np.dtype(numpy_dtype),
            "_mlir": staticmethod(mlir),
            "__doc__": doc,
            "__module__": __name__,
            "__qualname__": name,
        },
    )
    return cls


def _ir() -> Any:
    from jax.extend.mlir import ir

    return ir


float32 = _make("float32", "f32", floating, 4, np.float32, "32-bit floating point", lambda: _ir().F32Type.get())
float16 = _make("float16", "f16", floating, 2, np.float16, "16-bit floating point", lambda: _ir().F16Type.get())
bfloat16 = _make(
    "bfloat16", "bf16", floating, 2, ml_dtypes.bfloat16, "16-bit brain-float", lambda: _ir().BF16Type.get()
)
float8 = _make(
    "float8",
    "f8",
    floating,
    1,
    ml_dtypes.float8_e4m3fn,
    "8-bit floating point (E4M3)",
    lambda: _ir().Float8E4M3FNType.get(),
)
int4 = _make(
    "int4", "i4", integer, 0.5, ml_dtypes.int4, "4-bit signed integer", lambda: _ir().IntegerType.get_signless(4)
)
int8 = _make("int8", "i8", integer, 1, np.int8, "8-bit signed integer", lambda: _ir().IntegerType.get_signless(8))
int32 = _make("int32", "i32", integer, 4, np.int32, "32-bit signed integer", lambda: _ir().IntegerType.get_signless(32))
int64 = _make("int64", "i64", integer, 8, np.int64, "64-bit signed integer", lambda: _ir().IntegerType.get_signless(64))
bool = _make("bool", "b", _BaseDtype, 1, np.bool_, "Boolean", lambda: _ir().IntegerType.get_signless(1))  # noqa: A001

ALL_DTYPES: tuple[dtype, ...] = (float32, float16, bfloat16, float8, int4, int8, int32, int64, bool)
FLOATING: tuple[dtype, ...] = tuple(d for d in ALL_DTYPES if d.is_floating)
INTEGER: tuple[dtype, ...] = tuple(d for d in ALL_DTYPES if d.is_integer)

_FROM_NUMPY = {d.numpy_dtype: d for d in ALL_DTYPES}


def from_numpy(np_dtype: Any) -> dtype | None:
    """The tripy dtype for a NumPy dtype, or None if tripy has no such type."""
    return _FROM_NUMPY.get(np.dtype(np_dtype))


def by_name(name: str) -> dtype | None:
    return next((d for d in ALL_DTYPES if d.name == name), None)
