"""The Trace: every op needed for some outputs, in order; its text form; lowering to FlatIR."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from tripy_flatir.function import FlatIRFunction
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering, symbolic
from tripy_trace.ops.base import BaseTraceOp
from tripy_trace.tensor import TraceTensor


class Trace:
    """Built by walking back from `outputs`. Program inputs are the outputs of input ops (stored data,
    placeholders) and the tensors in `inputs`, which come first in that order: placeholders, or the
    eager program's inputs from ``signature`` (which include the Python numbers, ``constant.Scalar``)."""

    def __init__(self, outputs: Sequence[TraceTensor], inputs: Sequence[TraceTensor] = ()) -> None:
        self.outputs = list(outputs)
        self.ops: List[BaseTraceOp] = topological_order(self.outputs)
        given = list(inputs)
        given_ids = {id(t) for t in given}
        self.inputs: List[TraceTensor] = given + [
            o for op in self.ops if op.is_input for o in op.outputs if id(o) not in given_ids
        ]

    def cache_key(self) -> tuple:
        """A structural key: op kinds, attributes, wiring, and input shapes/dtypes/devices (not data).
        ``signature(outputs)``'s key, then the order of the inputs (see ``signature``)."""
        key, _, index = _signature(self.outputs)
        return key + (None,) + tuple([index.get(t, -1) for t in self.inputs])

    def __str__(self) -> str:
        lines = [str(op) for op in self.ops]
        lines.append("outputs:")
        lines += [f"    {o}" for o in self.outputs]
        return "\n".join(lines)

    def to_flat_ir(self) -> FlatIRFunction:
        with lowering.shared_shapes():
            return self._to_flat_ir()

    def _to_flat_ir(self) -> FlatIRFunction:
        func = FlatIRFunction()
        flat: Dict[int, FlatIRTensor] = {}
        # run-time size -> (an input of the function, its dim of that size): every read of a size is then one op
        sources: Dict[Any, Tuple[FlatIRTensor, int]] = {}
        for t in self.inputs:
            flat[id(t)] = func.add_input(t.to_flat_ir())
            if DYNAMIC in t.shape:
                for d, size in enumerate(symbolic.dims(t)):
                    if t.shape[d] == DYNAMIC:
                        sources.setdefault(size, (flat[id(t)], d))
        for op in self.ops:
            if op.is_input or (op.is_eager_input and id(op.outputs[0]) in flat):  # (a number: eager program input)
                continue
            inputs = [flat[id(i)] for i in op.inputs]
            outputs = [o.to_flat_ir() for o in op.outputs]
            sub_inputs = [i.like() for i in inputs]
            if sum(1 for i in op.inputs if DYNAMIC in i.shape) > 1:  # (which run-time sizes are equal: broadcasts)
                for sub, t in zip(sub_inputs, op.inputs):
                    sub.sizes = symbolic.dims(t)
            if sources:
                for sub, t in zip(sub_inputs, op.inputs):
                    if DYNAMIC in t.shape:
                        dims = symbolic.dims(t)
                        sub.size_sources = [sources.get(s) if n == DYNAMIC else None for n, s in zip(t.shape, dims)]
            sub_outputs = [o.like() for o in outputs]
            op.to_flat_ir(sub_inputs, sub_outputs)
            origin = op.name()
            for fop in func.integrate_subgraph(inputs, outputs, sub_inputs, sub_outputs):
                for o in fop.outputs:
                    if o.stack_info is None:
                        o.stack_info = op.outputs[0].stack_info
                    o.origin = o.origin or origin
            for trace_out, flat_out in zip(op.outputs, outputs):
                flat[id(trace_out)] = flat_out
        func.outputs = [flat[id(o)] for o in self.outputs]
        return func


# Graph walks. Tensors are numbered in the order they were made and an op's outputs are made after its
# inputs, so sorting the tensors a graph reaches by number orders its ops topologically (the order the
# user's code built them in). A walk is then a plain depth-first search for the reachable tensors (no
# post-order bookkeeping) and one sort, which matters on the eager hot path (every evaluation walks).
def _reachable(outputs: Sequence[TraceTensor]) -> Dict[int, TraceTensor]:
    """number -> tensor, for every tensor `outputs` depend on (iterative: deep graphs do not recurse)."""
    seen: Dict[int, TraceTensor] = {}
    stack = list(outputs)
    while stack:
        t = stack.pop()
        n = t.number
        if n in seen:
            continue
        seen[n] = t
        stack += t.producer.inputs  # type: ignore[union-attr]
    return seen


def topological_order(outputs: Sequence[TraceTensor]) -> List[BaseTraceOp]:
    """Every op that `outputs` depend on, each after its inputs' producers, in the order they were built."""
    seen = _reachable(outputs)
    ops: List[BaseTraceOp] = []
    prev = None
    for n in sorted(seen):
        op = seen[n].producer
        if op is not prev:  # (the outputs of one op are numbered consecutively)
            ops.append(op)  # type: ignore[arg-type]
            prev = op
    return ops


def signature(outputs: Sequence[TraceTensor]) -> Tuple[tuple, List[TraceTensor]]:
    """(A structural key of the graph that computes `outputs`, the program inputs in the order the key
    implies): what an eager evaluation needs to find its compiled program and the program's arguments.
    ``Trace(outputs, inputs)`` with these inputs is the graph the key describes.

    The key is the graph written out depth first from the outputs, in one walk (no sort, no second pass):
    a tensor seen before is written as a reference to its number (-1 - number; tensors are numbered in
    the order the walk meets them), a new one as its producer's ``key_id()`` (positive; it fixes the
    number of inputs and outputs, so the key parses one way only), its position among the outputs if
    the producer has several, then its inputs. So the key does not depend on which tensors they are,
    but it does on op kinds, attributes, wiring, and the shapes, dtypes and devices of stored data
    (which are in input ops' key ids), never on data or the values of Python numbers. The program inputs
    are the outputs of eager input ops (``is_eager_input``: input ops and Python numbers) in the order
    the walk meets them."""
    key, inputs, _ = _signature(outputs)
    return key, inputs


def _signature(outputs: Sequence[TraceTensor]) -> Tuple[tuple, List[TraceTensor], Dict[TraceTensor, int]]:
    index: Dict[TraceTensor, int] = {}  # tensor (hashed by identity) -> its number in the key
    parts: List[int] = []
    append = parts.append
    program_inputs: List[TraceTensor] = []
    stack = list(outputs)[::-1]
    pop = stack.pop
    while stack:
        t = pop()
        k = index.get(t)
        if k is not None:
            append(-1 - k)
            continue
        index[t] = len(index)
        op = t.producer
        append(op.key_id())  # type: ignore[union-attr]
        outs = op._out  # type: ignore[union-attr]  # (a weak reference to the only output, or a list)
        if type(outs) is list and len(outs) != 1:
            append(outs.index(t))  # (identity: TraceTensor does not define ==)
        if op.is_eager_input:  # type: ignore[union-attr]
            program_inputs.append(t)
        inputs = op.inputs  # type: ignore[union-attr]
        if inputs:
            stack += inputs[::-1]
    return tuple(parts), program_inputs, index
