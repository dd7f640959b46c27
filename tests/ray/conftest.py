"""The Ray integration's tests need Ray (with Ray Data and Ray Serve) and ONNX Runtime: `scripts/ray-deps` installs
them (a skipped module fails the run where TRIPY_REQUIRE_RAY_TESTS=1: see tests/conftest.py). Ray's settings here
keep its workers and progress bars out of the tests' way."""

import os

# Under `uv run`, Ray starts its workers with `uv run` as well (its uv hook): they then fail to start here, where
# Ray itself is installed beside the lock (scripts/ray-deps). The workers use this environment as it is.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
# Ray's progress bars replace builtins.print in the driver for the rest of the process (tqdm_ray), and a tripy
# error about a print() in a traced function would then point at Ray's wrapper instead of the test's line.
os.environ.setdefault("RAY_TQDM_PATCH_PRINT", "0")
