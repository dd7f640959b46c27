"""A FlatIR program: inputs, ops in order, outputs; printable, rewritable, lowerable to StableHLO."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import numpy as np

from tripy_flatir.exceptions import TripyException, format_report
from tripy_flatir.locations import describe, op_location, parse
from tripy_flatir.tensor import FlatIRTensor
from tripy_flatir.mlir_utils import context

if TYPE_CHECKING:
    from tripy_flatir.ops.base import BaseFlatIROp

# Results of at most this many elements (rank 0 or 1) are computed once per function (``FlatIRFunction._shared``).
SMALL_RESULT = 16


class FlatIRFunction:
    def __init__(self, name: str = "main") -> None:
        self.name = name
        self.inputs: List[FlatIRTensor] = []
        self.outputs: List[FlatIRTensor] = []
        self.ops: List["BaseFlatIROp"] = []
        self._defined: set[int] = set()  # ids of tensors already available (inputs, op outputs)
        self._small: Dict[tuple, "BaseFlatIROp"] = {}  # small results by what computes them (see `_shared`)

    # ---- building -------------------------------------------------------------------------------
    def add_input(self, tensor: FlatIRTensor) -> FlatIRTensor:
        self.inputs.append(tensor)
        self._defined.add(id(tensor))
        return tensor

    def integrate_subgraph(
        self,
        inputs: Sequence[FlatIRTensor],
        outputs: Sequence[FlatIRTensor],
        sub_inputs: Sequence[FlatIRTensor],
        sub_outputs: Sequence[FlatIRTensor],
    ) -> List["BaseFlatIROp"]:
        """Inline the subgraph bound to (sub_inputs -> sub_outputs), remapping it onto (inputs -> outputs).

        The subgraph is every op reachable backwards from `sub_outputs` without crossing `sub_inputs` or
        tensors the function already has (its inputs and earlier ops' outputs), so a tool author can
        also build a function op by op. Returns the inlined ops in execution order.
        """
        remap: Dict[int, FlatIRTensor] = {id(s): t for s, t in zip(sub_inputs, inputs)}
        remap.update({id(s): t for s, t in zip(sub_outputs, outputs)})
        sub_input_ids = {id(s) for s in sub_inputs}
        defined = self._defined  # not copied: a union with it per op would make lowering quadratic

        ordered: List["BaseFlatIROp"] = []
        seen: set[int] = set()
        for out in sub_outputs:
            if out.producer is None:
                raise TripyException(
                    f"Internal error: the lowering did not produce output '{out.name}'. "
                    "Every output passed to to_flat_ir() must be bound by building an op."
                )
            stack: List[Any] = [(out.producer, False)]
            while stack:
                op, expanded = stack.pop()
                if id(op) in seen:
                    continue
                if expanded:
                    seen.add(id(op))
                    ordered.append(op)
                    continue
                stack.append((op, True))
                for inp in op.inputs:
                    if id(inp) in sub_input_ids or id(inp) in defined:
                        continue
                    if inp.producer is None:
                        raise TripyException(
                            f"Internal error: the lowering used tensor '{inp.name}', which is "
                            "neither one of its inputs nor produced inside it."
                        )
                    if id(inp.producer) not in seen:
                        stack.append((inp.producer, False))

        kept = []
        for op in ordered:
            op.inputs = [remap.get(id(t), t) for t in op.inputs]
            same = self._shared(op)
            if same is not None and not any(id(o) in remap for o in op.outputs):
                remap.update((id(o), s) for o, s in zip(op.outputs, same.outputs))
                continue
            op.outputs = [remap.get(id(t), t) for t in op.outputs]
            for o in op.outputs:
                o.producer = op
                self._defined.add(id(o))
            kept.append(op)
        self.ops.extend(kept)
        return kept

    def _shared(self, op: "BaseFlatIROp") -> Optional["BaseFlatIROp"]:
        """An earlier op that computes what `op` does (same kind, attributes and operands), if `op`'s results are
        small (shape arithmetic: sizes, shape vectors, their constants); else `op` is remembered as the one that
        computes them. A dynamic program's lowering asks for the same sizes and constants for each op that needs
        them, and every later stage would carry the repeats (the trace's lowering builds the sizes read from the
        inputs, small constants and shape vectors once; what it builds again, ~200 ops of GPT-2's over a range of
        lengths, is dropped here)."""
        if not all(o.rank <= 1 and 0 <= math.prod(o.shape) <= SMALL_RESULT for o in op.outputs):
            return None
        try:
            key = (
                type(op),
                tuple(map(id, op.inputs)),
                tuple((o.shape, o.dtype, o.device) for o in op.outputs),
                tuple((k, _hashable(v)) for k, v in op.attributes()),
            )
            same = self._small.get(key)
        except TypeError:  # (an attribute with no value equality)
            return None
        if same is None:
            self._small[key] = op
        return same

    # ---- text -----------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = [f"Function {self.name}:", "inputs:"]
        lines += [f"    {t}" for t in self.inputs]
        lines += [str(op) for op in self.ops]
        lines.append("outputs:")
        lines += [f"    {t}" for t in self.outputs]
        return "\n".join(lines)

    # ---- lowering -------------------------------------------------------------------------------
    def to_mlir(self) -> Any:
        """Build and verify the StableHLO module (``func.func @main``). Raises TripyException on failure."""
        from jax.extend.mlir import ir
        from jax.extend.mlir.dialects import func

        with context(), ir.Location.unknown():
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                ftype = ir.FunctionType.get([t.mlir_type() for t in self.inputs], [])
                fn = func.FuncOp(self.name, ftype)
                fn.attributes["sym_visibility"] = ir.StringAttr.get("public")
                block = fn.add_entry_block()
                values: Dict[int, Any] = {id(t): a for t, a in zip(self.inputs, block.arguments)}
                file_locations: Dict[Any, Any] = {}
                with ir.InsertionPoint(block):
                    for op in self.ops:
                        self._check_sizes(op)
                        with op_location(op, file_locations):
                            try:
                                results = op.to_mlir([values[id(i)] for i in op.inputs])
                            except TripyException:
                                raise
                            except Exception as e:
                                raise TripyException(
                                    self.error_report(op.outputs[0].name, f"Failed to lower to MLIR: {e}")
                                ) from e
                        for o, r in zip(op.outputs, results):
                            values[id(o)] = r
                    results = [values[id(o)] for o in self.outputs]
                    func.ReturnOp(results)
                fn.attributes["function_type"] = ir.TypeAttr.get(
                    ir.FunctionType.get([t.mlir_type() for t in self.inputs], [r.type for r in results])
                )
            try:
                module.operation.verify()
            except ir.MLIRError as e:
                raise TripyException(self.diagnostics_report("MLIR verification failed", e.error_diagnostics)) from None
        return module

    def _check_sizes(self, op: Any) -> None:
        """Refuse a static result too large to address (2**63 bytes or more): newer XLA aborts the process on
        one instead of returning an error."""
        for o in op.outputs:
            if not all(isinstance(d, int) and d >= 0 for d in o.shape):
                continue
            nbytes = math.prod(o.shape) * max(float(o.dtype.itemsize), 1.0)
            if nbytes >= 2**63:
                raise TripyException(
                    self.error_report(
                        o.name,
                        f"{o.name} would be a tensor of shape {list(o.shape)} ({math.prod(o.shape):,} elements): "
                        "too large to allocate.",
                    )
                )

    # ---- errors ---------------------------------------------------------------------------------
    def find_tensor(self, name: str) -> Optional[FlatIRTensor]:
        for t in self.inputs:
            if t.name == name:
                return t
        for op in self.ops:
            for o in op.outputs:
                if o.name == name:
                    return o
        return None

    def error_report(self, tensor_name: Optional[str], message: str) -> str:
        """A report for an error located at FlatIR tensor `tensor_name`: the FlatIR expression, why a
        lowering introduced it (if one did), and the user code it came from."""
        tensor = self.find_tensor(tensor_name) if tensor_name else None
        if tensor is None:
            return message
        details = []
        if tensor.producer is not None:
            details.append(
                "\nThis error occurred while compiling the following FlatIR expression:\n    | " + str(tensor.producer)
            )
        if tensor.reason:
            details.append(
                f"\nNote: tripy introduced this operation while lowering {tensor.origin or 'an operation'}: "
                f"{tensor.reason}"
            )
        input_infos = []
        if tensor.producer is not None:
            input_infos = [i.stack_info for i in tensor.producer.inputs if i.stack_info is not tensor.stack_info]
        if tensor.stack_info:
            details.append("\nThis originated from the expression shown at the top.")
        return format_report(message, tensor.stack_info, details, input_infos)

    def diagnostics_report(self, headline: str, diagnostics: Sequence[Any]) -> str:
        """Map MLIR diagnostics (which carry ``loc("<tensor name>")``) back to FlatIR and user code."""
        located = [loc for loc in (parse(str(d.location)) for d in diagnostics) if loc is not None]
        messages = [f"({describe(d.location)}) {d.message}" for d in diagnostics]
        return self.error_report(located[0].tensor if located else None, f"{headline}:\n    " + "\n    ".join(messages))


def _hashable(value: Any) -> Any:
    """An op attribute as a dict key: arrays by their type, shape and bytes, lists and dicts as tuples."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(map(_hashable, value))
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value
