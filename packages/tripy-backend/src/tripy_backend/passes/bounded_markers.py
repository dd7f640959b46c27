"""Pass ``bounded-markers``, the first of a bounded program's three (then ``static-shapes`` and ``lower-markers``).

XLA compiles static shapes, but its dynamic padder handles *bounded* dims: ``set_dimension_size`` gives the real
size of a dim of a buffer padded to its bound, and XLA masks reductions, softmax and matrix products over the
padding. The three passes turn tripy's shape-polymorphic module (``?`` dims, shape arithmetic on
``get_dimension_size``) into such a program for one *bucket* (``Job.shapes``: the bounds of each input).

This pass gives every value computed from dim sizes a *run-time twin*: each ``get_dimension_size`` is replaced by
the real size of its operand's dim as the program's shape arithmetic gives it (``real_sizes``: an input's real
size, an elementwise result's operand sizes, a concatenation's sum, a dynamic op's shape operand...), and each op
that uses dim values as data (anything but the result shape of a dynamic op) is cloned onto the twins. The
originals fold to the bucket's bounds in ``static-shapes`` and give every tensor its static (padded) type; the
twins compute the real sizes at run time. The real size of each dynamic output dim is returned as one more output
(an ``i32`` vector; ``Job.out_dims`` says which dims), computed the same way: never read back from the result,
whose real size XLA loses where it folds it to a constant. What needs a real size at run time gets a marker
(``markers``) that ``lower-markers`` turns into ops.

A window, sort, reverse, pad or indexed gather that reads across a padded dim (``real_sizes.READS_ACROSS``) must
not read the padding as data: ``masked_reads`` marks what XLA does not mask itself. Ops whose run-time *values*
depend on sizes in ways no rule covers (a sort over a padded dim, a pad by a size-dependent amount) raise
``Unsupported``; the range then gets a static program per shape (see ``ranges``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func, stablehlo

from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import op_facts
from tripy_backend.passes import Job, Pass, masked_reads
from tripy_backend.passes.markers import (
    DIM_MARKER,
    SET_DIMS,
    SIZES,
    SLICE,
    SOURCE_DIMS,
    SmallSize,
    Unsupported,
    element,
    is_dynamic,
    main,
    op_name,
    set_function_type,
)
from tripy_backend.passes.real_sizes import READS_ACROSS, RealSizes, gather_operand_dim

# Ops that need no real sizes set on their operands (see `_mark_sizes`): elementwise ones, and the dim reads.
_NO_SIZES_NEEDED = op_facts.ELEMENTWISE | {"stablehlo.get_dimension_size"}
_SETS_SHAPE = ("stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_reshape", "stablehlo.dynamic_iota")


def run(module_bytes: bytes, job: Job) -> bytes:
    """Twins and markers for the bucket `job.shapes` (see the module docstring); sets ``job.out_dims``. Raises
    `SmallSize` for a bucket where an input is empty while others are padded."""
    if any(job.shapes[i][d] == 0 for i, d in job.dynamic_dims):
        # An empty input next to padded dims: XLA's dynamic padder divides by sizes of 0 (SIGFPE).
        raise SmallSize("an input is empty in this bucket while others are padded")
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = main(module)
        lows = {(a, d): job.lows[a][d] for a, d in job.dynamic_dims} if job.lows else None
        job.out_dims = _add_twins(fn, {(a, d): job.shapes[a][d] for a, d in job.dynamic_dims}, lows)
        set_function_type(fn)
        return bytecode(module)


def bounded(job: Job) -> bool:
    """Whether `job` is a bounded program that needs markers (one whose rows are independent needs none)."""
    return bool(job.dynamic_dims) and not job.rows


PASS = Pass("bounded-markers", run, bounded)


def _add_twins(
    fn: Any, input_bounds: Dict[Tuple[int, int], int], input_lows: Optional[Dict[Tuple[int, int], int]] = None
) -> List[List[int]]:
    """Clone the dim-value computations onto run-time sizes; mark the ops whose results need their real
    sizes; return each output's real sizes (``real_sizes``) as one more output. Returns the dynamic dims of
    each output. `input_bounds`, `input_lows`: the bucket's bound and smallest size of each dynamic input dim."""
    block = fn.regions[0].blocks[0]
    twin: Dict[Any, Any] = {}
    sizes = RealSizes(twin, input_bounds, input_lows)
    checks: List[Any] = []  # i1 scalars: whether the input shapes fit the program's shape arithmetic
    ops = list(block.operations)
    with ir.InsertionPoint(ops[0]):
        for arg in block.arguments:
            sizes.visit_argument(arg, _dim_marker)
    for k, op in enumerate(ops):
        name = op_name(op)
        if name in op_facts.NOT_BOUNDED:
            raise Unsupported(f"{name} is not supported with bounded dims")
        if name in READS_ACROSS:
            masked_reads.mark_reads(op, name, sizes)
        if name == "func.return":
            return _return_sizes(op, twin, sizes, checks)
        if name != "stablehlo.get_dimension_size" and _unchanged(op, twin):
            continue
        with ir.InsertionPoint(ops[k + 1] if k + 1 < len(ops) else block):
            if name == "stablehlo.get_dimension_size":
                twin[op.results[0]] = sizes.i32(op.operands[0], ir.IntegerAttr(op.attributes["dimension"]).value)
                continue
            sizes.visit(op.operation)
            _twin_op(op, name, twin, sizes)
            _check_reshape_sizes(op, name, twin, sizes, checks)
            _mark_sizes(op, name, twin, sizes)
    raise Unsupported("the program has no func.return")


