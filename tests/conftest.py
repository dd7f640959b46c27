"""Shared test fixtures.

`eager_or_compiled` runs an end-to-end test twice: once in eager mode and once through tp.compile,
so every op is checked in both modes against the same NumPy expectation.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest


def _compile_and_run(func: Callable[..., Any], *args: Any) -> Any:
    import tripy as tp

    if not hasattr(tp, "compile"):
        pytest.skip("compiled mode is not available")
    tensor_positions = [i for i, a in enumerate(args) if isinstance(a, tp.Tensor)]
    infos = [tp.InputInfo(tuple(int(d) for d in args[i].shape), args[i].dtype) for i in tensor_positions]

    def wrapper(*tensors: Any) -> Any:
        full = list(args)
        for pos, t in zip(tensor_positions, tensors):
            full[pos] = t
        return func(*full)

    exe = tp.compile(wrapper, args=infos)
    return exe(*[args[i].eval() for i in tensor_positions])


@pytest.fixture(params=["eager", "compiled"])
def eager_or_compiled(request: Any) -> Callable[..., Any]:
    """Call as ``eager_or_compiled(func, *args)``: tensor args become runtime inputs when compiled."""
    if request.param == "eager":
        return lambda func, *args: func(*args)
    return _compile_and_run
