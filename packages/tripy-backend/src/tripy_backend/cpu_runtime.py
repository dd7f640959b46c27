"""Which XLA:CPU runtime compiles a program: the classic one (tripy's default) or the thunk one, and how a
program made of matrix-vector products is prepared for the thunk runtime.

XLA's classic CPU runtime emits a matrix-vector product (one operand a single row or column) as a loop of its
own; the thunk runtime (jax.jit's) runs its kernels on all cores. A program whose products are
all matrix-vector ones and that reads big matrices is bound by how fast those matrices stream from memory, and
runs at least as fast on the thunk runtime: a GPT-2 small decoding step (74 such products, 500 MB of weights)
took 54 ms there against 71 ms on the classic runtime on a loaded 2-core machine, and 38-39 ms on both when the
machine was quiet.

Convolutions with big kernels also run faster on the thunk runtime. The classic runtime calls oneDNN, which
copies each kernel into its blocked layout on every call (XLA keeps no prepacked weights); the thunk runtime's
Eigen convolutions read the ``[*kernel, C, O]`` kernels ``tp.Conv`` passes as stored. ResNet-18 at batch 1
(11M kernel elements) ran in 49 ms instead of 71 (interleaved in one process, 2-core VM; at batch 8 both took
318 ms); a single 3x3 convolution of 512 channels at 7x7 in 4.4 ms instead of 7.8, while one of 64 channels
at 56x56 (37K kernel elements) took 3.7 ms against the classic runtime's 3.4.

Every other program keeps the classic runtime, whose oneDNN matrix products and single compiled function win on
matrix-matrix work and small programs.

For the thunk runtime, each big matrix-vector product's vector operand and result are kept out of XLA's fusions
(``isolate_matrix_vector_products``). XLA:CPU otherwise fuses the ops that make the vector (a LayerNorm, a GELU)
into the product's loop, where they are computed again for every row of the matrix, and fuses a bias add into
the product, whose kernel then copies the matrix (transposed) on every call. Isolated, a product is a loop that
reads each row of an ``[out, in]`` weight as stored (``tp.compile`` leaves the weights of a program of one-row
products in that layout: ``tripy_frontend/compiler/hoisting.py``). With both, a GPT-2 small decoding step took
25-26 ms instead of ~32 on the 2-core VM.
"""

from __future__ import annotations

import math

# Matrix elements that matrix-vector products must read, in all, before a program is worth the thunk
# runtime (4 MiB of float32; below that the matrices stay in the CPU's caches and one thread keeps up).
MATRIX_VECTOR_ELEMENTS = 1 << 20

# Kernel elements that convolutions must read, in all, before a program is worth the thunk runtime (below
# that, the classic runtime's per-call copy of the kernels costs less than its oneDNN kernels save).
CONVOLUTION_KERNEL_ELEMENTS = 1 << 20


def requested() -> str:
    """``TRIPY_XLA_CPU_RUNTIME``: ``auto`` (the default: the choice below), ``classic`` or ``thunk`` (every program)."""
    import os

    return os.environ.get("TRIPY_XLA_CPU_RUNTIME", "auto")


def policy() -> str:
    """What decides the runtime, for the compiler fingerprint (a new policy must not load old cache entries)."""
    return f"{requested()}:matvec-conv-thunk-v3"


def uses_thunk_runtime(module_bytes: bytes) -> bool:
    """Whether the StableHLO module compiles for the thunk runtime (``TRIPY_XLA_CPU_RUNTIME`` or the choice
    of ``prefers_thunk_runtime``)."""
    runtime = requested()
    return runtime == "thunk" or (runtime == "auto" and prefers_thunk_runtime(module_bytes))


def prefers_thunk_runtime(module_bytes: bytes) -> bool:
    """True if the StableHLO module (bytecode or text) has no matrix-matrix product, and its matrix-vector
    products read at least ``MATRIX_VECTOR_ELEMENTS`` matrix elements or its convolutions at least
    ``CONVOLUTION_KERNEL_ELEMENTS`` kernel elements, in all."""
    if b"dot_general" not in module_bytes and b"convolution" not in module_bytes:  # (op names are text in bytecode too)
        return False
    from jax.extend.mlir import ir

    from tripy_flatir.mlir_utils import context

    matrix = kernel = 0
    with context():
        module = ir.Module.parse(module_bytes)
        for op in _walk(module.operation):
            if op.name == "stablehlo.dot_general":
                elements = _matrix_elements(op)
                if elements is None:
                    return False
                matrix += elements
            elif op.name == "stablehlo.convolution":
                shape = ir.RankedTensorType(op.operands[1].type).shape
                kernel += math.prod(shape) if all(d >= 0 for d in shape) else 0
    return matrix >= MATRIX_VECTOR_ELEMENTS or kernel >= CONVOLUTION_KERNEL_ELEMENTS


