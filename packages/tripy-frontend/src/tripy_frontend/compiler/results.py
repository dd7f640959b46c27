"""The stored data of a computed result (eager evaluation, compiled calls).

``ResultStorage`` is a ``Storage`` op to everything else (``isinstance``, traces, printing) with a
constructor for the hot paths that turn results into tensors: like every single-output op it holds its
output weakly (see ``BaseTraceOp.outputs``), so dropping the last user of a result frees tensor, op and
buffer at once, without waiting for the cycle collector.
"""

from __future__ import annotations

import weakref
from typing import Any, Tuple

from tripy_flatir import dtypes
from tripy_flatir.device import device as Device

from tripy_trace.ops.storage import Storage
from tripy_trace.tensor import TraceTensor


class ResultStorage(Storage):
    """A ``Storage`` op made from a result buffer, for an existing output tensor."""

    __slots__ = ()

    def __init__(self, output: TraceTensor, data: Any, shape: Tuple[int, ...], dtype: dtypes.dtype,
                 device: Device) -> None:  # noqa: D107 (fields as in Storage; one output)
        self.inputs = []
        self._out = _weak(output)
        self.data = data
        self.shape = shape
        self.dtype = dtype
        self.device = device


_weak = weakref.ref
