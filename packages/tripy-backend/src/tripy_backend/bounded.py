"""Bounded programs: one compiled program runs every input shape up to a bound.

XLA compiles static shapes, but its dynamic padder handles *bounded* dims: ``set_dimension_size`` gives
the real size of a dim of a buffer padded to its bound, and XLA masks reductions, softmax and matrix
products over the padding. `bound_module` turns tripy's shape-polymorphic module (``?`` dims, shape
arithmetic on ``get_dimension_size``) into such a program for one *bucket* (a static bound per input):

1. Every value computed from dim sizes gets a *run-time twin*: each ``get_dimension_size`` is replaced by
   the real size of its operand's dim as the program's shape arithmetic gives it (``real_sizes``: an
   input's real size, an elementwise result's operand sizes, a concatenation's sum, a dynamic op's shape
   operand...), and each op that uses dim values as data (anything but the result shape of a dynamic op)
   is cloned onto the twins. The originals fold to the bucket's bounds in step 2 and give every tensor
   its static (padded) type; the twins compute the real sizes at run time. The real size of each dynamic
   output dim is returned as one more output (an ``i32`` vector), computed the same way: never read
   back from the result, whose real size XLA loses where it folds it to a constant.
2. The arguments take the bucket's static shapes; StableHLO shape refinement makes every type static.
3. The markers become real ops: the inputs' real sizes are extra ``i32`` arguments, set with
   ``set_dimension_size``; an input's dim read is ``get_dimension_size`` of a bounded view (XLA answers
   with the real size); the results of dynamic broadcasts, iotas and reshapes get their real sizes set; a
   slice whose start depends on a size becomes a ``dynamic_slice`` at the run-time start.
   XLA writes a dynamic output compactly at the start of its padded buffer.

A window, sort, reverse, pad or indexed gather that reads across a padded dim (``real_sizes.READS_ACROSS``)
must not read the padding as data. Over a dim it only runs along (a batch) each real row reads real rows
only. Over a padded image dim, ``masked_reads`` says which XLA masks itself (pooling, constant pads, flips) and
rewrites the others (a convolution reads 0 in the padding; a gather's indices are clamped to the real size).
Ops whose run-time *values* depend on sizes in ways no rule covers (a sort over a padded dim, a pad by a
size-dependent amount) raise `Unsupported`; the range then gets a static program per shape (see ``ranges``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from tripy_backend import _xla, masked_reads
from tripy_backend.real_sizes import READS_ACROSS, RealSizes, element, gather_operand_dim
import tripy_flatir.ops as flat_ops
from tripy_flatir.mlir_utils import bytecode, context, main_function
from tripy_flatir.ops.base import BaseFlatIROp

_DIM_MARKER = "tripy.dim_size"  # custom_call target of a run-time dim read (replaced in step 3)
_SET_DIMS = "tripy.set_dims"  # attribute of an optimization_barrier whose result gets run-time sizes
_SLICE = "tripy.slice"  # attribute of an optimization_barrier that marks a size-dependent slice
_SOURCE_DIMS = "tripy.source_dims"  # attribute of a reshape's marker: the dims of its source that may be padded
_SIZES = "tripy.sizes"  # attribute of an optimization_barrier: its first operand gets the sizes that follow

# The FlatIR ops' own facts (``tripy_flatir.ops.base.BaseFlatIROp``), by MLIR op name: which operands of a
# dynamic op give its result shape (not data), and which ops a bounded program cannot run.
_FLAT_OPS = [cls for cls in vars(flat_ops).values()
             if isinstance(cls, type) and issubclass(cls, BaseFlatIROp) and cls.mlir_op is not None]
_SHAPE_OPERANDS: Dict[str, Tuple[int, ...]] = {cls.mlir_name(): cls.shape_operands for cls in _FLAT_OPS
                                               if cls.shape_operands}
# Ops no FlatIR op emits (control flow, a plugin's custom_call, scatters and dynamic slices from a module built
# elsewhere) are not bounded either: XLA's dynamic padder gets them wrong or crashes on padded operands.
_UNSUPPORTED = frozenset({cls.mlir_name() for cls in _FLAT_OPS if not cls.bounded} | {
    "stablehlo.scatter", "stablehlo.while", "stablehlo.if", "stablehlo.case", "stablehlo.custom_call",
    "stablehlo.select_and_scatter", "stablehlo.dynamic_update_slice", "stablehlo.dynamic_slice"})
_SETS_SHAPE = ("stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_reshape", "stablehlo.dynamic_iota")


class Unsupported(Exception):
    """The module uses sizes in a way a bounded program cannot express."""


class SmallSize(Unsupported):
    """This bucket holds several shapes and a size in it has a bound of 0 or 1: a size computed at run time
    could be 0 where the bound is 1 (XLA takes no dynamic size-1 dims), or an input is empty while others
    are padded (XLA's dynamic padder divides by its sizes). ``ranges`` gives each size of this bucket a
    bucket of its own; other buckets are not affected."""


def bound_module(module_bytes: bytes, bucket: Sequence[Tuple[int, ...]], dynamic_dims: Sequence[Tuple[int, int]],
                 lows: Optional[Sequence[Tuple[int, ...]]] = None) -> Tuple[bytes, List[List[int]]]:
    """The bounded program for `bucket` (a static shape per argument: the bounds of its dynamic dims) and
    the dynamic dims of each output. `dynamic_dims` lists the (argument, dim) pairs that are dynamic, in
    the order their real sizes are passed (as ``i32`` scalars after the arguments). The bucket holds
    several shapes (a bucket of one shape is an ordinary static program, see ``ranges``); `lows`, its smallest
    shapes (sizes computed from the input sizes that are the same for all the bucket's shapes are static).
    Raises `SmallSize` if a computed size has a bound of 0 or 1."""
    from jax.extend.mlir import ir

    if any(bucket[i][d] == 0 for i, d in dynamic_dims):
        # An empty input next to padded dims: XLA's dynamic padder divides by sizes of 0 (SIGFPE).
        raise SmallSize("an input is empty in this bucket while others are padded")
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = _main(module)
        out_dims = _add_twins(fn, {(a, d): bucket[a][d] for a, d in dynamic_dims},
                              {(a, d): lows[a][d] for a, d in dynamic_dims} if lows else None)
        block = fn.regions[0].blocks[0]
        for arg, shape in zip(block.arguments, bucket):
            arg.set_type(ir.RankedTensorType.get(list(shape), ir.RankedTensorType(arg.type).element_type))
        _match_marker_types(fn)
        _set_function_type(fn)
        refined = _xla.refine_shapes(bytecode(module))
    with context(), ir.Location.unknown():
        module = ir.Module.parse(refined)
        fn = _main(module)
        sizes = _add_size_arguments(fn, dynamic_dims)
        _lower_markers(fn, sizes)
        _set_input_sizes(fn, sizes)
        _set_function_type(fn)
        module.operation.verify()
        return bytecode(module), out_dims


# ---- step 1: run-time twins ----------------------------------------------------------------------------
def _add_twins(fn: Any, input_bounds: Dict[Tuple[int, int], int],
               input_lows: Optional[Dict[Tuple[int, int], int]] = None) -> List[List[int]]:
    """Clone the dim-value computations onto run-time sizes; mark the ops whose results need their real
    sizes; return each output's real sizes (``real_sizes``) as one more output. Returns the dynamic dims of
    each output. `input_bounds`, `input_lows`: the bucket's bound and smallest size of each dynamic input dim."""
    from jax.extend.mlir import ir

    block = fn.regions[0].blocks[0]
    twin: Dict[Any, Any] = {}
    sizes = RealSizes(twin, Unsupported, input_bounds, _DIM_MARKER, input_lows)
    checks: List[Any] = []  # i1 scalars: whether the input shapes fit the program's shape arithmetic
    ops = list(block.operations)
    with ir.InsertionPoint(ops[0]):
        for arg in block.arguments:
            sizes.visit_argument(arg, _dim_marker)
    for k, op in enumerate(ops):
        name = op.operation.name
        after = ir.InsertionPoint(ops[k + 1] if k + 1 < len(ops) else block)
        if name in _UNSUPPORTED:
            raise Unsupported(f"{name} is not supported with bounded dims")
        if name in READS_ACROSS:
            masked_reads.mark_reads(op, name, sizes, Unsupported)
        if name == "func.return":
            return _return_sizes(op, twin, sizes, checks)
        with after:
            if name == "stablehlo.get_dimension_size":
                twin[op.results[0]] = sizes.i32(op.operands[0], ir.IntegerAttr(op.attributes["dimension"]).value)
                continue
            sizes.visit(op.operation)
            _twin_op(op, name, twin, sizes)
            _check_reshape_sizes(op, name, twin, sizes, checks)
            _mark_sizes(op, name, twin, sizes)
    raise Unsupported("the program has no func.return")


def _dim_marker(value: Any, dim: int) -> Any:
    """A run-time read of an input's dim `dim` (an opaque marker until step 3)."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    i32 = ir.IntegerType.get_signless(32)
    return stablehlo.CustomCallOp([ir.RankedTensorType.get([], i32)], [value], _DIM_MARKER,
                                  backend_config=ir.StringAttr.get(str(dim))).results[0]


def _twin_op(op: Any, name: str, twin: Dict[Any, Any], sizes: RealSizes) -> None:
    """Clone `op` onto the twins of its data operands (if any) and mark it if its result takes run-time
    sizes (at the current insertion point, right after `op`)."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    shape_pos = _SHAPE_OPERANDS.get(name, ())
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
        if any(gather_operand_dim(op, d) in dn.start_index_map for d in dn.offset_dims if _dynamic(op.results[0], d)):
            raise Unsupported("a gather whose slice along an indexed dim depends on the input shapes")
        return
    result = result_op.results[0]
    dyn = _run_time_dims(result, sizes)
    source_dims: List[int] = []
    if name in _SETS_SHAPE:
        operands = [result, twin[op.operands[shape_pos[0]]]]
        attr = _SET_DIMS
        if name == "stablehlo.dynamic_reshape":  # (its source's real sizes: to gather the real elements)
            source_dims = [d for d, size in enumerate(sizes.of(op.operands[0])) if not isinstance(size, int)]
            if sizes.known(op.operands[0], source_dims):
                operands += [sizes.i32(op.operands[0], d) for d in source_dims]
    else:  # real_dynamic_slice: source, run-time start, limit, strides
        operands = [result, op.operands[0]] + [twin.get(op.operands[i], op.operands[i]) for i in shape_pos]
        attr = _SLICE
    marker = stablehlo.OptimizationBarrierOp(operands)
    marker.attributes[attr] = ir.DenseI64ArrayAttr.get(dyn)
    if len(operands) > 2 and attr == _SET_DIMS:
        marker.attributes[_SOURCE_DIMS] = ir.DenseI64ArrayAttr.get(source_dims)
    result.replace_all_uses_except(marker.results[0], marker.operation)
    sizes.alias(marker.results[0], result)
    if op.results[0] in twin:
        twin[op.results[0]] = marker.results[0]


def _run_time_dims(result: Any, sizes: RealSizes) -> List[int]:
    """The dims of `result` typed ``?`` whose size is not the same for all input sizes (``constant_sizes``)."""
    from jax.extend.mlir import ir

    return [d for d, size in enumerate(ir.RankedTensorType(result.type).shape)
            if size < 0 and not isinstance(sizes.of(result)[d], int)]


def _mark_sizes(op: Any, name: str, twin: Dict[Any, Any], sizes: RealSizes) -> None:
    """Mark each result with dynamic dims (other than the results `_twin_op` marks) to get its real sizes set
    again. XLA's dynamic padder tracks a padded value's real size through the ops, but loses it where the
    simplifier folds the value to a constant (``a >= a`` on integers): a concatenation of that value would
    put the next operand after the padding. Setting the sizes after every op keeps them whatever folds."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    if (name in _SHAPE_OPERANDS and name != "stablehlo.dynamic_gather") or name == "stablehlo.optimization_barrier":
        return
    for result in op.results:
        if not isinstance(result.type, ir.RankedTensorType):
            continue
        dyn = _run_time_dims(result, sizes)
        if not dyn or not sizes.known(result, dyn):
            continue
        value = twin.get(result, result)  # (a result computed from dim values: its run-time twin carries it)
        marker = stablehlo.OptimizationBarrierOp([value] + [sizes.i32(result, d) for d in dyn])
        marker.attributes[_SIZES] = ir.DenseI64ArrayAttr.get(dyn)
        value.replace_all_uses_except(marker.results[0], marker.operation)
        sizes.alias(marker.results[0], result)
        if result in twin:
            twin[result] = marker.results[0]


def _check_reshape_sizes(op: Any, name: str, twin: Dict[Any, Any], sizes: RealSizes, checks: List[Any]) -> None:
    """A reshape to a shape computed from the input sizes holds as many elements as its source only for
    some input shapes (``reshape(x, (2, -1))`` of an odd number of rows): eager mode and a static program
    reject the others. Adds the check for the real sizes to `checks`."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    if name != "stablehlo.dynamic_reshape" or op.operands[1] not in twin:
        return
    source, shape = op.operands[0], twin[op.operands[1]]
    rank = len(ir.RankedTensorType(source.type).shape)
    if not sizes.known(source, list(range(rank))):
        return
    counts = []
    for factors in ([sizes.i32(source, d) for d in range(rank)],
                    [element(shape, d) for d in range(ir.RankedTensorType(shape.type).shape[0])]):
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
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import func, stablehlo

    outputs = [twin.get(v, v) for v in ret.operands]
    out_dims = [[d for d, size in enumerate(ir.RankedTensorType(v.type).shape) if size < 0] for v in outputs]
    with ir.InsertionPoint(ret):
        one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
        parts = [stablehlo.ReshapeOp(one, sizes.i32(v, d)).result for v, dims in zip(outputs, out_dims) for d in dims]
        if checks:
            ok = checks[0]
            for c in checks[1:]:
                ok = stablehlo.AndOp(ok, c).result
            parts.append(stablehlo.ReshapeOp(one, stablehlo.ConvertOp(ir.RankedTensorType.get(
                [], ir.IntegerType.get_signless(32)), ok).result).result)
            out_dims.append([-1])
        if parts:
            outputs.append(parts[0] if len(parts) == 1 else stablehlo.ConcatenateOp(parts, 0).result)
        func.ReturnOp(outputs)
    ret.operation.erase()
    return out_dims


def _match_marker_types(fn: Any) -> None:
    """A marker (an optimization_barrier: results typed as its operands) that takes an argument directly, e.g.
    the source of a slice, gets the argument's new static type on that result too (shape refinement reads the
    module only if it verifies)."""
    for op in fn.regions[0].blocks[0].operations:
        if op.operation.name == "stablehlo.optimization_barrier":
            for operand, result in zip(op.operands, op.results):
                if result.type != operand.type:
                    result.set_type(operand.type)


# ---- step 3: markers to ops --------------------------------------------------------------------------
def _lower_markers(fn: Any, input_sizes: Dict[Tuple[int, int], Any]) -> None:
    """Markers become ops. A read of an input's dim is its real-size argument (`input_sizes`), not a
    ``get_dimension_size`` of it: XLA (jaxlib >= 0.7) folds that read to the bound where the input holds no
    elements, as a tp.DimensionInputInfo's carrier never does."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    def check_bounds(value: Any, dims: List[int]) -> None:
        if any(ir.RankedTensorType(value.type).shape[d] <= 1 for d in dims):
            raise SmallSize("a size computed at run time is bounded by 0 or 1 here")

    block = fn.regions[0].blocks[0]
    ops = list(block.operations)
    for k, op in enumerate(ops):
        name = op.operation.name
        after = ir.InsertionPoint(ops[k + 1] if k + 1 < len(ops) else block)
        if name == "stablehlo.custom_call" and ir.StringAttr(op.attributes["call_target_name"]).value == _DIM_MARKER:
            dim = int(ir.StringAttr(op.attributes["backend_config"]).value)
            operand = op.operands[0]
            argument = _argument(operand)
            size = input_sizes.get((argument.arg_number, dim)) if argument is not None else None
            if size is None:
                with after:
                    size = _real_size(operand, dim)
            op.results[0].replace_all_uses_with(size)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and _SET_DIMS in op.attributes:
            dims = list(ir.DenseI64ArrayAttr(op.attributes[_SET_DIMS]))
            value, shape = op.operands[0], op.operands[1]
            check_bounds(value, [d for d in dims if not _is_input_size(shape, d, input_sizes)])
            with after:
                value = _reshape_real_rows(op, value, dims)
                for d in dims:
                    value = _set_size(value, _element(shape, d), d)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and _SIZES in op.attributes:
            value = op.operands[0]
            with after:
                for d, size in zip(ir.DenseI64ArrayAttr(op.attributes[_SIZES]), list(op.operands)[1:]):
                    value = _set_size(value, size, d)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and masked_reads.MASK in op.attributes:
            with after:
                value = masked_reads.lower(op)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and _SLICE in op.attributes:
            dims = list(ir.DenseI64ArrayAttr(op.attributes[_SLICE]))
            result, source, start, limit, strides = op.operands
            check_bounds(result, dims)
            with after:
                value = _lower_slice(result, source, start, limit, strides, dims)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()


def _lower_slice(result: Any, source: Any, start: Any, limit: Any, strides: Any, dims: List[int]) -> Any:
    """A slice whose start or limit depends on the input sizes (a marked ``real_dynamic_slice``, see `_twin_op`):
    a ``dynamic_slice`` at its run-time start, its real sizes set along `dims`. With steps (constant ones), the
    span the steps cover is cut from the source (made static along each dim it cuts, padded so that no start
    is clamped: XLA cannot cut a dynamic dim at a run-time start), then taken every step."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    shape, src_shape = list(ir.RankedTensorType(result.type).shape), list(ir.RankedTensorType(source.type).shape)
    rank = len(src_shape)
    starts = [_element(start, d) for d in range(rank)]
    steps = _constant_ints(strides, rank)
    if steps is None or min(steps) < 1:
        raise Unsupported("a slice with a run-time step whose bounds depend on the input shapes")
    if all(k == 1 for k in steps):
        value = stablehlo.DynamicSliceOp(source, starts, ir.DenseI64ArrayAttr.get(shape)).result
    else:
        span = [(n - 1) * k + 1 for n, k in zip(shape, steps)]
        cut = [d for d in range(rank) if span[d] < src_shape[d] or d in dims]
        whole = masked_reads.static_buffer(source, cut)
        zero = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(
            ir.RankedTensorType.get([], ir.RankedTensorType(source.type).element_type),
            masked_reads.zero_attr(ir.RankedTensorType(source.type).element_type))).result
        padded = stablehlo.PadOp(whole, zero, ir.DenseI64ArrayAttr.get([0] * rank), ir.DenseI64ArrayAttr.get(
            [span[d] if d in cut else 0 for d in range(rank)]), ir.DenseI64ArrayAttr.get([0] * rank)).result
        value = stablehlo.DynamicSliceOp(padded, starts, ir.DenseI64ArrayAttr.get(span)).result
        value = stablehlo.SliceOp(value, ir.DenseI64ArrayAttr.get([0] * rank), ir.DenseI64ArrayAttr.get(span),
                                  ir.DenseI64ArrayAttr.get(steps)).result
    for d in dims:  # ceil((limit - start) / step)
        extent = stablehlo.SubtractOp(_element(limit, d), starts[d]).result
        if steps[d] != 1:
            extent = stablehlo.DivOp(stablehlo.AddOp(extent, _i32(steps[d] - 1)).result, _i32(steps[d])).result
        value = _set_size(value, extent, d)
    return value


def _reshape_real_rows(marker: Any, value: Any, dims: List[int]) -> Any:
    """`value` (a result that gets run-time sizes: `dims`), or, if it is a reshape that merges or splits a
    padded dim with a dim before it, the same reshape of the real elements: padded ``[2 * T, C] -> [2, T, C]``
    would leave padding between the real rows (see `_gather_real`). Raises Unsupported if the source's real
    sizes are not known."""
    from jax.extend.mlir import ir

    producer = getattr(value.owner, "operation", value.owner)  # (jaxlib 0.10 gives an OpView)
    if not isinstance(producer, ir.Operation) or producer.name != "stablehlo.reshape":
        return value
    source = producer.operands[0]
    src_shape, dst_shape = list(ir.RankedTensorType(source.type).shape), list(ir.RankedTensorType(value.type).shape)
    if _SOURCE_DIMS not in marker.attributes:
        _check_reshape(src_shape, dst_shape, dims, list(range(len(src_shape))))
        return value
    source_dims = list(ir.DenseI64ArrayAttr(marker.attributes[_SOURCE_DIMS]))
    try:
        _check_reshape(src_shape, dst_shape, dims, source_dims)
        return value
    except Unsupported:
        pass
    src_real: List[Any] = list(src_shape)
    for d, size in zip(source_dims, list(marker.operands)[2:]):
        src_real[d] = size
    dst_real = [_element(marker.operands[1], d) if d in dims else n for d, n in enumerate(dst_shape)]
    return _gather_real(source, src_real, dst_shape, dst_real)


def _gather_real(source: Any, src_real: List[Any], dst_shape: List[int], dst_real: List[Any]) -> Any:
    """The reshape of `source`'s real elements (real sizes `src_real`) to `dst_shape`, real elements first
    along each dim: each result position gathers the source element with its row-major index over the real
    result sizes `dst_real`, from where that element is in the padded source. Trailing static dims that both
    shapes share move whole. Sizes: ints or ``i32`` scalars. (A reshape of the padded source would make XLA
    move its padding itself, with a sort.)"""
    import math

    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    src_shape = list(ir.RankedTensorType(source.type).shape)
    k = 0
    while (k < min(len(src_shape), len(dst_shape)) - 1 and src_shape[-1 - k] == dst_shape[-1 - k]
           and isinstance(src_real[-1 - k], int) and isinstance(dst_real[-1 - k], int)):
        k += 1
    suffix, src_pre, dst_pre = src_shape[len(src_shape) - k:], src_shape[:len(src_shape) - k], dst_shape[:len(dst_shape) - k]
    count = math.prod(dst_pre)
    i32 = ir.IntegerType.get_signless(32)
    vec = ir.RankedTensorType.get([count], i32)

    def full(x: Any) -> Any:  # an int or an i32 scalar, broadcast to the index vector
        if isinstance(x, int):
            x = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(
                ir.RankedTensorType.get([], i32), ir.IntegerAttr.get(i32, x))).result
        return stablehlo.BroadcastInDimOp(vec, x, ir.DenseI64ArrayAttr.get([])).result

    position = stablehlo.IotaOp(vec, 0).result
    index = full(0)  # the row-major index over the real result sizes
    for m in range(len(dst_pre)):
        p = stablehlo.RemOp(stablehlo.DivOp(position, full(math.prod(dst_pre[m + 1:]))).result, full(dst_pre[m])).result
        index = stablehlo.AddOp(stablehlo.MulOp(index, full(dst_real[m])).result, p).result
    coordinates: List[Any] = []  # the source element with that index over the real source sizes
    column = ir.RankedTensorType.get([count, 1], i32)
    for m in reversed(range(len(src_pre))):
        size = stablehlo.MaxOp(full(src_real[m]), full(1)).result  # (no division by a real size of 0)
        coordinates.insert(0, stablehlo.ReshapeOp(column, stablehlo.RemOp(index, size).result).result)
        index = stablehlo.DivOp(index, size).result
    indices = coordinates[0] if len(coordinates) == 1 else stablehlo.ConcatenateOp(coordinates, 1).result
    pre = list(range(len(src_pre)))
    numbers = stablehlo.GatherDimensionNumbers.get(offset_dims=list(range(1, k + 1)), collapsed_slice_dims=pre,
                                                   operand_batching_dims=[], start_indices_batching_dims=[],
                                                   start_index_map=pre, index_vector_dim=1)
    gathered = stablehlo.GatherOp(source, indices, numbers, ir.DenseI64ArrayAttr.get([1] * len(pre) + suffix)).result
    return stablehlo.ReshapeOp(ir.RankedTensorType.get(dst_shape, ir.RankedTensorType(source.type).element_type),
                               gathered).result


