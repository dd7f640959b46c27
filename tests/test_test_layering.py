"""Each layer's unit tests import only that layer and the layers below it (as the packages do), so a
layer's tests pass with only that layer and its dependencies installed."""

import ast
from pathlib import Path

import pytest

ALLOWED = {
    "flatir": {"tripy_flatir"},
    "trace": {"tripy_flatir", "tripy_trace"},
    "backend": {"tripy_flatir", "tripy_backend"},
}
TRIPY_PACKAGES = {"tripy", "tripy_frontend", "tripy_trace", "tripy_backend", "tripy_flatir"}


def _imported_tripy_packages(path):
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {n.split(".")[0] for n in names} & TRIPY_PACKAGES
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_tests_import_only_their_layer_and_below(layer):
    tests = sorted((Path(__file__).parent / layer).glob("*.py"))
    assert tests
    wrong = {str(p.name): sorted(_imported_tripy_packages(p) - ALLOWED[layer]) for p in tests}
    assert {name: pkgs for name, pkgs in wrong.items() if pkgs} == {}
