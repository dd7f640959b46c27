"""Reading a tensor's value: ``eval``, NumPy and DLPack, Python scalars, printing. These are ``Tensor``'s
methods (its class body names each one); every one of them evaluates the tensor first if it is not yet.
Kept apart from ``tensor.py``, which builds tensors and knows their metadata without evaluating."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir.exceptions import TripyException, raise_error, warn
from tripy_backend import memory
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_trace.ops.storage import PaddedStorage, Storage
from tripy_frontend.compiler.tracing import traced_function
from tripy_frontend.eager import evaluate
from tripy_frontend.tracebacks import strip_tripy_frames

if TYPE_CHECKING:
    from tripy_frontend.tensor import Tensor


def eval(self: Tensor) -> Tensor:  # noqa: A001 (Tensor.eval, nvtripy's name)
    """Compute this tensor's value now (compiling if needed) and return the tensor itself."""
    if not isinstance(self.trace_tensor.producer, Storage):
        try:  # (an API boundary: see tracebacks.py)
            evaluate([self])
        except TripyException as e:
            strip_tripy_frames(e)
            raise
        _warn_if_compiling(self)  # (once it is evaluated: a tensor that cannot be is an error instead)
    return self


def _buffer(self: Tensor) -> Any:
    self.eval()
    producer = self.trace_tensor.producer
    assert isinstance(producer, Storage)
    return producer.data


def _numpy(self: Tensor) -> np.ndarray:
    self.eval()
    producer = self.trace_tensor.producer
    if producer.__class__ is PaddedStorage:  # (read from the padded buffer: no cut needed)
        array = producer.to_numpy()  # type: ignore[union-attr]
        if array is not None:
            return array  # type: ignore[no-any-return]
    return memory.to_numpy(producer.data)  # type: ignore[union-attr]


def tolist(self: Tensor) -> Any:
    """The value as (nested) Python lists of Python scalars."""
    array = self._numpy()
    if self.dtype in (dtypes.bfloat16, dtypes.float8):
        array = array.astype(np.float32)
    return array.tolist()


def __dlpack__(self: Tensor, *args: Any, stream: Any = None, max_version: Any = None, dl_device: Any = None,
               copy: Any = None) -> Any:
    try:  # (an API boundary itself, like eval: np.from_dlpack(t) is how eager results are read)
        buffer = self._buffer()
        if self.trace_tensor.producer.__class__ is ShardedStorage:  # (split across devices: gathered)
            return self._numpy().__dlpack__(*args, stream=stream, max_version=max_version, dl_device=dl_device,
                                            copy=copy)
        if not args and stream is None and copy is not True and (dl_device is None or tuple(dl_device) == (1, 0)):
            capsule = memory.cpu_dlpack(buffer)  # (the common case, NumPy reading a CPU tensor: no detours)
            if capsule is not None:
                return capsule
        return buffer.__dlpack__(*args, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
    except TripyException as e:
        strip_tripy_frames(e)
        raise


def __dlpack_device__(self: Tensor) -> Any:
    return self._buffer().__dlpack_device__()


def __array__(self: Tensor, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
    """NumPy 2's array protocol: ``copy=True`` (``np.array(t)``) returns a new, writeable array;
    ``copy=None`` (``np.asarray(t)``) may share the tensor's memory, read-only; ``copy=False`` shares it
    or raises ValueError when a copy is needed (a different dtype)."""
    array = self._numpy()
    if dtype is not None and np.dtype(dtype) != array.dtype:
        if copy is False:
            raise ValueError(f"Converting a {self.dtype} tensor to {np.dtype(dtype)} needs a copy, but copy=False "
                             f"was given. Use np.asarray(t, dtype) to allow the copy.")
        return array.astype(dtype)  # (a new array, writeable)
    return array.copy() if copy else array


def __bool__(self: Tensor) -> bool:
    array = self._numpy()  # (a static DimensionSize's without evaluating: see its _numpy)
    if array.size != 1:
        raise_error(f"The truth value of a tensor with shape {list(array.shape)} is ambiguous.",
                    self.stack_info, ["Use tripy.any() or tripy.all() to reduce it first."])
    return bool(array.reshape(()))


def __int__(self: Tensor) -> int:  # (DimensionSize has its own)
    return int(self._scalar())


def __float__(self: Tensor) -> float:
    return float(self._scalar())


def __index__(self: Tensor) -> int:
    if self.dtype not in dtypes.INTEGER:
        raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
    return int(self)


def _scalar(self: Tensor) -> Any:
    array = self._numpy()
    if array.size != 1:
        raise_error(f"Only a tensor with one element can be converted to a Python scalar, but this one has "
                    f"shape {list(array.shape)}.", self.stack_info)
    return array.reshape(()).item()


def __repr__(self: Tensor) -> str:
    array = self._numpy()
    if self.dtype in (dtypes.bfloat16, dtypes.float8):
        array = array.astype(np.float32)
    body = np.array2string(array, separator=", ", prefix="    ", threshold=1000, edgeitems=3)
    return (f"tensor(\n    {body},\n    dtype={self.dtype}, loc={self.device}, shape={tuple(array.shape)})")


def _warn_if_compiling(t: Tensor) -> None:
    name = traced_function()
    if name is not None:
        frame = t.stack_info.user_frame if t.stack_info else None
        warn(f"A tensor{f' created at {frame}' if frame else ''} is evaluated while tripy.compile traces "
             f"'{name}': its value is computed now, once, and baked into the executable as a constant.", t.stack_info)
