"""Shared test fixtures.

`eager_or_compiled` runs an end-to-end test twice: once in eager mode and once through tp.compile,
so every op is checked in both modes against the same NumPy expectation. In compiled mode it also
runs the function eagerly and checks that both modes agree (dtype, shape and values).
`logged(fn)` gives fn's result and what the 'compile' log topic printed while it ran.
Every test leaves ``tp.logger``'s settings as it found them (``_logger_as_found``) and no compile running in the
background (``_background_done``), so no test depends on which tests ran before it in the same process, which
varies when pytest-xdist spreads them over workers.

The folders in `REQUIRED` hold tests that need optional dependencies, which a script installs into the workspace's
environment. Without them their modules skip (`pytest.importorskip`), unless the folder's environment variable is 1
(CI sets it): then a skipped module of the folder fails the run, so that CI cannot pass without running them.
"""

from __future__ import annotations

import io
import os

from typing import Any, Callable, Dict, Iterator, List

import numpy as np
import pytest

from tripy_flatir.logging import logger

try:  # (a layer's tests run with that layer and the ones below it installed: flatir's without the backend)
    from tripy_backend import background
except ImportError:  # pragma: no cover
    background = None  # type: ignore[assignment]


# folder under tests/ -> (the environment variable that requires its tests, what they are, what installs their needs)
REQUIRED = {
    "importers": ("TRIPY_REQUIRE_IMPORTER_TESTS", "importer", "scripts/importer-deps"),
    "kernels": ("TRIPY_REQUIRE_KERNELS_TESTS", "kernels", "scripts/kernels-deps"),
    "ray": ("TRIPY_REQUIRE_RAY_TESTS", "Ray", "scripts/ray-deps"),
}
_required_skipped: Dict[str, List[str]] = {}  # folder -> its skipped modules, where they are required


def pytest_collectreport(report: Any) -> None:
    parts = report.nodeid.split("/")
    folder = parts[1] if len(parts) > 2 and parts[0] == "tests" else ""
    if report.skipped and folder in REQUIRED and os.environ.get(REQUIRED[folder][0]) == "1":
        _required_skipped.setdefault(folder, []).append(report.nodeid)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    for folder, skipped in _required_skipped.items():
        env_var, what, script = REQUIRED[folder]
        print(f"\n{env_var}=1, but these {what} tests were skipped (run {script}): {', '.join(skipped)}")
        session.exitstatus = 1


@pytest.fixture(autouse=True)
def _logger_as_found() -> Iterator[None]:
    verbosity, stream, color = logger.verbosity, logger.stream, logger.enable_color
    yield
    logger.verbosity, logger.stream, logger.enable_color = verbosity, stream, color


@pytest.fixture(autouse=True)
def _background_done(_logger_as_found: None) -> Iterator[None]:
    """After each test, its executables' background compiles are done (before the logger is restored): they
    neither log into nor compile during the next test."""
    yield
    if background is not None:
        background.wait_all()


def _as_numpy(t: Any) -> np.ndarray:
    array = np.asarray(t)
    if array.dtype.kind == "V" or array.dtype.name in ("bfloat16", "float8_e4m3fn", "int4"):
        array = array.astype(np.float64)
    return array


def _assert_agree(compiled: Any, eager: Any) -> None:
    import tripy as tp

    if isinstance(eager, tp.Tensor):
        assert isinstance(compiled, tp.Tensor), f"compiled mode returned {type(compiled).__name__}, eager a Tensor"
        compiled, eager = (compiled,), (eager,)
    assert len(compiled) == len(eager), f"compiled mode returned {len(compiled)} outputs, eager {len(eager)}"
    for i, (c, e) in enumerate(zip(compiled, eager)):
        assert c.dtype == e.dtype, f"output {i}: compiled dtype {c.dtype} != eager dtype {e.dtype}"
        cn, en = _as_numpy(c), _as_numpy(e)
        assert cn.shape == en.shape, f"output {i}: compiled shape {cn.shape} != eager shape {en.shape}"
        if c.dtype in (tp.float32,):
            np.testing.assert_allclose(cn, en, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=f"output {i}")
        elif c.dtype in (tp.float16, tp.bfloat16, tp.float8):
            np.testing.assert_allclose(cn, en, rtol=2e-2, atol=1e-3, equal_nan=True, err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(cn, en, err_msg=f"output {i}")


def _compile_and_run(func: Callable[..., Any], *args: Any) -> Any:
    """Compile `func` with each tensor argument as a (static-shape) runtime input, run it, check it
    against eager mode, and return the compiled result."""
    import tripy as tp

    if not hasattr(tp, "compile"):
        pytest.skip("compiled mode is not available")
    # DimensionSizes stay baked in: they are shape values, not data inputs.
    tensor_positions = [
        i for i, a in enumerate(args) if isinstance(a, tp.Tensor) and not isinstance(a, tp.DimensionSize)
    ]
    infos = [tp.InputInfo(tuple(int(d) for d in args[i].shape), args[i].dtype) for i in tensor_positions]

    def wrapper(*tensors: Any) -> Any:
        full = list(args)
        for pos, t in zip(tensor_positions, tensors):
            full[pos] = t
        return func(*full)

    exe = tp.compile(wrapper, args=infos)
    compiled = exe(*[args[i].eval() for i in tensor_positions])
    eager = func(*args)
    _assert_agree(compiled, eager)
    if isinstance(eager, list):
        compiled = list(compiled)
    return compiled


@pytest.fixture(params=["eager", "compiled"])
def eager_or_compiled(request: Any) -> Callable[..., Any]:
    """Call as ``eager_or_compiled(func, *args)``: tensor args become runtime inputs when compiled."""
    if request.param == "eager":
        return lambda func, *args: func(*args)
    return _compile_and_run


def _compile_log(fn: Callable[[], Any]) -> Any:
    """(fn(), what the 'compile' log topic printed while it ran)."""
    import tripy as tp

    old, tp.logger.stream = tp.logger.stream, io.StringIO()
    try:
        with tp.logger.use_verbosity("compile"):
            result = fn()
        return result, tp.logger.stream.getvalue()
    finally:
        tp.logger.stream = old


@pytest.fixture
def logged() -> Callable[[Callable[[], Any]], Any]:
    """``logged(fn)``: fn's result and what the 'compile' log topic printed while it ran."""
    return _compile_log