def _is_input_size(vector: Any, i: int, input_sizes: Dict[Tuple[int, int], Any]) -> bool:
    """Whether element `i` of a shape vector is an input's real size (through concatenations, slices,
    reshapes and converts). Such a size with a bound of 1 is 1: a bucket's bound of 1 holds size 1 only (``ranges``)."""
    from jax.extend.mlir import ir

    value = vector
    while True:
        if any(value == size for size in input_sizes.values()):
            return True
        op = getattr(value.owner, "operation", value.owner)
        if not isinstance(op, ir.Operation):
            return False
        if op.name == "stablehlo.concatenate":
            for part in op.operands:
                n = ir.RankedTensorType(part.type).shape[0]
                if i < n:
                    break
                i -= n
            value = part
        elif op.name in ("stablehlo.reshape", "stablehlo.convert") and ir.RankedTensorType(value.type).rank <= 1:
            value, i = op.operands[0], 0
        elif op.name == "stablehlo.slice":
            value, i = op.operands[0], (list(ir.DenseI64ArrayAttr(op.attributes["start_indices"]))[0]
                                        + i * list(ir.DenseI64ArrayAttr(op.attributes["strides"]))[0])
        else:
            return False


def _argument(value: Any) -> Any:
    """`value` as a block argument, or None (jaxlib 0.6 gives block arguments as plain values)."""
    from jax.extend.mlir import ir

    if isinstance(value, ir.BlockArgument):
        return value
    if hasattr(ir.BlockArgument, "isinstance") and ir.BlockArgument.isinstance(value):
        return ir.BlockArgument(value)
    return None


