"""Eager evaluation: "compile this trace, stored data as arguments, cached by structural key".

trace -> FlatIR -> StableHLO (``tripy_trace.pipeline.lower``) -> a backend ``Program``, cached by a
structural key of the trace, so re-evaluating the same graph shape with new data never recompiles; the
program runs on the stored data's buffers and ``store_results`` puts each result in its tensor."""

from __future__ import annotations

import contextlib
import operator
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Dict, Hashable, Iterator, List, NoReturn, Optional, Sequence

from tripy_backend import ProgramCache, compile as backend_compile, plan
from tripy_backend.devices import compiler_name
from tripy_flatir.exceptions import TripyException, raise_error
from tripy_flatir.logging import logger
from tripy_flatir import stack_info
from tripy_trace.ops.constant import Scalar
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_trace.ops.storage import DeferredStorage, Storage, store_results
from tripy_trace.pipeline import lower
from tripy_trace.trace import Trace, signature

DEFAULT_CACHE_SIZE = 512


def _cache_size() -> int:
    """``TRIPY_PROGRAM_CACHE_SIZE``: how many compiled eager programs to keep (docs/guides/reliability.rst)."""
    text = os.environ.get("TRIPY_PROGRAM_CACHE_SIZE", "").strip()
    if not text:
        return DEFAULT_CACHE_SIZE
    if not text.isdigit():
        raise TripyException(
            f"TRIPY_PROGRAM_CACHE_SIZE={text!r}: expected a whole number of programs (0 or more), "
            f"e.g. TRIPY_PROGRAM_CACHE_SIZE=64; unset it for the default ({DEFAULT_CACHE_SIZE})."
        )
    return int(text)


# Eager programs by structural key: a program per graph shape, least recently used out first. Set its capacity
# (``PROGRAM_CACHE.capacity = n``) or TRIPY_PROGRAM_CACHE_SIZE to bound the memory of a process whose shapes vary.
PROGRAM_CACHE: ProgramCache = ProgramCache(capacity=_cache_size())


