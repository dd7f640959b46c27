"""Pass ``lower-markers``, the last of a bounded program's three (after ``bounded-markers`` and
``static-shapes``): the markers become real ops, on the module whose types are now the bucket's bounds.

The inputs' real sizes become extra ``i32`` arguments (one per ``Job.dynamic_dims`` entry, in order), set on the
inputs with ``set_dimension_size``; a read of an input's dim is its real-size argument; the results of dynamic
broadcasts, iotas and reshapes get their real sizes set (a reshape that would leave padding between real rows
gathers the real elements instead); a slice whose start depends on a size becomes a ``dynamic_slice`` at the
run-time start; an operand read across a padded dim gets 0 in its padding (``masked_reads``). XLA writes a
dynamic output compactly at the start of its padded buffer. Raises ``SmallSize`` where a size computed at run
time has a bound of 0 or 1 (the range plan then gives each of the bucket's sizes a bucket of its own)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend.passes import Job, Pass, masked_reads
from tripy_backend.passes.bounded_markers import bounded
from tripy_backend.passes.markers import (
    DIM_MARKER,
    MASK,
    SET_DIMS,
    SIZES,
    SLICE,
    SOURCE_DIMS,
    SmallSize,
    Unsupported,
    constant_ints,
    element,
    i32,
    main,
    op_name,
    producer,
    real_size,
    set_function_type,
    set_size,
    source_element,
)


def run(module_bytes: bytes, job: Job) -> bytes:
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = main(module)
        sizes = _add_size_arguments(fn, job.dynamic_dims)
        _lower_markers(fn, sizes)
        _set_input_sizes(fn, sizes)
        set_function_type(fn)
        module.operation.verify()
        return bytecode(module)


PASS = Pass("lower-markers", run, bounded)


def _lower_markers(fn: Any, input_sizes: Dict[Tuple[int, int], Any]) -> None:
    """Markers become ops. A read of an input's dim is its real-size argument (`input_sizes`), not a
    ``get_dimension_size`` of it: XLA (jaxlib >= 0.7) folds that read to the bound where the input holds no
    elements, as a tp.DimensionInputInfo's carrier never does."""

    def check_bounds(value: Any, dims: List[int]) -> None:
        if any(ir.RankedTensorType(value.type).shape[d] <= 1 for d in dims):
            raise SmallSize("a size computed at run time is bounded by 0 or 1 here")

    block = fn.regions[0].blocks[0]
    ops = list(block.operations)
    input_size = _InputSizes(input_sizes)
    for k, op in enumerate(ops):
        name = op_name(op)
        if name not in ("stablehlo.custom_call", "stablehlo.optimization_barrier"):
            continue
        after = ir.InsertionPoint(ops[k + 1] if k + 1 < len(ops) else block)
        if name == "stablehlo.custom_call" and ir.StringAttr(op.attributes["call_target_name"]).value == DIM_MARKER:
            dim = int(ir.StringAttr(op.attributes["backend_config"]).value)
            operand = op.operands[0]
            argument = _argument(operand)
            size = input_sizes.get((argument.arg_number, dim)) if argument is not None else None
            if size is None:
                with after:
                    size = real_size(operand, dim)
            op.results[0].replace_all_uses_with(size)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and SET_DIMS in op.attributes:
            dims = list(ir.DenseI64ArrayAttr(op.attributes[SET_DIMS]))
            value, shape = op.operands[0], op.operands[1]
            check_bounds(value, [d for d in dims if not input_size(shape, d)])
            with after:
                value = _reshape_real_rows(op, value, dims)
                for d in dims:
                    value = set_size(value, element(shape, d), d)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and SIZES in op.attributes:
            value = op.operands[0]
            with after:
                for d, size in zip(ir.DenseI64ArrayAttr(op.attributes[SIZES]), list(op.operands)[1:]):
                    value = set_size(value, size, d)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and MASK in op.attributes:
            with after:
                value = masked_reads.lower(op)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and SLICE in op.attributes:
            dims = list(ir.DenseI64ArrayAttr(op.attributes[SLICE]))
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
    shape, src_shape = list(ir.RankedTensorType(result.type).shape), list(ir.RankedTensorType(source.type).shape)
    rank = len(src_shape)
    starts = [element(start, d) for d in range(rank)]
    steps = constant_ints(strides, rank)
    if steps is None or min(steps) < 1:
        raise Unsupported("a slice with a run-time step whose bounds depend on the input shapes")
    if all(k == 1 for k in steps):
        value = stablehlo.DynamicSliceOp(source, starts, ir.DenseI64ArrayAttr.get(shape)).result
    else:
        span = [(n - 1) * k + 1 for n, k in zip(shape, steps)]
        cut = [d for d in range(rank) if span[d] < src_shape[d] or d in dims]
        whole = masked_reads.static_buffer(source, cut)
        zero = stablehlo.ConstantOp(
            ir.DenseElementsAttr.get_splat(
                ir.RankedTensorType.get([], ir.RankedTensorType(source.type).element_type),
                masked_reads.zero_attr(ir.RankedTensorType(source.type).element_type),
            )
        ).result
        padded = stablehlo.PadOp(
            whole,
            zero,
            ir.DenseI64ArrayAttr.get([0] * rank),
            ir.DenseI64ArrayAttr.get([span[d] if d in cut else 0 for d in range(rank)]),
            ir.DenseI64ArrayAttr.get([0] * rank),
        ).result
        value = stablehlo.DynamicSliceOp(padded, starts, ir.DenseI64ArrayAttr.get(span)).result
        value = stablehlo.SliceOp(
            value, ir.DenseI64ArrayAttr.get([0] * rank), ir.DenseI64ArrayAttr.get(span), ir.DenseI64ArrayAttr.get(steps)
        ).result
    for d in dims:  # ceil((limit - start) / step)
        extent = stablehlo.SubtractOp(element(limit, d), starts[d]).result
        if steps[d] != 1:
            extent = stablehlo.DivOp(stablehlo.AddOp(extent, i32(steps[d] - 1)).result, i32(steps[d])).result
        value = set_size(value, extent, d)
    return value


