"""Shared pieces of the benchmarks: timing that is fair under noise, peers, and result rows.

Timing: every implementation of a workload is run in the same process, *interleaved* (one batch of
each per round, the order rotated every round), and the median over rounds is reported, so a noisy
machine (shared cores, frequency changes) affects all of them alike.
"""

from __future__ import annotations

import dataclasses
import importlib
import statistics
import time
from typing import Any, Callable, Dict, List, Optional


@dataclasses.dataclass
class Row:
    """One line of the results table.

    `tripy` and `peers` are seconds per call (None: not measured). `ratio` compares tripy with the
    reference peer as the target is phrased: ``kind="time"`` -> tripy / reference (lower is better);
    ``kind="throughput"`` -> best peer time / tripy time (a fraction of the best peer, higher is better).
    """

    workload: str
    tripy: Optional[float]
    peers: Dict[str, Optional[float]]
    target: str
    reference: Optional[str] = None  # peer the ratio is taken against; None = best (throughput) or absolute
    kind: str = "time"  # "time" | "throughput" | "absolute"
    limit: Optional[float] = None  # the target: max ratio (time), min fraction (throughput), max seconds (absolute)
    note: str = ""
    skipped: Optional[str] = None  # "n/a (reason)" rows
    ratio_text: Optional[str] = None  # shown instead of the computed ratio (e.g. a scaling factor)
    met_override: Optional[bool] = None  # for targets the ratio cannot express

    @property
    def ratio(self) -> Optional[float]:
        if self.skipped or self.tripy is None:
            return None
        if self.kind == "absolute":
            return None
        if self.kind == "throughput":
            times = [t for t in self.peers.values() if t is not None]
            return min(times) / self.tripy if times else None
        ref = self.peers.get(self.reference or "")
        return self.tripy / ref if ref else None

    @property
    def met(self) -> Optional[bool]:
        if self.met_override is not None:
            return self.met_override
        if self.skipped or self.tripy is None or self.limit is None:
            return None
        if self.kind == "absolute":
            return self.tripy <= self.limit
        r = self.ratio
        if r is None:
            return None
        return r <= self.limit if self.kind == "time" else r >= self.limit


def skipped(workload: str, reason: str, target: str = "") -> Row:
    return Row(workload, None, {}, target, skipped=reason)


def interleaved(
    impls: Dict[str, Callable[[], Any]], number: int, rounds: int, warmup: int = 2, settle: float = 0.0
) -> Dict[str, float]:
    """Median seconds per call of each implementation, measured in interleaved batches of `number` calls.

    `settle` > 0 (for multi-threaded workloads): before each batch, one untimed call and a pause of
    `settle` seconds, so the thread pools of the implementation that ran before (XLA's and BLAS's
    workers spin for a while after their work) do not steal the cores from this one.
    """
    for fn in impls.values():
        for _ in range(warmup):
            fn()
    samples: Dict[str, List[float]] = {name: [] for name in impls}
    names = list(impls)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            fn = impls[name]
            if settle:
                time.sleep(settle)
                fn()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples[name].append((time.perf_counter() - start) / number)
    return {name: statistics.median(s) for name, s in samples.items()}


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    """Median wall time of `repeat` single calls (for long-running workloads such as compilation)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def optional_module(name: str) -> Any:
    """Import a peer library if it is installed (PyTorch is optional), else None."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def fmt_time(seconds: Optional[float]) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def capture_timing_log(fn: Callable[[], Any]) -> tuple:
    """Run fn with tripy's "timing" log captured: (result, seconds spent lowering, seconds compiling)."""
    import io

    from tripy_flatir.logging import logger

    stream, old = io.StringIO(), logger.stream
    logger.stream = stream
    try:
        with logger.use_verbosity("timing"):
            result = fn()
    finally:
        logger.stream = old
    lowered = compiled = 0.0
    for line in stream.getvalue().splitlines():
        words = line.split()
        if "lowered in" in line:
            lowered += float(words[-2])
        elif "compiled in" in line:
            compiled += float(words[-2])
    return result, lowered, compiled


def disable_tripy_disk_cache() -> None:
    """Benchmarks of compilation must compile: make sure the persistent cache is off."""
    from tripy_backend import disk_cache

    disk_cache.set_directory(None)