class _RecordingCache(ProgramCache):
    """A program cache that notes, in order, each program it gives out or takes in: one per eager evaluation."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.ran: List[Any] = []

    def get(self, key: Hashable) -> Optional[Any]:
        program = super().get(key)
        if program is not None:
            self.ran.append(program)
        return program

    def put(self, key: Hashable, value: Any) -> None:
        super().put(key, value)
        self.ran.append(value)


@contextlib.contextmanager
def recorded_programs() -> Iterator[List[Any]]:
    """Evaluate in a program cache of its own while the context lasts, and give the list of the programs that
    evaluations ran, in order (for ``tp.profile`` of a function). Its own cache compiles the programs from the
    graphs evaluated in the context, so their locations are the lines that made those graphs (a program cached
    before serves every graph of its structure, with the lines of the one it was compiled from). The hot path of
    evaluation is unchanged: it reads the cache it finds in this module."""
    global PROGRAM_CACHE
    previous = PROGRAM_CACHE
    cache = _RecordingCache(previous.capacity)
    PROGRAM_CACHE = cache
    try:
        yield cache.ran
    finally:
        PROGRAM_CACHE = previous


_IR_TOPICS = ("trace", "flat_ir", "mlir")
_data_of = operator.attrgetter("producer.data")  # (a program input's buffer)


def evaluate(tensors: Sequence[Any]) -> None:
    """Compute `tensors` (frontend Tensors) and turn each into stored data."""
    outputs = [t.trace_tensor for t in tensors]
    # The cache hit path (a loop re-evaluating one shape of graph): one walk over the graph gives the key
    # and the program's arguments, then one dict lookup and one launch. Everything else is for misses.
    key, inputs = signature(outputs)
    device = outputs[0].device
    key = (key, device.kind, device.index)
    program = PROGRAM_CACHE.get(key)
    verbosity = logger.verbosity
    if program is None or not verbosity.isdisjoint(_IR_TOPICS):
        program = _compile(_checked_trace(outputs, inputs), key, program)
    elif "cache" in verbosity:  # (what logger.log checks first: no call when the topic is off)
        logger.log("program cache hit", "cache")
    try:
        buffers: List[Any] = list(map(_data_of, inputs))
    except AttributeError:  # a runtime input of tp.compile: no value while tracing
        _cannot_evaluate_traced(next(t for t in inputs if getattr(t.producer, "data", None) is None))
    store_results(outputs, program(buffers))


def evaluate_in_background(tensors: Sequence[Any]) -> None:
    """`evaluate`, on a worker thread: each of `tensors` becomes stored data at once, whose buffer is waited for
    where it is first read (a ``DeferredStorage``; an error of the evaluation is raised there). The caller goes
    on meanwhile: ``tp.compile`` lowers its program while its baked-in data is evaluated (the evaluation's
    compile and run let go of the GIL)."""
    outputs = [t.trace_tensor for t in tensors]
    key, inputs = signature(outputs)
    device = outputs[0].device
    key = (key, device.kind, device.index)
    trace = _checked_trace(outputs, inputs)  # (before the outputs' producers change below)
    buffers: List[Any] = list(map(_data_of, inputs))
    cached = PROGRAM_CACHE.get(key)

    def run() -> List[Any]:
        with logger.background():
            program = cached if cached is not None else _compile(trace, key, None)
            return program(buffers)  # type: ignore[no-any-return]

    future = _worker().submit(run)
    for i, t in enumerate(outputs):
        t.producer = DeferredStorage(t, _Pending(future, i), t.shape, t.dtype, t.device)


class _Pending:
    """A result of `evaluate_in_background` (the ``deferred`` of its ``DeferredStorage``)."""

    __slots__ = ("future", "index")

    def __init__(self, future: "Future[List[Any]]", index: int) -> None:
        self.future = future
        self.index = index

    def materialize(self) -> Any:
        return self.future.result()[self.index]

    def to_numpy(self) -> None:
        return None  # (read as a buffer: ``materialize``)


_WORKER: Dict[int, ThreadPoolExecutor] = {}  # process id -> the worker (one thread keeps one MLIR context)
_WORKER_LOCK = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """This process's worker thread (a forked child gets its own: the parent's thread does not run in it)."""
    with _WORKER_LOCK:
        pid = os.getpid()
        if pid not in _WORKER:
            _WORKER.clear()
            _WORKER[pid] = ThreadPoolExecutor(1, thread_name_prefix="tripy-evaluate")
        return _WORKER[pid]


def _checked_trace(outputs: List[Any], inputs: List[Any]) -> Trace:
    """The trace of an eager program (its arguments in the order ``signature`` gives them); an error where it
    reads a runtime input of ``tp.compile`` or sharded data."""
    trace = Trace(outputs, inputs)
    for t in trace.inputs:
        if not isinstance(t.producer, (Storage, Scalar)):  # a runtime input of tp.compile: no value while tracing
            _cannot_evaluate_traced(t)
        if isinstance(t.producer, ShardedStorage):
            _cannot_evaluate_sharded(t)
    return trace


def _compile(trace: Trace, key: Any, cached: Any) -> Any:
    """A cache miss (or IR logging): lower and compile `trace`, and cache the program under `key`."""
    if cached is not None:
        lower(trace)  # show the IR even when the compiled program is reused
        logger.log("program cache hit", "cache")
        return cached
    device = trace.outputs[0].device
    _, module = lower(trace)
    program = backend_compile(
        module,
        [t.shape for t in trace.inputs],
        device,
        optimization_level=plan.EAGER_OPTIMIZATION_LEVEL,
        name="eager evaluation",
    )
    PROGRAM_CACHE.put(key, program)
    logger.log(lambda: f"program cache miss: compiled for {compiler_name(device)}", "cache")
    return program


def _cannot_evaluate_sharded(t: Any) -> NoReturn:

    raise_error(
        "Eager ops run on one device, but this tensor is split across several devices (tripy.shard or a "
        "sharded program's result).",
        stack_info.capture(),
        [
            "Compute with it in a function compiled with tripy.compile, which runs one program on the whole mesh.",
            "Or gather it first: tp.Tensor(np.from_dlpack(t)) is an ordinary tensor on one device.",
        ],
        [t.stack_info],
    )


def _cannot_evaluate_traced(placeholder: Any) -> NoReturn:

    raise_error(
        "Cannot evaluate a tensor while tripy.compile() traces the function: it depends on a runtime input, "
        "whose value is only known when the compiled executable is called.",
        stack_info.capture(),
        [
            "Inside a compiled function, do not print tensors, convert them to Python values (int(), float(), "
            "bool(), .tolist()) or branch on their values in Python.",
            "Sizes of dynamic dims are DimensionSize values: use them directly in tripy ops (reshape, full, "
            "arithmetic) rather than converting them with int().",
        ],
        [placeholder.stack_info],
    )
