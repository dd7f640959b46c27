"""Pass ``sums-as-products`` (XLA:CPU): a float32 sum over dims that kept dims separate (a GroupNorm's, channels-last:
``[N, H, W, groups, channels]`` summed over ``H, W`` and the channels), of values stored in memory anyway, becomes
a product with a vector of ones, then a small sum. XLA:CPU rewrites a sum with a summed dim longer than 32 into a
windowed sum for accuracy (``TreeReductionRewriter``), whose loop over such interleaved dims ran at ~1 GFLOP/s on
one core: a GroupNorm's mean over a 128x128 image took 0.4 ms, where a product (XLA's matrix kernels: vectorized,
blocked sums) takes 0.05 ms; the small U-Net of ``benchmarks/peers/convnet.py`` ran ~10% faster.

Which sums: the values must be stored in memory anyway: an argument, a convolution's or product's result, a value
other ops read too, or values computed from a broadcast one (a GroupNorm's squared deviations from its mean): XLA
stores those before its windowed sum (seen in its optimized programs, jaxlib 0.6.2 and 0.10.2), and their sum as a
product took the U-Net 5-10% less time. Values XLA may compute inside the sum's loop stay sums: jaxlib 0.10's
YNNPACK fusions take the squares of an argument and their sum as one, which a product that first stores them made
2.4-4x slower where the kept dims were long. A sum over one run of adjacent dims also stays (XLA's own was as fast,
or faster, in the cases measured).

How: the longest run of adjacent summed dims is contracted with ones, the operand grouped (a free reshape) into
``[before, run, after]``: ``[before, run]`` times ones where nothing follows the run, ones times ``[run, after]``
where nothing precedes it, else a batch of the latter (at most `MAX_BATCH`). The other summed dims are summed
after, from the product's much smaller result."""

from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan, op_facts
from tripy_backend.passes import Job, Pass

WINDOW = 32  # XLA:CPU's TreeReductionRewriter leaves a sum alone if each summed dim is at most this long
MAX_BATCH = 64  # products side by side, for a run of summed dims in the middle of the shape


def on_cpu(job: Job) -> bool:
    return job.platform == "cpu"


def rewrite(module_bytes: bytes, job: Job) -> bytes:
    """The module with each sum this pass takes (see the module docstring) computed by a product; unchanged (the
    same bytes) if it has none."""
    if b"reduce" not in module_bytes:  # (op names are text in bytecode too)
        return module_bytes
    with context():
        module = ir.Module.parse(module_bytes)
        sums = [(op, plan) for op in cpu_plan.walk(module.operation) for plan in [_plan(op)] if plan is not None]
        for op, (run, others) in sums:
            _as_product(op, run, others)
        if not sums:
            return module_bytes
        logger.log(f"[compile] sums-as-products: {len(sums)} sum(s) as products with ones", "compile")
        return bytecode(module)