def _add_size_arguments(fn: Any, dynamic_dims: Sequence[Tuple[int, int]]) -> Dict[Tuple[int, int], Any]:
    """Append an ``i32`` argument per dynamic input dim: {(argument, dim): its real size}."""
    from jax.extend.mlir import ir

    block = fn.regions[0].blocks[0]
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    return {(i, d): block.add_argument(i32, ir.Location.unknown()) for i, d in dynamic_dims}


def _set_input_sizes(fn: Any, input_sizes: Dict[Tuple[int, int], Any]) -> None:
    """Set each dynamic input dim's real size right at the start."""
    from jax.extend.mlir import ir

    block = fn.regions[0].blocks[0]
    first = list(block.operations)[0]
    current: Dict[int, Any] = {}
    with ir.InsertionPoint(first):
        for (i, d), size in input_sizes.items():
            current[i] = _set_size(current.get(i, block.arguments[i]), size, d)
    for i, value in current.items():
        arg = block.arguments[i]
        first_use = next((u.owner for u in arg.uses if u.owner.name == "stablehlo.set_dimension_size"), None)
        if first_use is not None:
            arg.replace_all_uses_except(value, first_use.operation)


# ---- helpers ----------------------------------------------------------------------------------------
def _main(module: Any) -> Any:

    fn = main_function(module)
    if fn is None:
        raise Unsupported("the module has no main function")
    return fn


