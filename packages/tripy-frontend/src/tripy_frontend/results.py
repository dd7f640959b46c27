"""A compiled call's results as new tensors (``new_tensor``, which the generated fast path in
``compiler/fast_call.py`` calls too).

Each result is a ``ResultStorage`` op (``tripy_trace.ops.storage``): stored data, held weakly by its tensor's
producer link so that dropping the tensor frees the buffer at once. A result the backend gives deferred (a
bounded program's dynamic output) is a ``DeferredStorage``, made a buffer of its own when first needed. (Eager
evaluation stores each result in the tensor that asked for it: ``tripy_trace.ops.storage.store_results``.)
"""

from __future__ import annotations

from typing import Any, Tuple

from tripy_backend import memory
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_trace.ops.storage import DeferredStorage, ResultStorage
from tripy_trace.tensor import TraceTensor
from tripy_frontend.tensor import Tensor

_new_tensor = object.__new__
_is_deferred = memory.is_deferred


def new_sharded_tensor(buffer: Any, shape: Tuple[int, ...], dtype: Any, device: Any, site: Any) -> Tensor:
    """A sharded program's call: a new tensor holding `buffer`, which may span several devices."""
    if not memory.is_sharded(buffer):
        return new_tensor(buffer, shape, dtype, device, site)
    tt = TraceTensor(None, site, shape, dtype, device)
    tt.producer = ShardedStorage(tt, buffer, shape, dtype, device)
    out = _new_tensor(Tensor)
    out.trace_tensor = tt
    return out  # type: ignore[no-any-return]


def new_tensor(buffer: Any, shape: Tuple[int, ...], dtype: Any, device: Any, site: Any) -> Tensor:
    """A compiled call: a new tensor holding `buffer`, created at the call `site` (a StackInfo)."""
    tt = TraceTensor(None, site, shape, dtype, device)
    if _is_deferred(buffer):  # (a bounded program's dynamic output): made a buffer of its own when first needed
        tt.producer = DeferredStorage(tt, buffer, shape, dtype, device)
    else:
        tt.producer = ResultStorage(tt, buffer, shape, dtype, device)
    out = _new_tensor(Tensor)
    out.trace_tensor = tt
    return out  # type: ignore[no-any-return]
