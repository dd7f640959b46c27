"""Work on baked-in data is done once, by tp.compile, instead of on every call.

A compiled function often transforms its weights before using them: ``tp.Linear`` multiplies by the
transposed weight, a quantized layer dequantizes it. Those ops depend on stored data only, so their
results are the same on every call. tp.compile evaluates each such result that the rest of the program
reads (eagerly, through the normal pipeline, on a worker thread while it lowers the program) and passes it to
the executable as a bound argument. XLA then reads, say, an ``[in, out]`` matrix as stored instead of
transposing a weight at every call (what that saves: "Work on weights is done once" in the Performance guide).

Only results that are no larger than the stored data they come from are hoisted: a constant that is
cheap to make inside the program (``tp.ones((1024, 1024))``, a broadcast of a bias) stays there, where
XLA can fuse it. A hoisted result costs memory for as long as the executable lives, as a prepacked
weight does in other runtimes.

A transposed weight stays in the program where XLA reads the ``[out, in]`` weight as fast as an ``[in, out]``
copy: which products those are is the backend's to say (``tripy_backend.plan.weights``), asked here with the
trace's products, as the backend's own rules read the StableHLO module's. A product whose rows are not static (a
range) keeps it too: the range's small buckets read copies the backend makes in the background
(``passes.transposed_weights``), so that ``tp.compile`` returns without evaluating them.

A narrow weight (int8 that ``tp.Linear(..., quant_dtype=tp.int8)`` quantizes from stored data, or a stored
bfloat16 weight cast to float32) is hoisted as the narrow tensor, its widening (cast, per-channel scale,
transpose) left in the program, where the plan says a product widens it in its loop
(``WeightPlan.widens_in_loop``): the program then reads 1 or 2 bytes per weight instead of 4.
"""

from __future__ import annotations

import math
import weakref
from typing import Any, Callable, Dict, List, Sequence, Tuple

from tripy_flatir.logging import logger
from tripy_backend import plan
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind
from tripy_trace.ops.cast import Cast
from tripy_trace.ops.convolution import Convolution
from tripy_trace.ops.matmul import MatrixMultiply
from tripy_trace.ops.permute import Permute
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_trace.ops.storage import Storage, store_results
from tripy_trace.tensor import TraceTensor
from tripy_trace.trace import signature, topological_order
from tripy_frontend.eager import evaluate_in_background

# Stored data smaller than this (elements) is not worth an argument of its own: scalars, shape values.
MIN_ELEMENTS = 4096


class _Evaluable:
    """What ``eager.evaluate_in_background`` takes: something with a ``trace_tensor``."""

    __slots__ = ("trace_tensor",)

    def __init__(self, tensor: TraceTensor) -> None:
        self.trace_tensor = tensor


# (structural key of a hoisted result's graph, ids of the buffers it reads) -> (weak references to those
# buffers, weak reference to the result's buffer): executables compiled from the same weights (a prefill
# and a decode program) share one transposed copy instead of holding one each.
_DONE: Dict[tuple, Tuple[Tuple["weakref.ref[Any]", ...], "weakref.ref[Any]"]] = {}


def hoist_constants(outputs: Sequence[TraceTensor]) -> Callable[[], None]:
    """Evaluate the parts of the graph behind `outputs` that depend on stored data only and that the rest
    of it reads (see the module docstring); each becomes stored data in place at once, computed on a worker
    thread (``eager.evaluate_in_background``) while ``tp.compile`` lowers the program. Returns `finish`, which
    waits for the evaluation (raising its error, if any) and logs what was hoisted."""
    hoisted = constant_frontier(outputs)
    todo = []
    for t in hoisted:
        key, sources = signature([t])
        buffers = [s.producer.data for s in sources]  # type: ignore[union-attr]
        done_key = (key, tuple(map(id, buffers)))
        done = _DONE.get(done_key)
        result = done[1]() if done and all(r() is b for r, b in zip(done[0], buffers)) else None
        if result is not None:
            store_results([t], [result])
        else:
            todo.append((t, done_key, buffers))
    if todo:
        evaluate_in_background([_Evaluable(t) for t, _, _ in todo])

    def finish() -> None:
        for t, done_key, buffers in todo:
            result = t.producer.data  # type: ignore[union-attr]  # (waits for the evaluation)
            _DONE[done_key] = (tuple(weakref.ref(b) for b in buffers), weakref.ref(result))
        for k in [k for k, (sources, result) in _DONE.items() if result() is None or any(r() is None for r in sources)]:
            del _DONE[k]
        if hoisted:
            logger.log(
                lambda: (
                    f"[compile] evaluated {len(todo)} results of baked-in data once, reused "
                    f"{len(hoisted) - len(todo)} ({sum(_elements(t) for t in hoisted)} elements), passed as "
                    "arguments"
                ),
                "compile",
            )

    return finish