def _plan(op: Any) -> Optional[Tuple[List[int], List[int]]]:
    """(the contracted run, the other summed dims) for a sum this pass rewrites, else None."""
    if op.name != "stablehlo.reduce" or len(op.operands) != 2:
        return None
    vtype = ir.RankedTensorType(op.operands[0].type)
    if (
        str(vtype.element_type) != "f32"
        or not vtype.has_static_shape
        or not cpu_plan.is_sum(op)
        or not _stored(op.operands[0])
    ):
        return None
    shape = list(vtype.shape)
    summed = sorted(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    runs = _runs(summed)
    if len(runs) < 2 or all(shape[d] <= WINDOW for d in summed):
        return None
    run = max(runs, key=lambda r: math.prod(shape[d] for d in r))
    if math.prod(shape[: run[0]]) > MAX_BATCH and run[-1] < len(shape) - 1:
        return None
    return run, [d for d in summed if d not in run]


def _stored(value: Any) -> bool:
    """Whether XLA stores `value` in memory anyway (see the module docstring): an argument, the result of an op it
    does not fuse into a sum, a value read by other ops too, or one computed from a broadcast value."""
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.name in cpu_plan.UNFUSED:
        return True
    return len(list(value.uses)) > 1 or _reads_a_broadcast(owner)


def _reads_a_broadcast(op: Any, depth: int = 4) -> bool:
    """Whether elementwise `op` reads a computed value broadcast to more elements (not a constant's), directly or
    through elementwise ops (at most `depth` deep)."""
    if op.name not in op_facts.ELEMENTWISE or depth == 0:
        return False
    for operand in op.operands:
        owner = operand.owner
        if not isinstance(owner, (ir.Operation, ir.OpView)):
            continue
        if owner.name == "stablehlo.broadcast_in_dim":
            source, result = ir.RankedTensorType(owner.operands[0].type), ir.RankedTensorType(operand.type)
            computed = getattr(owner.operands[0].owner, "name", None) != "stablehlo.constant"
            if computed and source.has_static_shape and result.has_static_shape and _size(source) < _size(result):
                return True
        elif _reads_a_broadcast(owner, depth - 1):
            return True
    return False


def _size(t: Any) -> int:
    return math.prod(t.shape)


def _runs(dims: Sequence[int]) -> List[List[int]]:
    """`dims` (sorted) split into runs of adjacent dims."""
    runs: List[List[int]] = []
    for d in dims:
        if runs and runs[-1][-1] == d - 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    return runs


def _as_product(op: Any, run: List[int], others: List[int]) -> None:
    """Replace sum `op` by a product over the summed dims `run`, then a sum of its result over the `others`."""
    x, zero = op.operands
    vtype = ir.RankedTensorType(x.type)
    shape, f32 = list(vtype.shape), vtype.element_type
    kept = [d for d in range(len(shape)) if d not in run]
    with ir.InsertionPoint(op), op.location:
        product = _reshaped(_product(x, shape, run, f32), [shape[d] for d in kept], f32)
        total = cpu_plan.sum_op(product, zero, [kept.index(d) for d in others])
    op.results[0].replace_all_uses_with(total.result)
    op.operation.erase()


def _product(x: Any, shape: List[int], run: List[int], f32: Any) -> Any:
    """``x`` contracted over `run` with ones, as a product of at most three dims that XLA takes as one of its
    matrix kernels' (the reshapes are free: they group adjacent dims): ``[rows, run]`` times ones ``[run, 1]``,
    ones ``[1, run]`` times ``[run, columns]``, or a batch of the latter. Its result holds the dims outside `run`,
    in order. (The ones keep a dim of 1: a product where an operand has contracted dims only is one that XLA may
    turn back into a sum.)"""
    before, size, after = math.prod(shape[: run[0]]), math.prod(shape[d] for d in run), math.prod(shape[run[-1] + 1 :])
    if after == 1:  # rows times a vector of ones
        lhs, rhs = _reshaped(x, [before, size], f32), _ones([size, 1], f32)
        dims = _dims([], [1], [0])
    elif before == 1:  # ones times columns
        lhs, rhs = _ones([1, size], f32), _reshaped(x, [size, after], f32)
        dims = _dims([], [1], [0])
    else:  # a batch of the latter
        lhs, rhs = _ones([before, 1, size], f32), _reshaped(x, [before, size, after], f32)
        dims = _dims([0], [2], [1])
    result = [before, 1, after] if before > 1 and after > 1 else [before, after]
    return stablehlo.DotGeneralOp(ir.RankedTensorType.get(result, f32), lhs, rhs, dims).result


def _reshaped(x: Any, shape: List[int], f32: Any) -> Any:
    return stablehlo.ReshapeOp(ir.RankedTensorType.get(shape, f32), x).result


def _dims(batch: List[int], lhs: List[int], rhs: List[int]) -> Any:
    return stablehlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=batch,
        rhs_batching_dimensions=batch,
        lhs_contracting_dimensions=lhs,
        rhs_contracting_dimensions=rhs,
    )


def _ones(shape: List[int], f32: Any) -> Any:
    one = stablehlo.ConstantOp(
        ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], f32), ir.FloatAttr.get(f32, 1.0))
    )
    return stablehlo.BroadcastInDimOp(ir.RankedTensorType.get(shape, f32), one.result, []).result


PASS = Pass("sums-as-products", rewrite, on_cpu)
