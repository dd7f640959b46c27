"""Pass ``cse``, the last of a bounded program's shape passes: MLIR's common-subexpression elimination.

A module of dynamic shapes computes the same sizes many times over: the frontend lowers each read of a size, and
each shape built from sizes, where an op asks for it, and ``lower-markers`` reads a real size wherever it sets one.
XLA converts and optimizes a module in time about proportional to its ops; for GPT-2 small's bounded cover, CSE
leaves 4000 of 4600 ops (``TRIPY_DUMP_PASSES``; earlier, before the lowering stopped broadcasting operands of one
size and sizes were set after every op, 15400 of 18400, and XLA took 2.0-2.4 s on it instead of 2.5-2.8). Ops with
effects (custom calls) are kept; of ops merged, the first one's location stays."""

from __future__ import annotations

from jax.extend.mlir import ir, passmanager

from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend.passes import Job, Pass
from tripy_backend.passes.bounded_markers import bounded


def run(module_bytes: bytes, job: Job) -> bytes:
    with context():
        module = ir.Module.parse(module_bytes)
        passmanager.PassManager.parse("builtin.module(func.func(cse))").run(module.operation)
        return bytecode(module)


PASS = Pass("cse", run, bounded)
