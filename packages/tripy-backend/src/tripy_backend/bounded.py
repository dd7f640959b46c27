"""Bounded programs: one compiled program runs every input shape up to a bound.

XLA compiles static shapes, but its dynamic padder handles *bounded* dims: ``set_dimension_size`` gives
the real size of a dim of a buffer padded to its bound, and XLA masks reductions, softmax and matrix
products over the padding. `bound_module` turns tripy's shape-polymorphic module (``?`` dims, shape
arithmetic on ``get_dimension_size``) into such a program for one *bucket* (a static bound per input):

1. Every value computed from dim sizes gets a *run-time twin*: each ``get_dimension_size`` gets an
   opaque marker beside it, and each op that uses dim values as data (anything but the result shape of
   a dynamic op) is cloned onto the twins. The originals fold to the bucket's bounds in step 2 and give
   every tensor its static (padded) type; the twins read the real sizes at run time.
2. The arguments take the bucket's static shapes; StableHLO shape refinement makes every type static.
3. The markers become real ops: the inputs' real sizes are extra ``i32`` arguments, set with
   ``set_dimension_size``; dim reads are ``get_dimension_size`` of a bounded view (XLA answers with the
   real size); the results of dynamic broadcasts, iotas and reshapes get their real sizes set; a slice
   whose start depends on a size becomes a ``dynamic_slice`` at the run-time start.
4. After its outputs the program returns one ``i32`` vector: the real size of each dynamic output dim.
   XLA writes a dynamic output compactly at the start of its padded buffer.

A window, sort, reverse or gather runs in a bounded program only if it does not read across a padded dim
(`_READS_ACROSS`): a convolution, pooling, pad, flip or top-k over the image or a static dim, with a dynamic
batch, computes each real row from real rows only. Ops whose run-time *values* depend on sizes in ways XLA
cannot mask (a pad by a size-dependent amount, a window over a padded dim) raise `Unsupported`; the range then
gets a static program per shape (see ``ranges``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Sequence, Tuple

from tripy_backend import _xla

_DIM_MARKER = "tripy.dim_size"  # custom_call target of a run-time dim read (replaced in step 3)
_SET_DIMS = "tripy.set_dims"  # attribute of an optimization_barrier whose result gets run-time sizes
_SLICE = "tripy.slice"  # attribute of an optimization_barrier that marks a size-dependent slice
_SOURCE_DIMS = "tripy.source_dims"  # attribute of a reshape's marker: the dims of its source that may be dynamic

# Operand positions that give a dynamic op's result shape (not data).
_SHAPE_OPERANDS: Dict[str, Tuple[int, ...]] = {
    "stablehlo.dynamic_broadcast_in_dim": (1,), "stablehlo.dynamic_reshape": (1,), "stablehlo.dynamic_iota": (0,),
    "stablehlo.real_dynamic_slice": (1, 2, 3), "stablehlo.dynamic_pad": (2, 3, 4), "stablehlo.dynamic_gather": (2,),
}
# Ops that XLA's dynamic padder gets wrong or crashes on with padded operands: programs with them are not
# bounded (the range then gets a static program per shape, see ``ranges``).
_UNSUPPORTED = ("stablehlo.scatter", "stablehlo.dynamic_pad", "stablehlo.while",
                "stablehlo.if", "stablehlo.case", "stablehlo.custom_call", "stablehlo.select_and_scatter",
                "stablehlo.cumsum", "stablehlo.dynamic_update_slice", "stablehlo.dynamic_slice")

# Ops that read across some dims of their operands (a window, a sort, a reverse would read the padding of a
# padded dim: sort corrupted memory on XLA:CPU): bounded only if none of those dims is dynamic. Each gives the
# (operand, dim) pairs the op reads across. A dim they only run along, row by row (a batch dim), stays padded:
# padding rows do not change real rows, and XLA's dynamic padder carries the real size through.
def _conv_dims(op: Any) -> List[Tuple[int, int]]:
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    if ir.IntegerAttr(op.attributes["batch_group_count"]).value != 1:  # (groups of the batch: mixes rows)
        return [(0, d) for d in range(_rank(op.operands[0]))]
    batch = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"]).input_batch_dimension
    return [(0, d) for d in range(_rank(op.operands[0])) if d != batch] + [(1, d) for d in range(_rank(op.operands[1]))]


def _window_dims(op: Any) -> List[Tuple[int, int]]:
    """reduce_window: the dims whose window is more than one element, strided, dilated or padded."""
    attrs = _attributes(op)
    trivial = {"window_dimensions": 1, "window_strides": 1, "base_dilations": 1, "window_dilations": 1}
    rank = _rank(op.operands[0])
    wide = {d for name, one in trivial.items() if name in attrs for d, v in enumerate(_ints(attrs[name])) if v != one}
    if "padding" in attrs:
        wide |= {d // 2 for d, v in enumerate(_ints(attrs["padding"])) if v != 0}
    inputs = len(op.operands) // 2  # (inputs, then as many init values)
    return [(i, d) for i in range(inputs) for d in range(rank) if d in wide]


def _pad_dims(op: Any) -> List[Tuple[int, int]]:
    attrs = _attributes(op)
    amounts = zip(*(_ints(attrs[n]) for n in ("edge_padding_low", "edge_padding_high", "interior_padding")))
    return [(0, d) for d, a in enumerate(amounts) if any(a)]


def _sort_dims(op: Any) -> List[Tuple[int, int]]:
    from jax.extend.mlir import ir

    dim = ir.IntegerAttr(op.attributes["dimension"]).value % _rank(op.operands[0])
    return [(i, dim) for i in range(len(op.operands))]


def _gather_dims(op: Any) -> List[Tuple[int, int]]:
    """A gather indexes its operand's start_index_map dims (starts clamped to the padded size) and collapses
    some: those may not be padded. Other dims are sliced from 0, so their real rows come first."""
    from jax.extend.mlir.dialects import stablehlo

    numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    return [(0, d) for d in {*numbers.start_index_map, *numbers.collapsed_slice_dims, *numbers.operand_batching_dims}]


_READS_ACROSS: Dict[str, Callable[[Any], List[Tuple[int, int]]]] = {
    "stablehlo.dynamic_gather": _gather_dims,
    "stablehlo.convolution": _conv_dims, "stablehlo.reduce_window": _window_dims, "stablehlo.pad": _pad_dims,
    "stablehlo.reverse": lambda op: [(0, d) for d in _ints(op.attributes["dimensions"])],
    "stablehlo.sort": _sort_dims,
}
_SETS_SHAPE = ("stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_reshape", "stablehlo.dynamic_iota")


class Unsupported(Exception):
    """The module uses sizes in a way a bounded program cannot express."""


class SmallSize(Unsupported):
    """This bucket holds several shapes and a size in it has a bound of 0 or 1: a size computed at run time
    could be 0 where the bound is 1 (XLA takes no dynamic size-1 dims), or an input is empty while others
    are padded (XLA's dynamic padder divides by its sizes). This bucket's shapes are compiled as they
    come; other buckets are not affected."""


def bound_module(module_bytes: bytes, bucket: Sequence[Tuple[int, ...]],
                 dynamic_dims: Sequence[Tuple[int, int]]) -> Tuple[bytes, List[List[int]]]:
    """The bounded program for `bucket` (a static shape per argument: the bounds of its dynamic dims) and
    the dynamic dims of each output. `dynamic_dims` lists the (argument, dim) pairs that are dynamic, in
    the order their real sizes are passed (as ``i32`` scalars after the arguments). The bucket holds
    several shapes (a bucket of one shape is an ordinary static program, see ``ranges``). Raises `SmallSize`
    if a computed size has a bound of 0 or 1."""
    from jax.extend.mlir import ir

    from tripy_flatir.mlir_utils import bytecode, context

    if any(bucket[i][d] == 0 for i, d in dynamic_dims):
        # An empty input next to padded dims: XLA's dynamic padder divides by sizes of 0 (SIGFPE).
        raise SmallSize("an input is empty in this bucket while others are padded")
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = _main(module)
        out_dims = _add_twins(fn)
        block = fn.regions[0].blocks[0]
        for arg, shape in zip(block.arguments, bucket):
            arg.set_type(ir.RankedTensorType.get(list(shape), ir.RankedTensorType(arg.type).element_type))
        _match_marker_types(fn)
        _set_function_type(fn)
        refined = _xla.refine_shapes(bytecode(module))
    with context(), ir.Location.unknown():
        module = ir.Module.parse(refined)
        fn = _main(module)
        _lower_markers(fn)
        _set_input_sizes(fn, dynamic_dims)
        _return_output_sizes(fn, out_dims)
        _set_function_type(fn)
        module.operation.verify()
        return bytecode(module), out_dims


# ---- step 1: run-time twins ----------------------------------------------------------------------------
def _add_twins(fn: Any) -> List[List[int]]:
    """Clone the dim-value computations onto run-time reads; mark the ops whose results need their real
    sizes. Returns the dynamic dims of each output."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    block = fn.regions[0].blocks[0]
    twin: Dict[Any, Any] = {}
    i32 = ir.IntegerType.get_signless(32)
    ops = list(block.operations)
    for k, op in enumerate(ops):
        name = op.operation.name
        after = ir.InsertionPoint(ops[k + 1] if k + 1 < len(ops) else block)
        if name in _UNSUPPORTED:
            raise Unsupported(f"{name} is not supported with bounded dims")
        if name in _READS_ACROSS and any(_dynamic(op.operands[i], d) for i, d in _READS_ACROSS[name](op)):
            raise Unsupported(f"{name} over a dynamic dim is not supported with bounded dims")
        if name == "stablehlo.get_dimension_size":
            dim = ir.IntegerAttr(op.attributes["dimension"]).value
            with after:
                read = stablehlo.CustomCallOp([ir.RankedTensorType.get([], i32)], [op.operands[0]], _DIM_MARKER,
                                              backend_config=ir.StringAttr.get(str(dim)))
            twin[op.results[0]] = read.results[0]
            continue
        if name == "func.return":
            for i, v in enumerate(op.operands):
                if v in twin:
                    op.operands[i] = twin[v]
            return [[d for d, size in enumerate(ir.RankedTensorType(v.type).shape) if size < 0] for v in op.operands]
        shape_pos = _SHAPE_OPERANDS.get(name, ())
        data = [i for i, v in enumerate(op.operands) if i not in shape_pos and v in twin]
        result_op = op
        if data:
            result_op = op.operation.clone(ip=after)
            for i in data:
                result_op.operands[i] = twin[op.operands[i]]
            for r, c in zip(op.results, result_op.results):
                twin[r] = c
        sized = [i for i in shape_pos if op.operands[i] in twin]
        if not sized:
            continue
        if name == "stablehlo.dynamic_pad":
            raise Unsupported(f"{name} with sizes that depend on the input shapes")
        result = result_op.results[0]
        dyn = [d for d, size in enumerate(ir.RankedTensorType(result.type).shape) if size < 0]
        if name == "stablehlo.dynamic_gather":
            with after:
                operands = [result, _gather_result_sizes(op, twin[op.operands[2]])]
            dyn = [d for d in dyn if d in list(stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
                                               .offset_dims)]
            attr = _SET_DIMS
        elif name in _SETS_SHAPE:
            operands = [result, twin[op.operands[shape_pos[0]]]]
            attr = _SET_DIMS
        else:  # real_dynamic_slice: source, run-time start, limit, strides
            operands = [result, op.operands[0]] + [twin.get(op.operands[i], op.operands[i]) for i in shape_pos]
            attr = _SLICE
        with after:
            marker = stablehlo.OptimizationBarrierOp(operands)
        marker.attributes[attr] = ir.DenseI64ArrayAttr.get(dyn)
        if name == "stablehlo.dynamic_reshape":
            marker.attributes[_SOURCE_DIMS] = ir.DenseI64ArrayAttr.get(
                [d for d, size in enumerate(ir.RankedTensorType(op.operands[0].type).shape) if size < 0])
        result.replace_all_uses_except(marker.results[0], marker.operation)
        if op.results[0] in twin:
            twin[op.results[0]] = marker.results[0]
    raise Unsupported("the program has no func.return")


def _gather_result_sizes(op: Any, slice_sizes: Any) -> Any:
    """The run-time size of each dim of a dynamic_gather's result, as a vector (the offset dims: the run-time
    slice sizes; other dims: 0, unused), given the run-time `slice_sizes`. A slice size that depends on the
    input shapes is allowed only along a dim the gather does not index (its slice starts at 0)."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    skipped = {*numbers.collapsed_slice_dims, *numbers.operand_batching_dims}
    operand_dims = [d for d in range(_rank(op.operands[0])) if d not in skipped]
    element = ir.RankedTensorType(slice_sizes.type).element_type
    one = ir.RankedTensorType.get([1], element)
    zero = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(one, ir.IntegerAttr.get(element, 0))).result
    offset = list(numbers.offset_dims)
    parts = []
    for r, size in enumerate(ir.RankedTensorType(op.results[0].type).shape):
        d = operand_dims[offset.index(r)] if r in offset else None
        if d is not None and size < 0 and d in numbers.start_index_map:
            raise Unsupported("a gather whose slice along an indexed dim depends on the input shapes")
        parts.append(zero if d is None else stablehlo.ReshapeOp(one, _element(slice_sizes, d)).result)
    return parts[0] if len(parts) == 1 else stablehlo.ConcatenateOp(parts, 0).result


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
def _lower_markers(fn: Any) -> None:
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
            with after:
                size = _real_size(op.operands[0], dim)
            op.results[0].replace_all_uses_with(size)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and _SET_DIMS in op.attributes:
            dims = list(ir.DenseI64ArrayAttr(op.attributes[_SET_DIMS]))
            value, shape = op.operands[0], op.operands[1]
            check_bounds(value, dims)
            producer = getattr(value.owner, "operation", value.owner)  # (jaxlib 0.10 gives an OpView)
            if isinstance(producer, ir.Operation) and producer.name == "stablehlo.reshape":
                source = list(ir.RankedTensorType(producer.operands[0].type).shape)
                source_dims = (list(ir.DenseI64ArrayAttr(op.attributes[_SOURCE_DIMS])) if _SOURCE_DIMS in op.attributes
                               else list(range(len(source))))
                _check_reshape(source, list(ir.RankedTensorType(value.type).shape), dims, source_dims)
            with after:
                for d in dims:
                    value = _set_size(value, _element(shape, d), d)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()
        elif name == "stablehlo.optimization_barrier" and _SLICE in op.attributes:
            dims = list(ir.DenseI64ArrayAttr(op.attributes[_SLICE]))
            result, source, start, limit, strides = op.operands
            check_bounds(result, dims)
            with after:
                if not _all_ones(strides):
                    raise Unsupported("a slice with a step whose bounds depend on the input shapes")
                rank = len(ir.RankedTensorType(source.type).shape)
                starts = [_element(start, d) for d in range(rank)]
                value = stablehlo.DynamicSliceOp(source, starts, ir.DenseI64ArrayAttr.get(
                    list(ir.RankedTensorType(result.type).shape))).result
                for d in dims:
                    value = _set_size(value, stablehlo.SubtractOp(_element(limit, d), starts[d]).result, d)
            op.results[0].replace_all_uses_with(value)
            op.operation.erase()


def _set_input_sizes(fn: Any, dynamic_dims: Sequence[Tuple[int, int]]) -> None:
    """Append an ``i32`` argument per dynamic input dim and set that dim's real size right at the start."""
    from jax.extend.mlir import ir

    block = fn.regions[0].blocks[0]
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    sizes = [block.add_argument(i32, ir.Location.unknown()) for _ in dynamic_dims]
    first = list(block.operations)[0]
    current: Dict[int, Any] = {}
    with ir.InsertionPoint(first):
        for (i, d), size in zip(dynamic_dims, sizes):
            current[i] = _set_size(current.get(i, block.arguments[i]), size, d)
    for i, value in current.items():
        arg = block.arguments[i]
        first_use = next((u.owner for u in arg.uses if u.owner.name == "stablehlo.set_dimension_size"), None)
        if first_use is not None:
            arg.replace_all_uses_except(value, first_use.operation)


def _return_output_sizes(fn: Any, out_dims: List[List[int]]) -> None:
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import func, stablehlo

    if not any(out_dims):
        return
    block = fn.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    outputs = list(ret.operands)
    with ir.InsertionPoint(ret):
        one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
        parts = [stablehlo.ReshapeOp(one, _output_size(v, d)).result for v, dims in zip(outputs, out_dims) for d in dims]
        sizes = parts[0] if len(parts) == 1 else stablehlo.ConcatenateOp(parts, 0).result
        func.ReturnOp(outputs + [sizes])
    ret.operation.erase()


# ---- helpers ----------------------------------------------------------------------------------------
def _main(module: Any) -> Any:
    from tripy_flatir.mlir_utils import main_function

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


def _output_size(value: Any, dim: int) -> Any:
    """The run-time size of an output's dim: a bound of 0 or 1 is the size (sizes that could be smaller
    raised SmallSize; XLA can report an operand's size for an empty result)."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    return _static_size(value, dim) if ir.RankedTensorType(value.type).shape[dim] <= 1 else _real_size(value, dim)


def _static_size(value: Any, dim: int) -> Any:
    """The static size of `value`'s dim `dim`, as a ``tensor<i32>`` constant."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    size = ir.IntegerAttr.get(i32.element_type, ir.RankedTensorType(value.type).shape[dim])
    return stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(i32, size)).result


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
    `dynamic`: the result's dynamic dims; `src_dynamic`: the source's dims that may be dynamic. Raises
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


def _attributes(op: Any) -> Dict[str, Any]:
    names = ("window_dimensions", "window_strides", "base_dilations", "window_dilations", "padding",
             "edge_padding_low", "edge_padding_high", "interior_padding")
    return {n: op.attributes[n] for n in names if n in op.attributes}


def _rank(value: Any) -> int:
    from jax.extend.mlir import ir

    return len(ir.RankedTensorType(value.type).shape)


def _dynamic(value: Any, dim: int) -> bool:
    from jax.extend.mlir import ir

    return bool(ir.RankedTensorType(value.type).shape[dim] < 0)


def _ints(attr: Any) -> List[int]:
    """The integers of a dense array or dense elements attribute."""
    from jax.extend.mlir import ir

    try:
        return list(ir.DenseI64ArrayAttr(attr))
    except (TypeError, ValueError):
        pass
    values = ir.DenseIntElementsAttr(attr)
    return [int(values[i]) for i in range(len(values))]


def _all_ones(strides: Any) -> bool:
    from jax.extend.mlir import ir

    owner = strides.owner
    if owner.name != "stablehlo.constant":
        return False
    values = ir.DenseIntElementsAttr(owner.attributes["value"])
    return all(int(values[i]) == 1 for i in range(len(values)))
