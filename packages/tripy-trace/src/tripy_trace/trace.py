"""The Trace: every op needed for some outputs, in order; its text form; lowering to FlatIR."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from tripy_flatir.function import FlatIRFunction
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp
from tripy_trace.tensor import TraceTensor


class Trace:
    """Built by walking back from `outputs`. Program inputs are the outputs of input ops (stored data,
    placeholders); `inputs` fixes the order of placeholders, which come first."""

    def __init__(self, outputs: Sequence[TraceTensor], inputs: Sequence[TraceTensor] = ()) -> None:
        self.outputs = list(outputs)
        self.ops: List[BaseTraceOp] = []
        seen: set[int] = set()
        for out in self.outputs:
            stack: List[Any] = [(out.producer, False)]
            while stack:
                op, expanded = stack.pop()
                if id(op) in seen:
                    continue
                if expanded:
                    seen.add(id(op))
                    self.ops.append(op)
                    continue
                stack.append((op, True))
                for inp in reversed(op.inputs):
                    if id(inp.producer) not in seen:
                        stack.append((inp.producer, False))
        given = list(inputs)
        given_ids = {id(t) for t in given}
        self.inputs: List[TraceTensor] = given + [o for op in self.ops if op.is_input
                                                  for o in op.outputs if id(o) not in given_ids]

    def cache_key(self) -> tuple:
        """A structural key: op kinds, attributes, wiring, and input shapes/dtypes/devices (not data)."""
        # Runs on every eager evaluation, cache hit or not: plain tuples of cheap-to-hash values, no
        # printing. Tensors are numbered in op order, so the key does not depend on tensor names.
        index: Dict[int, int] = {}
        parts: List[Any] = []
        append = parts.append
        for op in self.ops:
            append(op.cache_key())
            append(tuple([index[id(i)] for i in op.inputs]))
            for o in op.outputs:
                index[id(o)] = len(index)
                if op.is_input:
                    append((o.shape, o.dtype.name, o.device.kind, o.device.index))
        append(tuple([index[id(o)] for o in self.outputs]))
        append(tuple([index[id(i)] for i in self.inputs]))
        return tuple(parts)

    def __str__(self) -> str:
        lines = [str(op) for op in self.ops]
        lines.append("outputs:")
        lines += [f"    {o}" for o in self.outputs]
        return "\n".join(lines)

    def to_flat_ir(self) -> FlatIRFunction:
        func = FlatIRFunction()
        flat: Dict[int, FlatIRTensor] = {}
        for t in self.inputs:
            flat[id(t)] = func.add_input(t.to_flat_ir())
        for op in self.ops:
            if op.is_input:
                continue
            inputs = [flat[id(i)] for i in op.inputs]
            outputs = [o.to_flat_ir() for o in op.outputs]
            sub_inputs = [i.like() for i in inputs]
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


def storage_tensors(trace: Trace) -> List[TraceTensor]:
    """Trace inputs that hold data (not placeholders)."""
    return [t for t in trace.inputs if getattr(t.producer, "data", None) is not None]

