"""Pass ``static-shapes``: the module for static input shapes (``Job.shapes``: exact ones, or a bucket's bounds).

The main function's arguments take the shapes, the module is verified (inputs whose shapes the program cannot
take together, e.g. ``+`` of dims 2 and 4, are reported here against the user's code, through the ops'
locations), and StableHLO shape refinement makes every type static (XLA compiles static shapes only). A shape
the program's own arithmetic refuses (``reshape`` of 3 rows to ``(2, -1)``) fails the refinement. Both raise
``range_check.Rejected``."""

from __future__ import annotations

from typing import Any

from jax.extend.mlir import ir

from tripy_flatir import locations
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import _xla
from tripy_backend.passes import Job, Pass
from tripy_backend.passes.markers import main, op_name, set_function_type
from tripy_backend.range_check import Rejected


def run(module_bytes: bytes, job: Job) -> bytes:
    try:
        return _xla.refine_shapes(_with_input_shapes(module_bytes, job))  # type: ignore[no-any-return]
    except Rejected:
        raise
    except Exception as e:
        raise Rejected([str(e)], refining=True) from None


def _with_input_shapes(module_bytes: bytes, job: Job) -> bytes:
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = main(module)
        block = fn.regions[0].blocks[0]
        for arg, shape in zip(block.arguments, job.shapes):
            arg.set_type(ir.RankedTensorType.get(list(shape), ir.RankedTensorType(arg.type).element_type))
        _match_marker_types(fn)
        # (results that are arguments take the arguments' new types: func.return needs an exact match)
        set_function_type(fn)
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            diagnostics = e.error_diagnostics
            raise Rejected(
                [f"({locations.describe(d.location)}) {d.message}" for d in diagnostics],
                [str(d.location) for d in diagnostics],
            ) from None
        return bytecode(module)


def has_shapes(job: Job) -> bool:
    return bool(job.shapes)


PASS = Pass("static-shapes", run, has_shapes)


def _match_marker_types(fn: Any) -> None:
    """A marker (an optimization_barrier: results typed as its operands) that takes an argument directly, e.g.
    the source of a slice, gets the argument's new static type on that result too (shape refinement reads the
    module only if it verifies), and so on along markers of markers. (Found through the arguments' uses: a
    bounded program has ~20000 ops.)"""
    block = fn.regions[0].blocks[0]
    todo = list(block.arguments)
    while todo:
        value = todo.pop()
        for use in value.uses:
            op = use.owner
            # (the parent op, not the block: jaxlib 0.6's bindings have no Operation.block)
            if op_name(op) != "stablehlo.optimization_barrier" or op.operation.parent != fn.operation:
                continue
            for operand, result in zip(op.operands, op.results):
                if result.type != operand.type:
                    result.set_type(operand.type)
                    todo.append(result)