def constant_frontier(outputs: Sequence[TraceTensor]) -> List[TraceTensor]:
    """The tensors computed from stored data only (not stored data themselves) that an op depending on a
    runtime input reads, no larger than the stored data behind them and at least MIN_ELEMENTS of it (but not
    the transposed weights that stay in the program: see the module docstring)."""
    order = topological_order(outputs)
    weight_plan = _weight_plan(order)
    stored: Dict[int, int] = {}  # id(tensor) -> elements of stored data it is computed from, if constant
    for op in order:
        if isinstance(op, Storage) and not isinstance(op, ShardedStorage):  # (sharded: stays an argument)
            stored.update((id(o), _elements(o)) for o in op.outputs)
        elif not op.is_input and all(id(i) in stored for i in op.inputs):  # (no inputs: iota, fills)
            stored.update((id(o), sum(stored[id(i)] for i in op.inputs)) for o in op.outputs)
    widened = _widened_in_program(order, stored, weight_plan)
    for t in widened:
        stored.pop(id(t), None)  # (computed in the program, as if it depended on a runtime input)
    frontier: Dict[int, TraceTensor] = {}
    for op in order:
        if op.is_input or all(id(t) in stored for t in (*op.inputs, *op.outputs)):
            continue
        for i in op.inputs:
            if (
                id(i) in stored
                and not isinstance(i.producer, Storage)
                and stored[id(i)] >= MIN_ELEMENTS
                and _elements(i) <= stored[id(i)]
                and not _stays_transposed(op, i, weight_plan)
            ):
                frontier[id(i)] = i
    return list(frontier.values())


def _widened_in_program(
    order: Sequence[Any], stored: Dict[int, int], weight_plan: plan.WeightPlan
) -> List[TraceTensor]:
    """The tensors between a narrow weight and the products that widen it in their loop (see the module
    docstring): for each such product, its weight operand back through a transpose, a multiplication by a
    smaller (scale) tensor and a cast from a narrower type, to the narrow tensor (not included)."""
    widened: List[TraceTensor] = []
    for op in order:
        w = op.inputs[1] if isinstance(op, MatrixMultiply) and id(op.inputs[1]) in stored else None
        if w is None or not w.is_static or w.rank != 2 or w.device.kind != "cpu":
            continue
        if not weight_plan.widens_in_loop(_product(op).rows, _elements(w)):
            continue
        chain, t = [], w
        while True:
            chain.append(t)
            producer = t.producer
            if isinstance(producer, Permute):
                t = producer.inputs[0]
            elif (
                isinstance(producer, BinaryElementwise)
                and producer.kind is Kind.MUL
                and _elements(producer.inputs[1]) < _elements(t)
            ):
                t = producer.inputs[0]
            elif (
                isinstance(producer, Cast)
                and t.dtype.is_floating
                and 0 < producer.inputs[0].dtype.itemsize < t.dtype.itemsize
            ):
                widened += chain  # reached the narrow weight
                break
            else:
                break
    return widened


def _weight_plan(order: Sequence[Any]) -> plan.WeightPlan:
    """The backend's plan for this graph's weights, from its matrix products and convolutions."""
    products = [_product(op) for op in order if isinstance(op, MatrixMultiply)]
    kernels = sum(_elements(op.inputs[1]) for op in order if isinstance(op, Convolution))
    return plan.weights(products, kernels)


def _product(op: MatrixMultiply) -> plan.Product:
    x, w = op.inputs[0], op.inputs[1]
    if not (x.is_static and w.is_static):
        return plan.Product(-1, 0)
    free = (x.shape[-2] if x.rank >= 2 else 1, w.shape[-1] if w.rank >= 2 else 1)
    return plan.Product(min(free), _elements(x) if free[0] >= free[1] else _elements(w))


def _stays_transposed(op: Any, t: TraceTensor, weight_plan: plan.WeightPlan) -> bool:
    """Whether `t`, read by `op`, is a transposed stored weight that stays in the program (``[out, in]``, read
    as stored: see the module docstring)."""
    if not (
        isinstance(op, MatrixMultiply)
        and op.inputs[1] is t
        and isinstance(t.producer, Permute)
        and isinstance(t.producer.inputs[0].producer, Storage)
        and t.rank == 2
        and t.device.kind == "cpu"
    ):
        return False
    x = op.inputs[0]
    rows = (x.shape[-2] if x.rank >= 2 else 1) if x.is_static else -1
    return weight_plan.keeps_transposed(rows, _elements(t))


def _elements(t: TraceTensor) -> int:
    return math.prod(t.shape) if t.is_static else 0
