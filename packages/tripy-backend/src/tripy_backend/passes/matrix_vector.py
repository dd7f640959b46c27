"""Pass ``matrix-vector-isolation`` (XLA:CPU's thunk runtime): each big matrix-vector product's vector operand
and result are kept out of XLA's fusions. XLA:CPU otherwise fuses the ops that make the vector (a LayerNorm, a
GELU) into the product's loop, where they are computed again for every row of the matrix, and fuses a bias add
into the product, whose kernel then copies the matrix (transposed) on every call. Isolated, a product is a loop
that reads each row of an ``[out, in]`` weight as stored (the Performance guide has the measurements)."""

from __future__ import annotations

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan
from tripy_backend.passes import Job, Pass


def on_thunk_runtime(job: Job) -> bool:
    return job.platform == "cpu" and job.runtime == "thunk"


def isolate(module_bytes: bytes, job: Job) -> bytes:
    """The module with the vector operand and the result of each matrix-vector product (unbatched, floating
    point, a matrix of at least ``cpu_plan.ISOLATE_ELEMENTS`` elements) passed through an exact identity XLA:CPU
    does not fuse through: a sum over a new axis of size two, the value and a zero. (XLA drops optimization
    barriers before fusing.) The sums run over a few thousand elements, next to a product that reads millions."""
    if b"dot_general" not in module_bytes:  # (op names are text in bytecode too)
        return module_bytes
    with context():
        module = ir.Module.parse(module_bytes)
        products = [
            op for op in cpu_plan.walk(module.operation) if op.name == "stablehlo.dot_general" and _isolable(op)
        ]
        for dot in products:
            vector = 0 if cpu_plan.free_elements(dot, 0) == 1 else 1
            with ir.InsertionPoint(dot), dot.location:
                dot.operands[vector] = _unfusable_identity(dot.operands[vector])[-1].result
                _, grown, padded, total = _unfusable_identity(dot.result)
            grown.operation.move_after(dot)  # (made before the product, whose result they read)
            padded.operation.move_after(grown.operation)
            total.operation.move_after(padded.operation)
            dot.result.replace_all_uses_except(total.result, grown.operation)
        return bytecode(module) if products else module_bytes


def _unfusable_identity(value: object) -> list:
    """Ops computing ``sum([value, 0], axis=0)``: a zero, a reshape adding the axis, a pad, a reduce (in order)."""
    vtype = ir.RankedTensorType(value.type)  # type: ignore[attr-defined]
    scalar = ir.RankedTensorType.get([], vtype.element_type)
    rank = len(vtype.shape)
    zero = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(vtype.element_type, 0.0)))
    grown = stablehlo.ReshapeOp(ir.RankedTensorType.get([1, *vtype.shape], vtype.element_type), value)
    padded = stablehlo.PadOp(grown, zero, [0] * (rank + 1), [1] + [0] * rank, [0] * (rank + 1))
    return [zero, grown, padded, cpu_plan.sum_op(padded.result, zero.result, [0])]


def _isolable(op: object) -> bool:
    product = cpu_plan.product(op)
    if product.rows != 1 or product.matrix_elements < cpu_plan.ISOLATE_ELEMENTS:
        return False
    dims = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])  # type: ignore[attr-defined]
    element = ir.RankedTensorType(op.result.type).element_type  # type: ignore[attr-defined]
    return not dims.lhs_batching_dimensions and isinstance(element, ir.FloatType)


PASS = Pass("matrix-vector-isolation", isolate, on_thunk_runtime)
