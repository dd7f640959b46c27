"""The importers' tests need PyTorch (and ONNX, ONNX Runtime, transformers, timm): `scripts/importer-deps` installs
them into the workspace's environment. Without them these tests are skipped, unless TRIPY_REQUIRE_IMPORTER_TESTS=1
(CI sets it) turns the skip into a failure, so that CI cannot pass without running them."""

import importlib
import os

import pytest


def require(module: str):
    """The module, or a skip (a failure under TRIPY_REQUIRE_IMPORTER_TESTS=1) when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if os.environ.get("TRIPY_REQUIRE_IMPORTER_TESTS") == "1":
            pytest.fail(f"{module} is not installed ({e}); run scripts/importer-deps", pytrace=False)
        pytest.skip(f"{module} is not installed: run scripts/importer-deps", allow_module_level=True)
