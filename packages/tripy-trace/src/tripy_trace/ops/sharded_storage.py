"""Stored data split across several devices (one buffer per device, as one array of the backend's).

A ``Storage`` to everything that only reads data (printing, ``np.from_dlpack``, which gather it), but its own
kind in a trace's structural key: eager programs run on one device, and eager evaluation refuses a sharded
input (see ``tripy_frontend.eager``) instead of running a one-device program on it. ``tp.compile`` passes it to
an SPMD program split as ``layout`` says (a ``tripy_flatir.sharding.Layout``; None for a sharded program's
result, which is split as XLA's partitioner chose)."""

from __future__ import annotations

from typing import Any, ClassVar, Optional, Tuple

from tripy_trace.ops.base import intern_key
from tripy_trace.ops.storage import ResultStorage
from tripy_trace.tensor import TraceTensor


class ShardedStorage(ResultStorage):
    __slots__ = ("layout",)
    holds_buffer: ClassVar[bool] = False  # (one buffer per device: placed on the mesh as a program reads it)

    def __init__(
        self,
        output: TraceTensor,
        data: Any,
        shape: Tuple[int, ...],
        dtype: Any,
        device: Any,
        layout: Optional[Any] = None,
    ) -> None:  # noqa: D107
        super().__init__(output, data, shape, dtype, device)
        self.layout = layout

    def cache_key(self) -> tuple:
        return (ShardedStorage,)

    def key_id(self) -> int:
        o = self.outputs[0]
        return intern_key(((ShardedStorage,), 0, 1, (o.shape, o.dtype, o.device.kind, o.device.index)))

    def __str__(self) -> str:
        split = (
            f", sharding={self.layout.spec} over mesh {dict(zip(self.layout.axis_names, self.layout.mesh_shape))}"
            if self.layout is not None
            else ", sharded"
        )
        return (
            f"{self.outputs[0].name} = storage(shape={list(self.shape)}, dtype={self.dtype}, "
            f"device={self.device}{split})"
        )