def _unchanged(op: Any, twin: Dict[Any, Any]) -> bool:
    """Whether `op` neither takes a value with a twin nor makes a result with a dynamic dim: then it gets no twin,
    no marker and no sizes (its results' sizes are their static types)."""
    for v in op.operands:
        if v in twin:
            return False
    for r in op.results:
        t = r.type
        if isinstance(t, ir.RankedTensorType) and any(n < 0 for n in t.shape):
            return False
    return True


def _dim_marker(value: Any, dim: int) -> Any:
    """A run-time read of an input's dim `dim` (an opaque marker until step 3)."""
    i32 = ir.IntegerType.get_signless(32)
    return stablehlo.CustomCallOp(
        [ir.RankedTensorType.get([], i32)], [value], DIM_MARKER, backend_config=ir.StringAttr.get(str(dim))
    ).results[0]


def _twin_op(op: Any, name: str, twin: Dict[Any, Any], sizes: RealSizes) -> None:
    """Clone `op` onto the twins of its data operands (if any) and mark it if its result takes run-time
    sizes (at the current insertion point, right after `op`)."""
    shape_pos = op_facts.SHAPE_OPERANDS.get(name, ())
    data = [i for i, v in enumerate(op.operands) if i not in shape_pos and v in twin]
    result_op = op
    if data:
        result_op = op.operation.clone(ip=ir.InsertionPoint.current)
        for i in data:
            result_op.operands[i] = twin[op.operands[i]]
        for r, c in zip(op.results, result_op.results):
            twin[r] = c
            sizes.alias(c, r)
    sized = [i for i in shape_pos if op.operands[i] in twin]
    if not sized:
        return
    if name == "stablehlo.dynamic_pad":
        raise Unsupported(f"{name} with sizes that depend on the input shapes")
    if name == "stablehlo.dynamic_gather":  # (its real sizes: real_sizes' rule, set by `_mark_sizes`)
        dn = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
        if any(gather_operand_dim(op, d) in dn.start_index_map for d in dn.offset_dims if is_dynamic(op.results[0], d)):
            raise Unsupported("a gather whose slice along an indexed dim depends on the input shapes")
        return
    result = result_op.results[0]
    if name == "stablehlo.dynamic_broadcast_in_dim" and _sizes_unneeded(op.results[0], twin):
        return  # (a scalar or a row broadcast for an elementwise op: that op takes its sizes from its other operands)
    dyn = _run_time_dims(result, sizes)
    source_dims: List[int] = []
    if name in _SETS_SHAPE:
        operands = [result, twin[op.operands[shape_pos[0]]]]
        attr = SET_DIMS
        if name == "stablehlo.dynamic_reshape":  # (its source's real sizes: to gather the real elements)
            source_dims = [d for d, size in enumerate(sizes.of(op.operands[0])) if not isinstance(size, int)]
            if sizes.known(op.operands[0], source_dims):
                operands += [sizes.i32(op.operands[0], d) for d in source_dims]
    else:  # real_dynamic_slice: source, run-time start, limit, strides
        operands = [result, op.operands[0]] + [twin.get(op.operands[i], op.operands[i]) for i in shape_pos]
        attr = SLICE
    marker = stablehlo.OptimizationBarrierOp(operands)
    marker.attributes[attr] = ir.DenseI64ArrayAttr.get(dyn)
    if len(operands) > 2 and attr == SET_DIMS:
        marker.attributes[SOURCE_DIMS] = ir.DenseI64ArrayAttr.get(source_dims)
    result.replace_all_uses_except(marker.results[0], marker.operation)
    sizes.alias(marker.results[0], result)
    if op.results[0] in twin:
        twin[op.results[0]] = marker.results[0]


def _run_time_dims(result: Any, sizes: RealSizes) -> List[int]:
    """The dims of `result` typed ``?`` whose size is not the same for all input sizes of the bucket."""
    return [
        d
        for d, size in enumerate(ir.RankedTensorType(result.type).shape)
        if size < 0 and not isinstance(sizes.of(result)[d], int)
    ]


