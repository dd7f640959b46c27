"""Resident memory stays flat under repeated work, and a big tensor's memory returns when it is dropped
(scripts/memory_check.py, in a fresh process). Counts scaled down to seconds: 2,000 eager evaluations, 500
executable calls, 400 evaluations at new shapes (each compiles a program, ~10-60 ms here) with the eager program
cache at 8 entries so that they evict, and a range executable called at each of 64 sizes. `uv run python
scripts/memory_check.py` runs the full check (10,000 new shapes with the default cache; figures in
docs/guides/reliability.rst). A compiled program holds ~170 KB, so keeping evicted ones would add ~30 MB here."""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "memory_check.py")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads resident memory from /proc")
def test_resident_memory_is_flat_and_big_tensors_return_their_memory():
    done = subprocess.run(
        [
            sys.executable,
            SCRIPT,
            "--eager",
            "2000",
            "--new-shapes",
            "400",
            "--calls",
            "500",
            "--cache-size",
            "8",
            "--range-max",
            "64",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["eager_growth_mb"] < 8, report
    assert report["new_shapes_plateau_growth_mb"] < 8, report  # shapes 200 -> 400, the cache turned over
    assert report["range_sweep_growth_mb"] < 2, report  # (per sweep of 64 calls: a leak of 30 KB a call fails)
    assert report["calls_growth_mb"] < 8, report
    for what in ("big_tensor", "big_result"):
        assert report[f"{what}_held_mb"] > 150, report  # the measurement sees a 200 MB tensor...
        assert report[f"{what}_left_mb"] < 20, report  # ...and its memory comes back when it is dropped


def test_an_evicted_program_goes_at_once_with_its_compiled_code():
    """Nothing keeps an evicted eager program alive (no reference cycle waiting for the cycle collector), so its
    compiled code goes when the cache lets go of it."""
    import gc
    import weakref

    import numpy as np

    import tripy as tp
    from tripy_frontend import eager

    old = eager.PROGRAM_CACHE.capacity
    gc.disable()
    try:
        eager.PROGRAM_CACHE.capacity = 1
        np.from_dlpack(tp.exp(tp.ones((5, 3))) * 3.0)
        program = weakref.ref(next(iter(eager.PROGRAM_CACHE._items.values())))
        np.from_dlpack(tp.exp(tp.ones((6, 3))) * 3.0)  # another shape: evicts the first program
        assert program() is None
    finally:
        gc.enable()
        eager.PROGRAM_CACHE.capacity = old


def test_the_cache_capacity_is_configurable_and_checked():
    import pytest as _pytest

    from tripy_backend import ProgramCache

    cache = ProgramCache(capacity=3)
    for k in range(3):
        cache.put(k, object())
    cache.capacity = 1  # lowering it evicts the least recently used at once
    assert len(cache) == 1 and 2 in cache and cache.evictions == 2
    for bad in (-1, 1.5, "8"):
        with _pytest.raises(ValueError, match="whole number of programs"):
            cache.capacity = bad


def test_a_bad_cache_size_in_the_environment_is_a_clear_error():
    code = "import tripy as tp; tp.ones((2,)).eval()"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TRIPY_PROGRAM_CACHE_SIZE": "lots"},
    )
    assert done.returncode != 0
    assert "TRIPY_PROGRAM_CACHE_SIZE='lots': expected a whole number of programs" in done.stderr
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import tripy as tp; from tripy_frontend import eager; "
            "tp.ones((2,)).eval(); print(eager.PROGRAM_CACHE.capacity)",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TRIPY_PROGRAM_CACHE_SIZE": "7"},
    )
    assert done.stdout.strip() == "7", done.stderr
