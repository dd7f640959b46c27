"""Work on baked-in data is done once, by tp.compile, instead of on every call.

A compiled function often transforms its weights before using them: ``tp.Linear`` multiplies by the
transposed weight, a quantized layer dequantizes it. Those ops depend on stored data only, so their
results are the same on every call. tp.compile evaluates each such result that the rest of the program
reads (eagerly, through the normal pipeline) and passes it to the executable as a bound argument. XLA
then reads, say, an ``[in, out]`` matrix as stored instead of transposing a weight at every call (for
GPT-2 small at one token, ~30x: every weight was copied transposed on each call).

Only results that are no larger than the stored data they come from are hoisted: a constant that is
cheap to make inside the program (``tp.ones((1024, 1024))``, a broadcast of a bias) stays there, where
XLA can fuse it. A hoisted result costs memory for as long as the executable lives, as a prepacked
weight does in other runtimes.

Two exceptions, where a transposed weight stays in the program (XLA folds the transpose into the product,
which then reads the ``[out, in]`` weight as stored, and no second copy of the weight is made):

* a program whose matrix products all have a single row (``x @ W^T``, a decoding step) and that XLA:CPU
  therefore runs on its thunk runtime (``tripy_backend/cpu_runtime.py``): there, reading each row of the
  ``[out, in]`` weight is the fastest form of those products.
* on the CPU, a product of at least ``MANY_ROWS`` rows: oneDNN's matrix product reads the ``[out, in]``
  weight at least as fast as an ``[in, out]`` one, and much faster where ``in`` is the shorter side (GPT-2
  small at 128 tokens: its ``768 -> 3072`` products took 6.7 ms instead of 11.4, the whole forward ~300 ms of
  products instead of ~370; measured in one process, 2-core VM).

A product of a few rows (or one, on the classic runtime) still gets the hoisted ``[in, out]`` weight: XLA then
copies an ``[out, in]`` weight transposed on every call (8x slower for a 2-row product of a 768x3072 weight).
"""

from __future__ import annotations

import math
import weakref
from typing import Any, Dict, List, Sequence, Tuple

from tripy_flatir.logging import logger
from tripy_trace.ops.matmul import MatrixMultiply
from tripy_trace.ops.permute import Permute
from tripy_trace.ops.storage import Storage
from tripy_trace.tensor import TraceTensor
from tripy_trace.trace import signature, topological_order

# Stored data smaller than this (elements) is not worth an argument of its own: scalars, shape values.
MIN_ELEMENTS = 4096

# Rows of a matrix product from which, on the CPU, its transposed weight stays in the program (see above).
MANY_ROWS = 64


class _Evaluable:
    """What ``eager.evaluate`` takes: something with a ``trace_tensor``."""

    __slots__ = ("trace_tensor",)

    def __init__(self, tensor: TraceTensor) -> None:
        self.trace_tensor = tensor


# (structural key of a hoisted result's graph, ids of the buffers it reads) -> (weak references to those
# buffers, weak reference to the result's buffer): executables compiled from the same weights (a prefill
# and a decode program) share one transposed copy instead of holding one each.
_DONE: Dict[tuple, Tuple[Tuple["weakref.ref[Any]", ...], "weakref.ref[Any]"]] = {}


def hoist_constants(outputs: Sequence[TraceTensor]) -> None:
    """Evaluate the parts of the graph behind `outputs` that depend on stored data only and that the rest
    of it reads (see the module docstring); each becomes stored data in place."""
    from tripy_frontend import results
    from tripy_frontend.eager import evaluate

    hoisted = constant_frontier(outputs)
    todo = []
    for t in hoisted:
        key, sources = signature([t])
        buffers = [s.producer.data for s in sources]  # type: ignore[union-attr]
        done_key = (key, tuple(map(id, buffers)))
        done = _DONE.get(done_key)
        result = done[1]() if done and all(r() is b for r, b in zip(done[0], buffers)) else None
        if result is not None:
            results.store([t], [result])
        else:
            todo.append((t, done_key, buffers))
    if todo:
        evaluate([_Evaluable(t) for t, _, _ in todo])
        for t, done_key, buffers in todo:
            _DONE[done_key] = (tuple(weakref.ref(b) for b in buffers), weakref.ref(t.producer.data))  # type: ignore[union-attr]
        for k in [k for k, (sources, result) in _DONE.items() if result() is None or any(r() is None for r in sources)]:
            del _DONE[k]
    if hoisted:
        logger.log(lambda: f"[compile] evaluated {len(todo)} results of baked-in data once, reused "
                           f"{len(hoisted) - len(todo)} ({sum(_elements(t) for t in hoisted)} elements), passed as "
                           "arguments", "compile")


