"""The native kernels' tests need tripy-kernels (native/tripy-kernels), which `scripts/kernels-deps` builds into the
workspace's environment. Without it these tests are skipped (`pytest.importorskip`), unless
TRIPY_REQUIRE_KERNELS_TESTS=1 (CI sets it): then a skipped kernels test module fails the run, so that CI cannot pass
without running them."""

import os

_skipped = []


def pytest_collectreport(report):
    if report.skipped and os.environ.get("TRIPY_REQUIRE_KERNELS_TESTS") == "1":
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _skipped:
        print(
            f"\nTRIPY_REQUIRE_KERNELS_TESTS=1, but these kernels tests were skipped (run scripts/kernels-deps): "
            f"{', '.join(_skipped)}"
        )
        session.exitstatus = 1
