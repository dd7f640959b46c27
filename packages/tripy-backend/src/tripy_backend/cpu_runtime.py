"""Which XLA:CPU runtime compiles a program: the classic one (tripy's default) or the thunk one.

XLA's classic CPU runtime emits a matrix-vector product (one operand a single row or column) as a loop of its
own; the thunk runtime (jax.jit's) calls Eigen, which splits it over the cores. A program whose products are
all matrix-vector ones and that reads big matrices is bound by how fast those matrices stream from memory, and
runs at least as fast on the thunk runtime: a GPT-2 small decoding step (74 such products, 500 MB of weights)
took 54 ms there against 71 ms on the classic runtime on a loaded 2-core machine, and 38-39 ms on both when the
machine was quiet. Every other program keeps the classic runtime, whose oneDNN matrix products and single
compiled function win on matrix-matrix work and small programs.
"""

from __future__ import annotations

import math

# Matrix elements that matrix-vector products must read, in all, before a program is worth the thunk
# runtime (4 MiB of float32; below that the matrices stay in the CPU's caches and one thread keeps up).
MATRIX_VECTOR_ELEMENTS = 1 << 20


def requested() -> str:
    """``TRIPY_XLA_CPU_RUNTIME``: ``auto`` (the default: the choice below), ``classic`` or ``thunk`` (every program)."""
    import os

    return os.environ.get("TRIPY_XLA_CPU_RUNTIME", "auto")


def policy() -> str:
    """What decides the runtime, for the compiler fingerprint (a new policy must not load old cache entries)."""
    return f"{requested()}:matvec-thunk-v1"


def prefers_thunk_runtime(module_bytes: bytes) -> bool:
    """True if every matrix product of the StableHLO module (bytecode or text) is a matrix-vector one and
    together they read at least ``MATRIX_VECTOR_ELEMENTS`` matrix elements."""
    if b"dot_general" not in module_bytes:  # (op names are stored as text in bytecode too)
        return False
    from jax.extend.mlir import ir

    from tripy_flatir.mlir_utils import context

    elements = 0
    with context():
        module = ir.Module.parse(module_bytes)
        for op in _walk(module.operation):
            if op.name != "stablehlo.dot_general":
                continue
            matrix = _matrix_elements(op)
            if matrix is None:
                return False
            elements += matrix
    return elements >= MATRIX_VECTOR_ELEMENTS


def _matrix_elements(op: object) -> "int | None":
    """The elements of the matrix operand of a matrix-vector `op` (batch dims included); None if `op` is
    not a matrix-vector product or has dynamic shapes."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    dims = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])  # type: ignore[attr-defined]
    lhs, rhs = (ir.RankedTensorType(v.type).shape for v in op.operands)  # type: ignore[attr-defined]
    if any(d < 0 for d in (*lhs, *rhs)):
        return None
    lhs_free = math.prod(d for i, d in enumerate(lhs) if i not in (*dims.lhs_batching_dimensions,
                                                                    *dims.lhs_contracting_dimensions))
    rhs_free = math.prod(d for i, d in enumerate(rhs) if i not in (*dims.rhs_batching_dimensions,
                                                                    *dims.rhs_contracting_dimensions))
    if min(lhs_free, rhs_free) != 1:
        return None
    return math.prod(lhs) if lhs_free > 1 else math.prod(rhs)


def _walk(operation: object):  # type: ignore[no-untyped-def]
    for region in operation.regions:  # type: ignore[attr-defined]
        for block in region.blocks:
            for op in block.operations:
                yield op.operation
                yield from _walk(op.operation)