def constant_frontier(outputs: Sequence[TraceTensor]) -> List[TraceTensor]:
    """The tensors computed from stored data only (not stored data themselves) that an op depending on a
    runtime input reads, no larger than the stored data behind them and at least MIN_ELEMENTS of it (but not
    the transposed weights that stay in the program: see the module docstring)."""
    order = topological_order(outputs)
    matrix_vector_program = _matrix_vector_program(order)
    stored: Dict[int, int] = {}  # id(tensor) -> elements of stored data it is computed from, if constant
    frontier: Dict[int, TraceTensor] = {}
    for op in order:
        if op.is_input:
            if isinstance(op, Storage):
                stored.update((id(o), _elements(o)) for o in op.outputs)
            continue
        if all(id(i) in stored for i in op.inputs):  # (ops without inputs make constants: iota, fills)
            behind = sum(stored[id(i)] for i in op.inputs)
            stored.update((id(o), behind) for o in op.outputs)
            continue
        for i in op.inputs:
            if (id(i) in stored and not isinstance(i.producer, Storage) and stored[id(i)] >= MIN_ELEMENTS
                    and _elements(i) <= stored[id(i)] and not _stays_transposed(op, i, matrix_vector_program)):
                frontier[id(i)] = i
    return list(frontier.values())


def _matrix_vector_program(order: Sequence[Any]) -> bool:
    """Whether XLA:CPU will run the graph on its thunk runtime as a program of matrix-vector products (the
    choice of ``tripy_backend.cpu_runtime``, made here from the trace): on the CPU, every matrix product has a
    single row and together they read at least ``MATRIX_VECTOR_ELEMENTS`` matrix elements, or
    ``TRIPY_XLA_CPU_RUNTIME=thunk``."""
    from tripy_backend import cpu_runtime

    products = [op for op in order if isinstance(op, MatrixMultiply)]
    runtime = cpu_runtime.requested()
    if not products or runtime == "classic" or products[0].outputs[0].device.kind != "cpu":
        return False
    if not all(x.rank == 1 or x.shape[-2] == 1 for x in (op.inputs[0] for op in products)):
        return False
    return runtime == "thunk" or sum(_elements(op.inputs[1]) for op in products) >= cpu_runtime.MATRIX_VECTOR_ELEMENTS


def _stays_transposed(op: Any, t: TraceTensor, matrix_vector_program: bool) -> bool:
    """Whether `t`, read by `op`, is a transposed weight that stays in the program (see the module docstring)."""
    if not _transposed_weight(op, t):
        return False
    if matrix_vector_program:
        return True
    x = op.inputs[0]
    return t.device.kind == "cpu" and x.rank >= 2 and x.shape[-2] >= MANY_ROWS


def _transposed_weight(op: Any, t: TraceTensor) -> bool:
    """Whether `op` is a matrix product reading `t`, a transposed stored matrix big enough for the backend to
    isolate the product (``cpu_runtime.ISOLATE_ELEMENTS``), as its right operand."""
    from tripy_backend.cpu_runtime import ISOLATE_ELEMENTS

    return (isinstance(op, MatrixMultiply) and op.inputs[1] is t and isinstance(t.producer, Permute)
            and isinstance(t.producer.inputs[0].producer, Storage) and t.rank == 2
            and _elements(t) >= ISOLATE_ELEMENTS)


def _elements(t: TraceTensor) -> int:
    return math.prod(t.shape) if t.is_static else 0
