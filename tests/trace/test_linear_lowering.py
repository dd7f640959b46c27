"""Tracing and lowering do work linear in the size of the graph.

No timing here (timings belong in benchmarks/scaling.py): the amount of work is counted instead, as
the number of Python-level calls (functions and builtins) each stage makes, which is deterministic.
Doubling the graph must double it. Whole-set operations on the function's set of defined tensors
(a C-level loop the call count cannot see) are checked for separately.
"""

from __future__ import annotations

import gc
import sys
from typing import Any, Callable, Tuple

import pytest

from tripy_flatir.device import CPU
from tripy_flatir.dtypes import float32
from tripy_flatir.function import FlatIRFunction
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind as BinaryKind
from tripy_trace.ops.matmul import MatrixMultiply
from tripy_trace.ops.storage import Storage
from tripy_flatir.ops.tanh import TanhOp
from tripy_trace.ops.unary_elementwise import UnaryElementwise
from tripy_trace.tensor import TraceTensor
from tripy_trace.trace import Trace


def _input(shape: Tuple[int, ...] = (4, 4)) -> TraceTensor:
    return Storage.build([], None, data=None, shape=shape, dtype=float32, device=CPU).outputs[0]


def build_graph(n: int) -> Trace:
    """n blocks of 4 ops each (binary with broadcasting, unary, a matmul, and a diamond: x used twice)."""
    x, w, b = _input(), _input(), _input((4,))
    for _ in range(n):
        y = BinaryElementwise.build([x, b], None, kind=BinaryKind.SUM).outputs[0]
        y = UnaryElementwise.build([y], None, flat_op=TanhOp, spelling="tanh").outputs[0]
        y = MatrixMultiply.build([y, w], None).outputs[0]
        x = BinaryElementwise.build([y, x], None, kind=BinaryKind.MUL).outputs[0]
    return Trace([x])


def count_calls(fn: Callable[[], Any]) -> Tuple[int, Any]:
    """Python-level calls (Python functions and builtins) made while running fn. The garbage collector is kept out:
    a collection during fn runs the finalizers of whatever earlier tests in this process left (the suite runs many
    in one worker), which are not fn's work (a CI run counted 1216 such calls in one stage)."""
    count = 0

    def profiler(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    gc.collect()
    gc.disable()
    sys.setprofile(profiler)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
        gc.enable()
    return count, result


def _work(n: int) -> dict:
    counts = {}
    counts["build"], trace = count_calls(lambda: build_graph(n))
    counts["trace"], _ = count_calls(lambda: Trace(trace.outputs))
    counts["cache_key"], _ = count_calls(trace.cache_key)
    counts["to_flat_ir"], flat = count_calls(trace.to_flat_ir)
    counts["to_mlir"], _ = count_calls(flat.to_mlir)
    counts["trace ops"] = len(trace.ops)
    counts["flat ops"] = len(flat.ops)
    return counts


def test_work_grows_linearly_with_graph_size():
    """Each extra 100 blocks costs the same work, whether added to 100 blocks or to 200 (a quadratic stage
    would cost (300^2 - 200^2) / (200^2 - 100^2) = 1.67x more the second time)."""
    _work(5)  # warm up: one-time costs (imports, MLIR context, caches) must not be counted
    w1, w2, w3 = _work(100), _work(200), _work(300)
    assert [w["trace ops"] for w in (w1, w2, w3)] == [403, 803, 1203]  # 4 ops per block plus 3 inputs
    assert w3["flat ops"] - w2["flat ops"] == w2["flat ops"] - w1["flat ops"] > 0
    for stage in ("build", "trace", "cache_key", "to_flat_ir", "to_mlir"):
        first, second = w2[stage] - w1[stage], w3[stage] - w2[stage]
        assert 0.95 <= second / first <= 1.05, (
            f"{stage}: +{first} calls for blocks 100..200, +{second} for blocks 200..300: not linear"
        )


class _WholeSetGuard(set):
    """A set that fails on whole-set operations (copies, unions, iteration); membership tests are fine."""

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("lowering did whole-set work on FlatIRFunction._defined (quadratic in graph size)")

    __iter__ = __or__ = __ror__ = __and__ = __rand__ = __sub__ = __rsub__ = __xor__ = __rxor__ = _fail
    copy = union = intersection = difference = _fail


def test_lowering_does_not_copy_the_defined_set(monkeypatch):
    original_init = FlatIRFunction.__init__

    def init(self: FlatIRFunction, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self._defined = _WholeSetGuard(self._defined)

    monkeypatch.setattr(FlatIRFunction, "__init__", init)
    flat = build_graph(20).to_flat_ir()
    assert len(flat.ops) > 80


def test_deep_graphs_do_not_recurse():
    """Graph walks are iterative: a chain far deeper than Python's recursion limit traces and lowers."""
    depth = sys.getrecursionlimit() * 3
    x, w = _input(), _input()
    for i in range(depth):
        x = (
            BinaryElementwise.build([x, w], None, kind=BinaryKind.SUM)
            if i % 2
            else UnaryElementwise.build([x], None, flat_op=TanhOp, spelling="tanh")
        ).outputs[0]
    trace = Trace([x])
    assert len(trace.ops) == depth + 2
    assert len(trace.cache_key()) > depth
    flat = trace.to_flat_ir()
    assert len(flat.ops) >= depth


@pytest.mark.parametrize("n", [1, 7])
def test_cache_key_is_structural(n):
    """Same structure -> same key (tensor names differ); a different structure -> a different key."""
    a, b = build_graph(n), build_graph(n)
    assert a.cache_key() == b.cache_key()
    assert hash(a.cache_key()) == hash(b.cache_key())
    assert build_graph(n + 1).cache_key() != a.cache_key()
    x, w = _input(), _input()
    s = BinaryElementwise.build([x, w], None, kind=BinaryKind.SUM).outputs[0]
    sx = Trace([BinaryElementwise.build([s, x], None, kind=BinaryKind.MUL).outputs[0]])
    sw = Trace([BinaryElementwise.build([s, w], None, kind=BinaryKind.MUL).outputs[0]])
    assert sx.cache_key() != sw.cache_key()  # wiring is part of the key
