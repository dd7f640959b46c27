"""Dynamic batching: concurrent infer requests for one model are run as one call along dim 0.

A request waits at most ``max_wait`` seconds for others; requests join one batch while their rows add up to
at most ``max_batch`` (and the executable's range for dim 0) and they agree on everything else (the other
dims and the data types). Others wait for a later batch, in arrival order. One batch runs at a time per
model, in a worker thread, so the event loop keeps answering while it runs; the requests that arrive
meanwhile form the next batch. The batch's outputs are split back along dim 0.

Every batch, a lone request too, runs at exactly ``max_batch`` rows: the gathered rows are padded with copies
of the last one, and the padding's outputs are dropped. XLA:CPU picks a matrix product's kernel and blocking by
its row count, so a row's last bits would otherwise depend on how many requests shared its call; at one fixed
row count a request's result is bitwise the same whatever it was batched with. ``pad=False`` runs each batch at
its gathered size instead (less work at low load, results equal up to the last bits).

A model is batched when every input's dim 0 is dynamic and every output's dim 0 is too, and the server was
started with ``--max-batch`` above 1. Batching assumes each row's result depends only on that row (as for
most inference models); a model that mixes rows must be served without it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, ContextManager, Dict, List, Optional, Sequence, Tuple

import numpy as np

import tripy as tp
from tripy_serve.metrics import ModelMetrics
from tripy_serve.protocol import ServeError, client_message, input_datatypes


def to_numpy(out: tp.Tensor) -> np.ndarray:
    """An output tensor's data, copied out of the executable's buffer (NumPy's array protocol: DLPack has no
    bfloat16)."""
    return np.array(out)


def run(exe: tp.Executable, arrays: Sequence[np.ndarray]) -> List[np.ndarray]:
    """One call of the executable, outputs as arrays."""
    outs = exe(*[tp.Tensor(a) for a in arrays])
    return [to_numpy(o) for o in (outs if isinstance(outs, tuple) else (outs,))]


@dataclass(eq=False)  # (compared by identity: it holds arrays)
class _Request:
    arrays: List[np.ndarray]
    rows: int
    key: Any  # requests with equal keys can share a batch
    future: "asyncio.Future[List[np.ndarray]]"
    arrived: float  # (the event loop's clock)


@dataclass
class Stats:
    """What a model has run: requests, executable calls, and how many calls had each number of rows."""

    inference_count: int = 0
    execution_count: int = 0
    batch_sizes: Dict[int, int] = field(default_factory=collections.Counter)

    def to_json(self) -> Dict[str, Any]:
        return {
            "inference_count": self.inference_count,
            "execution_count": self.execution_count,
            "batch_stats": [{"batch_size": n, "count": c} for n, c in sorted(self.batch_sizes.items())],
        }


class BatchingModel:
    """A served executable: validates requests with the executable's own checks, then runs them batched
    (see the module docstring) or one at a time."""

    def __init__(
        self,
        exe: tp.Executable,
        max_batch: int,
        max_wait: float,
        pad: bool = True,
        metrics: Optional[ModelMetrics] = None,
    ) -> None:
        self.exe = exe
        self.metrics = metrics
        self.pad = pad
        self.names = list(exe.input_infos)
        self.datatypes = input_datatypes(exe)  # (the protocol's names)
        infos = list(exe.input_infos.values())
        dim0_dynamic = all(i.rank >= 1 and i.shape_bounds.min[0] < i.shape_bounds.max[0] for i in infos)
        outputs_dim0 = all(len(o.shape) >= 1 and o.shape[0] == -1 for o in exe.output_infos.values())
        self.max_batch = (
            min([max_batch] + [i.shape_bounds.max[0] for i in infos]) if infos and dim0_dynamic and outputs_dim0 else 1
        )
        self.max_wait = max_wait
        self.stats = Stats()
        self._waiting: List[_Request] = []
        self._arrived = asyncio.Event()
        self._worker: Optional["asyncio.Task[None]"] = None
        self._in_flight = 0
        self._idle = asyncio.Event()  # (set while no request is in flight)
        self._idle.set()

    def observed(self) -> ContextManager[None]:
        """Around an infer request: its metrics (in flight, duration, success or failure), if there are any."""
        return self.metrics.request() if self.metrics is not None else contextlib.nullcontext()

    def parameters(self) -> Dict[str, Any]:
        return {
            "max_batch_size": self.max_batch,
            "max_queue_delay_microseconds": int(self.max_wait * 1e6),
            "dynamic_batching": self.max_batch > 1,
            "padded_to_max_batch": self.pad and self.max_batch > 1,
        }

    def validate(self, arrays: Sequence[np.ndarray]) -> None:
        """Raise ServeError (400) with tripy's message if `arrays` do not fit the executable's inputs."""
        infos = self.exe.input_infos.values()
        if not any(info.dimension_names for info in infos) and all(  # the common case, checked without tensors
            a.dtype == info.dtype.numpy_dtype
            and a.ndim == info.rank
            and all(lo <= n <= hi for n, lo, hi in zip(a.shape, info.shape_bounds.min, info.shape_bounds.max))
            for a, info in zip(arrays, infos)
        ):
            return
        try:  # the executable's own checks, for its message
            self.exe.check_inputs(*[tp.Tensor(a) for a in arrays])
        except tp.TripyException as e:
            raise ServeError(400, client_message(e)) from None

    async def infer(self, arrays: List[np.ndarray]) -> List[np.ndarray]:
        """The outputs for one request's inputs (in the executable's order); a ServeError (400) if they do not fit."""
        self._in_flight += 1
        self._idle.clear()
        try:
            return await self._infer(arrays)
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    async def _infer(self, arrays: List[np.ndarray]) -> List[np.ndarray]:
        self.validate(arrays)
        self.stats.inference_count += 1
        if self.max_batch <= 1:
            rows = arrays[0].shape[0] if arrays and arrays[0].ndim else 1
            self._count(rows)
            if self.metrics is not None:
                self.metrics.queued(0.0)
            return await self._timed(arrays, rows, rows)
        all_rows = {a.shape[0] for a in arrays}
        key: Any = tuple((a.shape[1:], a.dtype.str) for a in arrays) if len(all_rows) == 1 else object()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._waiting.append(_Request(arrays, all_rows.pop() if len(all_rows) == 1 else 0, key, future, loop.time()))
        self._arrived.set()
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._serve())
        return await future

    async def _timed(self, arrays: List[np.ndarray], rows: int, requests_rows: int) -> List[np.ndarray]:
        """One executable call (in a worker thread), its rows and time recorded in the metrics."""
        start = time.perf_counter()
        outs = await asyncio.to_thread(run, self.exe, arrays)
        if self.metrics is not None:
            self.metrics.executed(rows, requests_rows, time.perf_counter() - start)
        return outs

    def _count(self, rows: int) -> None:
        self.stats.execution_count += 1
        self.stats.batch_sizes[rows] += 1

    async def _serve(self) -> None:
        """The batching loop: gather a batch, run it, hand each request its rows; until no request waits (the next
        request starts it again). A model taken out of service keeps no loop, and a request that reached it just
        before (its body still arriving) is answered all the same."""
        loop = asyncio.get_running_loop()
        while True:
            if not self._waiting:
                self._worker = None
                return
            deadline = loop.time() + self.max_wait
            batch = self._gather()
            while sum(r.rows for r in batch) < self.max_batch and loop.time() < deadline:
                self._arrived.clear()
                try:
                    await asyncio.wait_for(self._arrived.wait(), deadline - loop.time())
                except asyncio.TimeoutError:
                    pass
                batch = self._gather()
            for r in batch:
                self._waiting.remove(r)
            await self._run_batch(batch)

    def _gather(self) -> List[_Request]:
        """The waiting requests that join the first one's batch, in arrival order."""
        first = self._waiting[0]
        batch, rows = [first], first.rows
        for r in self._waiting[1:]:
            if r.key == first.key and rows + r.rows <= self.max_batch:
                batch.append(r)
                rows += r.rows
        return batch

    def _batch_arrays(self, batch: List[_Request], rows: int) -> List[np.ndarray]:
        """The batch's inputs, concatenated along dim 0 and, with ``pad``, filled up to ``max_batch`` rows with
        copies of the last row (a request whose inputs disagree on dim 0, ``rows == 0``, runs as it is)."""
        arrays = (
            [np.concatenate(parts) for parts in zip(*(r.arrays for r in batch))] if len(batch) > 1 else batch[0].arrays
        )
        if self.pad and 0 < rows < self.max_batch:
            arrays = [np.concatenate([a, np.repeat(a[-1:], self.max_batch - rows, axis=0)]) for a in arrays]
        return arrays

    async def _run_batch(self, batch: List[_Request]) -> None:
        rows = sum(r.rows for r in batch)
        self._count(rows)
        if self.metrics is not None:
            now = asyncio.get_running_loop().time()
            for r in batch:
                self.metrics.queued(now - r.arrived)
        try:
            arrays = self._batch_arrays(batch, rows)
            call_rows = arrays[0].shape[0] if arrays and arrays[0].ndim else 1
            outs = await self._timed(arrays, call_rows, rows or call_rows)
        except Exception as e:  # every request of the batch gets the failure (the server logs it)
            for r in batch:
                if not r.future.done():
                    r.future.set_exception(e)
            return
        bounds: Tuple[int, ...] = tuple(np.cumsum([r.rows for r in batch])[:-1])
        parts = [np.split(o[:rows] if rows else o, bounds) for o in outs]  # (the padding's rows dropped)
        for i, r in enumerate(batch):
            if not r.future.done():  # (a client that went away cancelled its future)
                r.future.set_result([p[i] for p in parts])

    async def drain(self) -> None:
        """Wait for the requests in flight to be answered (the model is no longer served: new requests cannot
        reach it)."""
        await self._idle.wait()
