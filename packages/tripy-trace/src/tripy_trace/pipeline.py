"""The lowering pipeline: Trace -> FlatIR -> verified StableHLO module, logging each IR when asked to.

Eager evaluation and ``tp.compile`` both lower through ``lower()``; the backend compiles what it returns.
"""

from __future__ import annotations

import time
from typing import Any, Tuple

from tripy_flatir.function import FlatIRFunction
from tripy_flatir.logging import logger
from tripy_trace.trace import Trace


def lower(trace: Trace) -> Tuple[FlatIRFunction, Any]:
    """Trace -> (FlatIR function, verified MLIR module). The module's ops carry locations naming their
    FlatIR tensors and the user's source lines (see ``tripy_flatir.locations``)."""
    logger.log("trace", lambda: f"==== Trace IR ====\n{trace}\n")
    start = time.perf_counter()
    flat = trace.to_flat_ir()
    logger.log("flat_ir", lambda: f"==== Flat IR ====\n{flat}\n")
    module = flat.to_mlir()
    logger.log("mlir", lambda: f"==== MLIR ====\n{module}")
    logger.log("timing", lambda: f"lowered in {time.perf_counter() - start:.4f} s")
    return flat, module
