"""Golden tests of the backend's passes: a small hand-written StableHLO module in, the expected module out. Both
sides are parsed and printed by the installed MLIR (without locations) before they are compared, so a printer that
spells an op differently from one jaxlib to the next does not fail a test; a different op, type or attribute does."""

from __future__ import annotations

import pytest
from jax.extend.mlir import ir

from tripy_flatir.mlir_utils import context


def _canonical(module: bytes | str) -> str:
    with context():
        parsed = ir.Module.parse(module)
        return str(parsed.operation.get_asm(enable_debug_info=False)).strip()


@pytest.fixture
def same_module():
    """`same_module(actual, expected)`: assert two modules (bytecode or text) print the same."""

    def check(actual: bytes | str, expected: bytes | str) -> None:
        assert _canonical(actual) == _canonical(expected)

    return check


@pytest.fixture
def printed():
    """`printed(module)`: the module's text as the installed MLIR prints it, without locations."""
    return _canonical