def _set_function_type(fn: Any) -> None:
    from jax.extend.mlir import ir

    block = fn.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments],
                                                                          [v.type for v in ret.operands]))


def _bounded_type(t: Any, dim: int) -> Any:
    """`t` (static) with dim `dim` dynamic up to its static size."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    shape = list(t.shape)
    bounds = [ir.ShapedType.get_dynamic_size()] * len(shape)
    bounds[dim], shape[dim] = shape[dim], ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get(shape, t.element_type, stablehlo.TypeExtensions.get(bounds))


def _real_size(value: Any, dim: int) -> Any:
    """The run-time size of `value`'s dim `dim` (a ``tensor<i32>``)."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    t = ir.RankedTensorType(value.type)
    view = stablehlo.ConvertOp(_bounded_type(t, dim), value).result
    return stablehlo.GetDimensionSizeOp(view, dim).result


def _set_size(value: Any, size: Any, dim: int) -> Any:
    """`value` with the real size of dim `dim` set to `size` (any integer scalar tensor); same static type."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    t = ir.RankedTensorType(value.type)
    if t.shape[dim] <= 1:  # a bound of 1 is the size (and XLA rejects dynamic size-1 dims inside a shape)
        return value
    i32 = ir.IntegerType.get_signless(32)
    if ir.RankedTensorType(size.type).element_type != i32:
        size = stablehlo.ConvertOp(ir.RankedTensorType.get([], i32), size).result
    bounded = stablehlo.SetDimensionSizeOp(value, size, dim).result
    return stablehlo.ConvertOp(t, bounded).result


def _element(vector: Any, i: int) -> Any:
    """Element `i` of a rank-1 tensor, as a rank-0 tensor."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    t = ir.RankedTensorType(vector.type)
    one = stablehlo.SliceOp(vector, ir.DenseI64ArrayAttr.get([i]), ir.DenseI64ArrayAttr.get([i + 1]),
                            ir.DenseI64ArrayAttr.get([1])).result
    return stablehlo.ReshapeOp(ir.RankedTensorType.get([], t.element_type), one).result