# Matrix elements of a matrix-vector product before its vector is worth isolating.
ISOLATE_ELEMENTS = 1 << 16


def isolate_matrix_vector_products(module_bytes: bytes) -> bytes:
    """The module with the vector operand and the result of each matrix-vector product (unbatched, floating
    point, a matrix of at least ``ISOLATE_ELEMENTS`` elements) passed through an exact identity XLA:CPU does not
    fuse through: a sum over a new axis of size two, the value and a zero. (XLA drops optimization barriers
    before fusing.) The sums run over a few thousand elements, next to a product that reads millions."""
    from jax.extend.mlir import ir

    from tripy_flatir.mlir_utils import bytecode, context

    with context():
        module = ir.Module.parse(module_bytes)
        products = [op for op in _walk(module.operation) if op.name == "stablehlo.dot_general" and _isolable(op)]
        for product in products:
            vector = 0 if _free_elements(product, 0) == 1 else 1
            with ir.InsertionPoint(product), product.location:
                product.operands[vector] = _unfusable_identity(product.operands[vector])[-1].result
                _, grown, padded, total = _unfusable_identity(product.result)
            grown.operation.move_after(product)  # (made before the product, whose result they read)
            padded.operation.move_after(grown.operation)
            total.operation.move_after(padded.operation)
            product.result.replace_all_uses_except(total.result, grown.operation)
        return bytecode(module) if products else module_bytes


def _unfusable_identity(value: object) -> list:
    """Ops computing ``sum([value, 0], axis=0)``: a zero, a reshape adding the axis, a pad, a reduce (in order)."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    vtype = ir.RankedTensorType(value.type)  # type: ignore[attr-defined]
    scalar = ir.RankedTensorType.get([], vtype.element_type)
    rank = len(vtype.shape)
    zero = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(vtype.element_type, 0.0)))
    grown = stablehlo.ReshapeOp(ir.RankedTensorType.get([1, *vtype.shape], vtype.element_type), value)
    padded = stablehlo.PadOp(grown, zero, [0] * (rank + 1), [1] + [0] * rank, [0] * (rank + 1))
    total = stablehlo.ReduceOp([vtype], [padded.result], [zero.result], [0])
    body = total.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(body):
        stablehlo.ReturnOp([stablehlo.AddOp(*body.arguments).result])
    return [zero, grown, padded, total]


def _isolable(op: object) -> bool:
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    matrix = _matrix_elements(op)
    if matrix is None or matrix < ISOLATE_ELEMENTS:
        return False
    dims = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])  # type: ignore[attr-defined]
    element = ir.RankedTensorType(op.result.type).element_type  # type: ignore[attr-defined]
    return not dims.lhs_batching_dimensions and ir.FloatType.isinstance(element)


def _free_elements(op: object, operand: int) -> int:
    """The elements of `op`'s operand `operand` outside its batch and contracting dims."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    dims = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])  # type: ignore[attr-defined]
    shape = ir.RankedTensorType(op.operands[operand].type).shape  # type: ignore[attr-defined]
    skip = ((dims.lhs_batching_dimensions, dims.lhs_contracting_dimensions) if operand == 0 else
            (dims.rhs_batching_dimensions, dims.rhs_contracting_dimensions))
    return math.prod(d for i, d in enumerate(shape) if i not in (*skip[0], *skip[1]))


def _matrix_elements(op: object) -> "int | None":
    """The elements of the matrix operand of a matrix-vector `op` (batch dims included); None if `op` is
    not a matrix-vector product or has dynamic shapes."""
    from jax.extend.mlir import ir

    lhs, rhs = (ir.RankedTensorType(v.type).shape for v in op.operands)  # type: ignore[attr-defined]
    if any(d < 0 for d in (*lhs, *rhs)):
        return None
    lhs_free, rhs_free = _free_elements(op, 0), _free_elements(op, 1)
    if min(lhs_free, rhs_free) != 1:
        return None
    return math.prod(lhs) if lhs_free > 1 else math.prod(rhs)


def _walk(operation: object):  # type: ignore[no-untyped-def]
    for region in operation.regions:  # type: ignore[attr-defined]
        for block in region.blocks:
            for op in block.operations:
                yield op.operation
                yield from _walk(op.operation)