def _reshape_real_rows(marker: Any, value: Any, dims: List[int]) -> Any:
    """`value` (a result that gets run-time sizes: `dims`), or, if it is a reshape that merges or splits a
    padded dim with a dim before it, the same reshape of the real elements: padded ``[2 * T, C] -> [2, T, C]``
    would leave padding between the real rows (see `_gather_real`). Raises Unsupported if the source's real
    sizes are not known."""
    made_by = producer(value)
    if made_by is None or op_name(made_by) != "stablehlo.reshape":
        return value
    source = made_by.operands[0]
    src_shape, dst_shape = list(ir.RankedTensorType(source.type).shape), list(ir.RankedTensorType(value.type).shape)
    if SOURCE_DIMS not in marker.attributes:
        _check_reshape(src_shape, dst_shape, dims, list(range(len(src_shape))))
        return value
    source_dims = list(ir.DenseI64ArrayAttr(marker.attributes[SOURCE_DIMS]))
    try:
        _check_reshape(src_shape, dst_shape, dims, source_dims)
        return value
    except Unsupported:
        pass
    src_real: List[Any] = list(src_shape)
    for d, size in zip(source_dims, list(marker.operands)[2:]):
        src_real[d] = size
    dst_real = [element(marker.operands[1], d) if d in dims else n for d, n in enumerate(dst_shape)]
    return _gather_real(source, src_real, dst_shape, dst_real)


