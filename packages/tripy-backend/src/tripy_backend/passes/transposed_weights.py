"""Pass ``transposed-weights`` (a range's buckets, XLA:CPU): a product ``x @ W^T`` of few rows reads an ``[in, out]``
copy of its baked-in ``[out, in]`` weight, passed as an argument of its own, instead of transposing it in the program.

``tp.compile`` evaluates such copies once where a product's rows are static and few (``plan.WeightPlan``); where
they are not static (a range of sizes), it leaves the transposes in the program, and each bucket's static shapes
decide here, with the same rules (``cpu_plan.keeps_transposed_weight``) asked for the rows of the bucket's smallest
call (``Job.lows``: a bucket of bound 32 runs 17 to 32 rows; GPT-2 small at 17 tokens in it took 1.6x the time of a
program for exactly 17 with the weights as stored, 1.4x with copies; the range's cover, which ``tp.compile`` waits
for, is asked at its bounds). A bucket of many rows reads the weight as stored, as fast as a copy, and needs none,
so that the cover of a wide range compiles without waiting for copies. In a bucket of fewer rows, each
``transpose`` of a baked-in argument (``Job.fixed`` on) that a product reads becomes a new argument after all the
others, of the transposed type; ``Job.transposed`` lists the arguments whose copies it takes, in order.
``ranges.RangeProgram`` makes the copies once (with `copies_module`, a program of the transposes alone) and its
launchers pass them."""

from __future__ import annotations

import math
from typing import Any, List

from jax.extend.mlir import ir

from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan
from tripy_backend.passes import Job, Pass
from tripy_backend.passes.markers import main, op_name, set_function_type


def run(module_bytes: bytes, job: Job) -> bytes:
    if b"transpose" not in module_bytes or b"dot_general" not in module_bytes:  # (op names are text in bytecode too)
        return module_bytes
    with context():
        module = ir.Module.parse(module_bytes)
        fn = main(module)
        block = fn.regions[0].blocks[0]
        program_runtime = cpu_plan.runtime(*cpu_plan.products_and_kernels_of(module.operation))
        share = _smallest_share(job)
        found = []
        for k in range(job.fixed, len(job.shapes)):
            for use in block.arguments[k].uses:
                if op_name(use.owner) == "stablehlo.transpose" and _reads_copy(use.owner, program_runtime, share):
                    found.append((k, use.owner))
        if not found:
            return module_bytes
        copies = {}
        for k, transpose in found:
            if k not in copies:  # (two transposes of one weight read one copy)
                copies[k] = block.add_argument(transpose.result.type, transpose.location)
            transpose.result.replace_all_uses_with(copies[k])
            transpose.operation.erase()
        job.transposed = list(copies)
        set_function_type(fn)
        if "arg_attrs" in fn.attributes:  # (one entry per argument)
            attrs: List[Any] = list(fn.attributes["arg_attrs"])
            fn.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs + [ir.DictAttr.get({})] * len(copies))
        return bytecode(module)


def copies_module(module_bytes: bytes, transposed: List[int]) -> bytes:
    """A program that takes the arguments `transposed` of `module_bytes` (2-D, static) and returns their copies, in
    order: what a bucket that this pass rewrote reads instead."""
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)  # (kept: its blocks go with it)
        block = main(module).regions[0].blocks[0]
        types = [ir.RankedTensorType(block.arguments[k].type) for k in transposed]
        outs = [ir.RankedTensorType.get(list(reversed(t.shape)), t.element_type) for t in types]
        body = "".join(
            f"  %t{i} = stablehlo.transpose %a{i}, dims = [1, 0] : ({t}) -> {o}\n"
            for i, (t, o) in enumerate(zip(types, outs))
        )
        signature = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
        results = ", ".join(map(str, outs))
        text = (
            f"func.func @main({signature}) -> ({results}) {{\n{body}"
            f"  return {', '.join(f'%t{i}' for i in range(len(types)))} : {results}\n}}"
        )
        return bytecode(ir.Module.parse(text))


def _smallest_share(job: Job) -> float:
    """The share of the bucket's rows that its smallest call has: the caller's inputs' elements at the bucket's
    smallest shapes over those at its bounds (1 for a bucket of one shape)."""
    if job.lows is None:
        return 1.0
    bounds, lows = (sum(math.prod(s) for s in shapes[: job.fixed]) for shapes in (job.shapes, job.lows))
    return lows / bounds if bounds else 1.0


def _reads_copy(transpose: Any, program_runtime: str, share: float) -> bool:
    """Whether `transpose` (of an argument) is a 2-D weight's that a product of this program reads better as a copy,
    at `share` of its rows (see `_smallest_share`)."""
    value = transpose.result
    shape = ir.RankedTensorType(value.type).shape
    if len(shape) != 2 or [int(d) for d in transpose.attributes["permutation"]] != [1, 0]:
        return False
    elements = shape[0] * shape[1]
    for use in value.uses:
        op = use.owner
        if op_name(op) == "stablehlo.dot_general":
            rows = cpu_plan.product(op).rows
            if rows >= 0 and not cpu_plan.keeps_transposed_weight(max(1, int(rows * share)), elements, program_runtime):
                return True
    return False


def applies(job: Job) -> bool:
    return job.platform == "cpu" and job.fixed >= 0


PASS = Pass("transposed-weights", run, applies)
