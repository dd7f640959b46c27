"""Device buffers: upload, download, metadata. Buffers are opaque to the layers above."""

from __future__ import annotations

import ctypes
import functools
from typing import Any, Optional

import numpy as np

from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException
from tripy_flatir.sharding import Layout
from tripy_backend import _xla
from tripy_backend.devices import platform
from tripy_backend.launch import Padded


def to_device(array: np.ndarray, device: Device) -> Any:
    """Copy host data into a new device buffer."""
    if not (type(array) is np.ndarray and array.flags.c_contiguous):
        # reshape: np.ascontiguousarray turns a rank-0 array into shape (1,)
        array = np.ascontiguousarray(array).reshape(array.shape)
    return _xla.to_device(array, platform(device), device.index)


def to_cpu(array: np.ndarray) -> Any:
    """``to_device(array, CPU)`` for a row-major (C-contiguous) ndarray, with the device looked up once: the
    path of ``tp.Tensor(numpy_array)``. It copies, like ``to_device``."""
    global _to_cpu
    if _to_cpu is None:
        _to_cpu = _xla.copier("cpu", 0)
    return _to_cpu(array)


_to_cpu: Any = None


def cpu_dlpack(buffer: Any) -> Any:
    """A DLPack capsule sharing a CPU buffer's memory (the consumer owns it), or None for other buffers."""
    return _xla.cpu_dlpack(buffer)


def to_numpy(buffer: Any) -> np.ndarray:
    """The buffer's data as a NumPy array (zero-copy on the CPU where possible; a buffer split across devices is
    gathered)."""
    try:
        return np.asarray(buffer)
    except Exception:
        if _xla.is_sharded(buffer) and not _xla.is_local(buffer):
            raise TripyException(
                "This tensor is split across the devices of several processes, and this process "
                "holds only its own pieces of it, so it cannot be read whole here. Make the program "
                "return what each process needs whole (e.g. a reduction over the split dim), or "
                "gather it in the program."
            ) from None
        raise


def from_dlpack(obj: Any) -> np.ndarray:
    """Read a CPU DLPack producer (torch, jax, ...) through the runtime's DLPack importer, which knows every
    dtype tripy has (NumPy's ``from_dlpack`` refuses bfloat16, float8 and int4). Raises ValueError (with the
    importer's reason) for data it cannot read, e.g. non-row-major strides or memory on another device."""
    return np.asarray(shared_cpu_buffer(obj))


def shared_cpu_buffer(obj: Any) -> Any:
    """A CPU buffer over the memory of a DLPack producer, without a copy. Raises ValueError (with the importer's
    reason) for data the runtime cannot take as it is: another device, strides, a dtype it lacks."""
    try:
        return _xla.from_dlpack(obj.__dlpack__())
    except Exception as e:  # the producer's or the importer's own exception types
        raise ValueError(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__) from None


def release_freed_memory() -> bool:
    """Ask the C allocator to return the memory it holds free to the system (glibc's ``malloc_trim``). After
    programs are freed, glibc keeps their memory in its arenas, and under a stream of new programs those
    grow in small pieces that later allocations do not fill exactly. False where the C library has no such
    call (macOS, musl): there it is a no-op."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.lru_cache(maxsize=None)
def _malloc_trim() -> Optional[Any]:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None


def to_devices(array: np.ndarray, layout: Layout, device: Device) -> Any:
    """Copy host data into buffers on several devices, split as `layout` says (a ``tripy_flatir.sharding.Layout``
    over the first devices of `device`'s platform)."""
    return _xla.put_sharded(np.asarray(array), platform(device), layout)


def has_layout(buffer: Any, layout: Layout, device: Device) -> bool:
    """Whether `buffer` is split over devices exactly as `layout` says."""
    return _xla.has_layout(buffer, platform(device), layout)


def is_sharded(buffer: Any) -> bool:
    """Whether `buffer` spans several devices (``to_numpy`` gathers it)."""
    return _xla.is_sharded(buffer)


def device_count(device: Device) -> int:
    """How many devices `device`'s platform has (in all processes)."""
    return _xla.device_count(platform(device))


def is_deferred(buffer: Any) -> bool:
    """Whether `buffer`, a program's result, is deferred (a bounded program's padded output): ``materialize()``
    gives it as a buffer of its own (a copy) when a consumer needs one; ``to_numpy()`` reads it without that."""
    return buffer.__class__ is Padded
