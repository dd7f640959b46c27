"""Eager evaluation: trace -> FlatIR -> StableHLO -> compile -> run, with compiled programs cached by
a structural key of the trace, so re-evaluating the same graph shape with new data never recompiles."""

from __future__ import annotations

import time
from typing import Any, List, Sequence

from tripy_backend import ProgramCache, compile as backend_compile
from tripy_backend.devices import compiler_name
from tripy_flatir.logging import logger
from tripy_trace.ops.storage import Storage
from tripy_trace.trace import Trace

PROGRAM_CACHE: ProgramCache = ProgramCache(capacity=512)

_IR_TOPICS = ("trace", "flat_ir", "mlir")


def lower(trace: Trace) -> tuple:
    """Trace -> (FlatIR function, verified MLIR module), logging each IR when asked to."""
    logger.log("trace", lambda: f"==== Trace IR ====\n{trace}\n")
    start = time.perf_counter()
    flat = trace.to_flat_ir()
    logger.log("flat_ir", lambda: f"==== Flat IR ====\n{flat}\n")
    module = flat.to_mlir()
    logger.log("mlir", lambda: f"==== MLIR ====\n{module}")
    logger.log("timing", lambda: f"lowered in {time.perf_counter() - start:.4f} s")
    return flat, module


def evaluate(tensors: Sequence[Any]) -> None:
    """Compute `tensors` (frontend Tensors) and turn each into stored data."""
    trace = Trace([t.trace_tensor for t in tensors])
    device = trace.outputs[0].device
    key = (trace.cache_key(), device)
    executable = PROGRAM_CACHE.get(key)
    if executable is None:
        flat, module = lower(trace)
        executable = backend_compile(module, [t.shape for t in trace.inputs], device, flat.error_report)
        PROGRAM_CACHE.put(key, executable)
        logger.log("cache", lambda: f"program cache miss: compiled for {compiler_name(device)}")
    else:
        if any(logger.enabled(t) for t in _IR_TOPICS):
            lower(trace)  # show the IR even when the compiled program is reused
        logger.log("cache", "program cache hit")
    buffers: List[Any] = [t.producer.data for t in trace.inputs]  # type: ignore[union-attr]
    results = executable(buffers)
    for t, buf in zip(trace.outputs, results):
        op = Storage([], [t], data=buf, shape=tuple(buf.shape), dtype=t.dtype, device=t.device)
        t.producer = op
