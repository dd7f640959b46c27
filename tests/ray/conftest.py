"""The Ray integration's tests need Ray (with Ray Data and Ray Serve) and ONNX Runtime: `scripts/ray-deps` installs
them into the workspace's environment. Without them these tests are skipped (`pytest.importorskip`), unless
TRIPY_REQUIRE_RAY_TESTS=1 (CI sets it): then a skipped Ray test module fails the run, so that CI cannot pass
without running them."""

import os

# Under `uv run`, Ray starts its workers with `uv run` as well (its uv hook): they then fail to start here, where
# Ray itself is installed beside the lock (scripts/ray-deps). The workers use this environment as it is.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
# Ray's progress bars replace builtins.print in the driver for the rest of the process (tqdm_ray), and a tripy
# error about a print() in a traced function would then point at Ray's wrapper instead of the test's line.
os.environ.setdefault("RAY_TQDM_PATCH_PRINT", "0")

_skipped = []


def pytest_collectreport(report):
    if report.skipped and os.environ.get("TRIPY_REQUIRE_RAY_TESTS") == "1":
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _skipped:
        print(
            f"\nTRIPY_REQUIRE_RAY_TESTS=1, but these Ray tests were skipped (run scripts/ray-deps): "
            f"{', '.join(_skipped)}"
        )
        session.exitstatus = 1