def _check_reshape(src: List[int], dst: List[int], dynamic: List[int], src_dynamic: List[int]) -> None:
    """A reshape of a padded tensor is the reshape of the real one only if each dynamic dim it merges or
    splits is the outermost of its group on both sides: ``[B, T, C] -> [B * T, C]`` and back, with B
    dynamic, keep the real rows first, while ``[2, T, C] -> [2 * T, C]`` would put padding between them.
    `dynamic`: the result's dynamic dims; `src_dynamic`: the source's dims that may be padded. Raises
    Unsupported otherwise (groups with one non-1 dim on each side pass)."""
    i = j = 0
    while j < len(dst):
        g_src, g_dst = [i] if i < len(src) else [], [j]
        a, b = (src[i] if i < len(src) else 1), dst[j]
        while a != b and (i + 1 < len(src) or j + 1 < len(dst)):
            if a < b and i + 1 < len(src):
                i += 1
                g_src.append(i)
                a *= src[i]
            else:
                j += 1
                g_dst.append(j)
                b *= dst[j]
        merges = sum(src[k] != 1 for k in g_src) > 1 or sum(dst[d] != 1 for d in g_dst) > 1
        outermost = not any(d in dynamic for d in g_dst[1:]) and not any(k in src_dynamic for k in g_src[1:])
        if any(d in dynamic for d in g_dst) and merges and not outermost:
            raise Unsupported("a reshape that merges or splits a dynamic dim with a dim before it")
        i += 1
        j += 1


def _dynamic(value: Any, dim: int) -> bool:
    from jax.extend.mlir import ir

    return bool(ir.RankedTensorType(value.type).shape[dim] < 0)


def _constant_ints(vector: Any, rank: int) -> Optional[List[int]]:
    """The `rank` integers of a constant vector (a splat too), or None if it is computed at run time."""
    from jax.extend.mlir import ir

    owner = getattr(vector.owner, "operation", vector.owner)
    if not isinstance(owner, ir.Operation) or owner.name != "stablehlo.constant":
        return None
    values = ir.DenseIntElementsAttr(owner.attributes["value"])
    return [int(values[0] if values.is_splat else values[i]) for i in range(rank)]


def _i32(k: int) -> Any:
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    i32 = ir.IntegerType.get_signless(32)
    return stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i32),
                                                               ir.IntegerAttr.get(i32, k))).result
