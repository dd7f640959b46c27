"""Data with non-row-major strides is refused, as nvtripy 0.1.7 refuses it: tp.Tensor reads arrays as they
lie in memory (DLPack), and only row-major (C-contiguous) data can be read that way. The report says how
to make the data contiguous for the library it came from."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from tripy_flatir.exceptions import raise_error

# (module prefix of the producer's type, its name, how to make its data contiguous)
_CONTIGUOUS = [
    ("torch", "PyTorch tensors", "tensor.contiguous() or tensor.clone()"),
    ("jax", "JAX arrays", "jax.numpy.asarray(array) or jax.numpy.copy(array)"),
    ("cupy", "CuPy arrays", "cupy.ascontiguousarray(array) or array.copy(order='C')"),
    ("numpy", "NumPy arrays", "np.ascontiguousarray(array) or array.copy(order='C')"),
]


def check_row_major(array: np.ndarray, data: Any, info: Any) -> None:
    """Refuse `array` (what tp.Tensor read from `data`) unless it is row-major. Strides of dims of size 1 do
    not matter, as in NumPy's C_CONTIGUOUS flag."""
    if array.flags.c_contiguous:
        return
    strides = tuple(s // array.itemsize for s in array.strides)
    hint = next(
        (
            f"For {name}, use {fix} to make the data contiguous before converting it to a tripy tensor."
            for prefix, name, fix in _CONTIGUOUS
            if type(data).__module__.split(".")[0] == prefix
        ),
        "Make the data contiguous (row-major) before converting it to a tripy tensor.",
    )
    raise_error(
        f"Non-canonical strides are not supported for tripy tensors: the {type(data).__name__} has shape "
        f"{list(array.shape)} and strides {list(strides)} (in elements), but row-major data of that shape "
        f"has strides {list(_row_major(array.shape))}.",
        info,
        ["This usually means the data is a view of other data (a transpose, a slice with a step, a broadcast).", hint],
    )


def _row_major(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))
