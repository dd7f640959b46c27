"""Tensors that share the memory of data another library keeps: an imported model's weights, which stay in the
PyTorch model (``tp.from_torch``), enter tripy through DLPack without a copy."""

from __future__ import annotations

from typing import Any

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir.device import CPU
from tripy_backend import memory
from tripy_trace.ops.storage import Storage
from tripy_frontend.tensor import Tensor


def shared_tensor(data: Any) -> Tensor:
    """A tensor over the memory of `data`, a row-major CPU DLPack producer (a torch tensor), without a copy; other
    data (another device, strides, a dtype tripy lacks, memory XLA cannot use as it is) is copied as by
    ``tp.Tensor(data)``. The caller promises not to change `data` while the tensor lives: tripy's tensors are
    values, and a program may read the memory at any time."""
    try:
        buffer = memory.shared_cpu_buffer(data)
    except ValueError:
        return Tensor(data)
    dtype = dtypes.from_numpy(np.dtype(buffer.dtype)) if buffer.dtype is not None else None
    if dtype is None:
        return Tensor(data)
    tensor = Tensor.__new__(Tensor)
    tensor.trace_tensor = Storage.tensor_of(buffer, tuple(buffer.shape), dtype, CPU, None)
    return tensor
