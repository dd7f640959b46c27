"""The importers' tests need PyTorch (and ONNX, ONNX Runtime, transformers, timm): `scripts/importer-deps` installs
them into the workspace's environment. Without them these tests are skipped (`pytest.importorskip`), unless
TRIPY_REQUIRE_IMPORTER_TESTS=1 (CI sets it): then a skipped importer test module fails the run, so that CI cannot
pass without running them."""

import os

_skipped = []


def pytest_collectreport(report):
    if report.skipped and os.environ.get("TRIPY_REQUIRE_IMPORTER_TESTS") == "1":
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _skipped:
        print(
            f"\nTRIPY_REQUIRE_IMPORTER_TESTS=1, but these importer tests were skipped (run scripts/importer-deps): "
            f"{', '.join(_skipped)}"
        )
        session.exitstatus = 1