def _gather_real(source: Any, src_real: List[Any], dst_shape: List[int], dst_real: List[Any]) -> Any:
    """The reshape of `source`'s real elements (real sizes `src_real`) to `dst_shape`, real elements first
    along each dim: each result position gathers the source element with its row-major index over the real
    result sizes `dst_real`, from where that element is in the padded source. Trailing static dims that both
    shapes share move whole. Sizes: ints or ``i32`` scalars. (A reshape of the padded source would make XLA
    move its padding itself, with a sort.)"""
    src_shape = list(ir.RankedTensorType(source.type).shape)
    k = 0
    while (
        k < min(len(src_shape), len(dst_shape)) - 1
        and src_shape[-1 - k] == dst_shape[-1 - k]
        and isinstance(src_real[-1 - k], int)
        and isinstance(dst_real[-1 - k], int)
    ):
        k += 1
    suffix, src_pre, dst_pre = (
        src_shape[len(src_shape) - k :],
        src_shape[: len(src_shape) - k],
        dst_shape[: len(dst_shape) - k],
    )
    count = math.prod(dst_pre)
    i32 = ir.IntegerType.get_signless(32)
    vec = ir.RankedTensorType.get([count], i32)

    def full(x: Any) -> Any:  # an int or an i32 scalar, broadcast to the index vector
        if isinstance(x, int):
            x = stablehlo.ConstantOp(
                ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], i32), ir.IntegerAttr.get(i32, x))
            ).result
        return stablehlo.BroadcastInDimOp(vec, x, ir.DenseI64ArrayAttr.get([])).result

    position = stablehlo.IotaOp(vec, 0).result
    index = full(0)  # the row-major index over the real result sizes
    for m in range(len(dst_pre)):
        p = stablehlo.RemOp(
            stablehlo.DivOp(position, full(math.prod(dst_pre[m + 1 :]))).result, full(dst_pre[m])
        ).result
        index = stablehlo.AddOp(stablehlo.MulOp(index, full(dst_real[m])).result, p).result
    coordinates: List[Any] = []  # the source element with that index over the real source sizes
    column = ir.RankedTensorType.get([count, 1], i32)
    for m in reversed(range(len(src_pre))):
        size = stablehlo.MaxOp(full(src_real[m]), full(1)).result  # (no division by a real size of 0)
        coordinates.insert(0, stablehlo.ReshapeOp(column, stablehlo.RemOp(index, size).result).result)
        index = stablehlo.DivOp(index, size).result
    indices = coordinates[0] if len(coordinates) == 1 else stablehlo.ConcatenateOp(coordinates, 1).result
    pre = list(range(len(src_pre)))
    numbers = stablehlo.GatherDimensionNumbers.get(
        offset_dims=list(range(1, k + 1)),
        collapsed_slice_dims=pre,
        operand_batching_dims=[],
        start_indices_batching_dims=[],
        start_index_map=pre,
        index_vector_dim=1,
    )
    gathered = stablehlo.GatherOp(source, indices, numbers, ir.DenseI64ArrayAttr.get([1] * len(pre) + suffix)).result
    return stablehlo.ReshapeOp(
        ir.RankedTensorType.get(dst_shape, ir.RankedTensorType(source.type).element_type), gathered
    ).result


class _InputSizes:
    """Whether element `i` of a shape vector is an input's real size (through concatenations, slices, reshapes and
    converts): `self(vector, i)`. Such a size with a bound of 1 is 1: a bucket's bound of 1 holds size 1 only
    (``ranges``). Remembers each element it walked through (shape vectors share their parts)."""

    def __init__(self, input_sizes: Dict[Tuple[int, int], Any]) -> None:
        self.sizes = list(input_sizes.values())
        self.known: Dict[Tuple[Any, int], bool] = {}

    def __call__(self, vector: Any, i: int) -> bool:
        path: List[Tuple[Any, int]] = []
        step: Any = (vector, i)
        while step is not None:
            found = self.known.get(step)
            if found is not None:
                break
            path.append(step)
            if any(step[0] == size for size in self.sizes):
                found = True
                break
            step = source_element(*step)
        for key in path:
            self.known[key] = bool(found)
        return bool(found)


def _argument(value: Any) -> Any:
    """`value` as a block argument, or None (jaxlib 0.6 gives block arguments as plain values)."""
    if isinstance(value, ir.BlockArgument):
        return value
    if hasattr(ir.BlockArgument, "isinstance") and ir.BlockArgument.isinstance(value):
        return ir.BlockArgument(value)
    return None


def _add_size_arguments(fn: Any, dynamic_dims: Sequence[Tuple[int, int]]) -> Dict[Tuple[int, int], Any]:
    """Append an ``i32`` argument per dynamic input dim: {(argument, dim): its real size}."""
    block = fn.regions[0].blocks[0]
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    return {(i, d): block.add_argument(i32, ir.Location.unknown()) for i, d in dynamic_dims}


def _set_input_sizes(fn: Any, input_sizes: Dict[Tuple[int, int], Any]) -> None:
    """Set each dynamic input dim's real size right at the start."""
    block = fn.regions[0].blocks[0]
    first = block.operations[0]
    current: Dict[int, Any] = {}
    with ir.InsertionPoint(first):
        for (i, d), size in input_sizes.items():
            current[i] = set_size(current.get(i, block.arguments[i]), size, d)
    for i, value in current.items():
        arg = block.arguments[i]
        first_use = next((u.owner for u in arg.uses if u.owner.name == "stablehlo.set_dimension_size"), None)
        if first_use is not None:
            arg.replace_all_uses_except(value, first_use.operation)


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
