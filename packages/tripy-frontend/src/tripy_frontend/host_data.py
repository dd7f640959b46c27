"""What ``tp.Tensor(data)`` copies: user data (Python numbers and lists, NumPy arrays, DLPack and array-protocol
objects) turned into a row-major NumPy array of a tripy dtype, or a report saying why it cannot be."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir.exceptions import raise_error
from tripy_backend import memory
from tripy_frontend.strides import check_row_major


def to_numpy(data: Any, dtype: Optional[dtypes.dtype], info: Any) -> np.ndarray:
    """Turn user data (not a Tensor) into a NumPy array of a tripy dtype (Python data defaults: float32, int32, bool)."""
    array = _from_array_protocols(data, info)
    if array is None:
        array = _from_python(data, dtype, info)
    if dtype is not None:
        if dtype.numpy_dtype is None:
            raise_error(f"Cannot create a tensor of dtype {dtype} from host data.", info)
        if array.dtype.kind == "f" and dtype.is_integer and not np.all(np.isfinite(array)):
            raise_error(f"Cannot convert non-finite values to {dtype}.", info)
        return np.asarray(array, dtype=dtype.numpy_dtype)
    if dtypes.from_numpy(array.dtype) is None:
        hint = {"float64": "float32", "uint8": "int32", "int16": "int32", "uint32": "int64"}.get(array.dtype.name)
        raise_error(
            f"Data type {array.dtype} is not supported by tripy.",
            info,
            [
                f"Convert it first (e.g. array.astype(np.{hint}))"
                if hint
                else "Supported: " + ", ".join(d.name for d in dtypes.ALL_DTYPES)
            ],
        )
    return array


def _from_array_protocols(data: Any, info: Any) -> Optional[np.ndarray]:
    """A NumPy array, DLPack or array-protocol object as an array (row-major); None for other data."""
    if isinstance(data, np.ndarray):
        check_row_major(data, data, info)
        return data
    if hasattr(data, "__dlpack__") and not isinstance(data, (list, tuple)):
        try:
            array = np.from_dlpack(data)
        except Exception:  # a dtype NumPy cannot read (bfloat16, float8, int4): the runtime's importer can
            try:
                array = memory.from_dlpack(data)
            except ValueError as e:
                raise_error(
                    f"Could not read the {type(data).__name__} through DLPack: {e}",
                    info,
                    [
                        "tripy reads DLPack data on the CPU, in row-major (C-contiguous) layout, of a dtype "
                        "tripy has; make the data contiguous first if it is not (e.g. .contiguous() in torch)."
                    ],
                )
        check_row_major(array, data, info)
        return array  # type: ignore[no-any-return]
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        return np.asarray(data)
    return None


def _from_python(data: Any, dtype: Optional[dtypes.dtype], info: Any) -> np.ndarray:
    """Python numbers and (nested) lists as an array: float64 becomes float32, int64 int32 unless `dtype` says."""
    if not isinstance(data, (bool, int, float, list, tuple, np.generic)):
        raise_error(
            f"Cannot make a tensor from an object of type '{type(data).__name__}'.",
            info,
            [
                "Pass a Python number or (nested) list, a NumPy array, or an object supporting DLPack "
                "or the array protocol."
            ],
        )
    try:
        array = np.array(data)
    except ValueError as e:
        raise_error(
            f"Could not make a tensor from the given data: {e}",
            info,
            ["Nested lists must be rectangular (all rows the same length)."],
        )
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if array.dtype == np.int64 and dtype is None:
        if array.size and (array.max() > np.iinfo(np.int32).max or array.min() < np.iinfo(np.int32).min):
            raise_error(
                "Integer data does not fit in int32 (the default for Python ints).", info, ["Pass dtype=tp.int64."]
            )
        return array.astype(np.int32)
    if array.dtype == object:
        raise_error("Could not make a tensor from the given data: it is not a rectangular array of numbers.", info)
    return array
