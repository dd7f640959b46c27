"""The stored data of a compiled call's results, without a reference cycle.

A trace tensor points at its producer and a trace op lists its outputs, so every tensor and its op
form a cycle that only Python's cycle collector can free. For results of a compiled call, which a
loop makes and drops by the thousand, that defers freeing their device buffers to the collector
and makes it run often. ``ResultStorage`` holds its output weakly instead: the result tensor owns
its op (through ``producer``), nothing owns the tensor but its users, and dropping the last user
frees tensor, op and buffer at once.

The op is an ordinary ``Storage`` to everything else (``isinstance``, traces, printing): ``outputs``
is a list with the output in it whenever the op is reachable from that output.
"""

from __future__ import annotations

import weakref
from typing import Any, List, Tuple

from tripy_flatir import dtypes
from tripy_flatir.device import device as Device

from tripy_trace.ops.storage import Storage
from tripy_trace.tensor import TraceTensor


class ResultStorage(Storage):
    """A ``Storage`` op whose output is held weakly (its output holds the op)."""

    def __init__(self, output: TraceTensor, data: Any, shape: Tuple[int, ...], dtype: dtypes.dtype,
                 device: Device) -> None:  # noqa: D107 (fields as in Storage; one output)
        self.inputs = []
        self._output = weakref.ref(output)
        self.data = data
        self.shape = shape
        self.dtype = dtype
        self.device = device

    @property  # type: ignore[override]
    def outputs(self) -> List[TraceTensor]:
        out = self._output()
        return [out] if out is not None else []

    @outputs.setter
    def outputs(self, value: List[TraceTensor]) -> None:
        assert len(value) == 1, "a stored result has exactly one output"
        self._output = weakref.ref(value[0])