def _mark_sizes(op: Any, name: str, twin: Dict[Any, Any], sizes: RealSizes) -> None:
    """Mark each result with dynamic dims (other than the results `_twin_op` marks) to get its real sizes set
    again, unless `op` is elementwise and only `_NO_SIZES_NEEDED` ops use it. XLA's dynamic padder tracks a padded
    value's real size through the ops, but loses it where the simplifier folds the value to a constant (``a >= a``
    on integers): a concatenation of that value would put the next operand after the padding. Setting the sizes on
    every value that reaches another kind of op (or the return) keeps them whatever folds; an elementwise op
    neither reads across its padding nor moves it, and a dim read gets its twin's size, so the values passed
    between them need none. The results of other ops keep theirs: XLA's own sizes for a window's result are wrong
    (``avgpool`` with ``count_include_pad=False`` over a padded height read the wrong rows without them). The one
    exception is `_twin_op`'s: a ``dynamic_broadcast_in_dim`` that only elementwise ops use gets no sizes at all
    (XLA sees its padded shape as static, and the op that uses it takes its sizes from its other operands)."""
    if (
        name in op_facts.SHAPE_OPERANDS and name != "stablehlo.dynamic_gather"
    ) or name == "stablehlo.optimization_barrier":
        return
    for result in op.results:
        if not isinstance(result.type, ir.RankedTensorType):
            continue
        dyn = _run_time_dims(result, sizes)
        if not dyn or not sizes.known(result, dyn):
            continue
        if name in op_facts.ELEMENTWISE and _sizes_unneeded(result, twin):
            continue
        value = twin.get(result, result)  # (a result computed from dim values: its run-time twin carries it)
        marker = stablehlo.OptimizationBarrierOp([value] + [sizes.i32(result, d) for d in dyn])
        marker.attributes[SIZES] = ir.DenseI64ArrayAttr.get(dyn)
        value.replace_all_uses_except(marker.results[0], marker.operation)
        sizes.alias(marker.results[0], result)
        if result in twin:
            twin[result] = marker.results[0]


def _sizes_unneeded(result: Any, twin: Dict[Any, Any]) -> bool:
    """Whether only `_NO_SIZES_NEEDED` ops use `result` (and it holds data, not dim values)."""
    return result not in twin and all(op_name(use.owner) in _NO_SIZES_NEEDED for use in result.uses)


def _check_reshape_sizes(op: Any, name: str, twin: Dict[Any, Any], sizes: RealSizes, checks: List[Any]) -> None:
    """A reshape to a shape computed from the input sizes holds as many elements as its source only for
    some input shapes (``reshape(x, (2, -1))`` of an odd number of rows): eager mode and a static program
    reject the others. Adds the check for the real sizes to `checks`."""
    if name != "stablehlo.dynamic_reshape" or op.operands[1] not in twin:
        return
    source, shape = op.operands[0], twin[op.operands[1]]
    rank = len(ir.RankedTensorType(source.type).shape)
    if not sizes.known(source, list(range(rank))):
        return
    counts = []
    for factors in (
        [sizes.i32(source, d) for d in range(rank)],
        [element(shape, d) for d in range(ir.RankedTensorType(shape.type).shape[0])],
    ):
        count = factors[0] if factors else sizes.i32(source, 0)
        for f in factors[1:]:
            count = stablehlo.MulOp(count, f).result
        counts.append(count)
    checks.append(stablehlo.CompareOp(counts[0], counts[1], stablehlo.ComparisonDirectionAttr.get("EQ")).result)


def _return_sizes(ret: Any, twin: Dict[Any, Any], sizes: RealSizes, checks: List[Any]) -> List[List[int]]:
    """Return the twins of returned dim values, and the real size of each dynamic output dim as one more
    output (an ``i32`` vector), computed before `ret`. Returns the dynamic dims of each output. If the
    program has `checks` (see `_check_reshape_sizes`), the vector ends with 1 where they hold, 0 where not,
    and the dims returned end with ``[-1]`` (``ranges.BoundedLauncher`` reads it)."""
    outputs = [twin.get(v, v) for v in ret.operands]
    out_dims = [[d for d, size in enumerate(ir.RankedTensorType(v.type).shape) if size < 0] for v in outputs]
    with ir.InsertionPoint(ret):
        one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
        parts = [stablehlo.ReshapeOp(one, sizes.i32(v, d)).result for v, dims in zip(outputs, out_dims) for d in dims]
        if checks:
            ok = checks[0]
            for c in checks[1:]:
                ok = stablehlo.AndOp(ok, c).result
            parts.append(
                stablehlo.ReshapeOp(
                    one, stablehlo.ConvertOp(ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)), ok).result
                ).result
            )
            out_dims.append([-1])
        if parts:
            outputs.append(parts[0] if len(parts) == 1 else stablehlo.ConcatenateOp(parts, 0).result)
        func.ReturnOp(outputs)
    ret.operation.erase()
    return out_dims
