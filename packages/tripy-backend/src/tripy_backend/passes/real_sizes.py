"""The real size of every dynamic dim in a bounded program, from the program's own shape arithmetic.

A bounded program (see ``bounded_markers``) must say how large each dynamic dim of its outputs really is, and a
``get_dimension_size`` in it must give the real size of its operand. Reading a result's size at run
time (``get_dimension_size`` of a bounded view) is not enough: XLA's dynamic padder loses a dim's real
size where the simplifier folds the value to a constant (``a >= a`` on integers is a broadcast ``true``
of the padded shape), and the program would silently report the bound. So sizes are derived the way
the shape-polymorphic module defines them: an input's dims are its real sizes (passed to the program),
an elementwise result has its operands' sizes, a transpose permutes them, a concatenation adds them, a
dynamic op's result has the sizes its shape operand computes, and so on, whatever XLA folds.

`RealSizes.visit` is called on every op of the module in order (before shape refinement, on the
``?``-typed module); each dim size is an ``int`` (static), an ``i32`` scalar MLIR value, or `Unknown`
(an op without a rule below: raised as ``Unsupported`` only if that size is needed).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_backend import op_facts
from tripy_backend.passes.constant_sizes import constant_of
from tripy_backend.passes.markers import Unsupported, element, i32, op_name, producer, shape as ir_shape


class Unknown:
    """A dynamic dim whose size no rule gives (the op that made it is named in the error)."""

    def __init__(self, op_name: str) -> None:
        self.op_name = op_name


Size = Union[int, Any, Unknown]  # static size, i32 scalar MLIR value, or Unknown


class RealSizes:
    """The size of each dim of each value of one function, filled op by op (`visit`)."""

    def __init__(
        self,
        twin: Dict[Any, Any],
        input_bounds: Optional[Dict[Tuple[int, int], int]] = None,
        input_lows: Optional[Dict[Tuple[int, int], int]] = None,
    ) -> None:
        self.twin = twin  # value -> its run-time twin (see ``bounded_markers._add_twins``)
        # the bucket's bound of each dynamic input dim: to find slice sizes that are the same for all real sizes
        # in the bucket (``constant_sizes``)
        self.input_bounds = input_bounds
        self.input_lows = input_lows  # (the bucket's smallest size of each: 1 if not given)
        # the dynamic input dims of bound 1 in this bucket (a batch of 1): static here, as the inputs' dims are
        # (``lower_markers`` sets no size of bound 1), so a size computed from these only is a number (one
        # evaluation, see `_from_shape_operand`)
        self.size_one = {k: b for k, b in (input_bounds or {}).items() if b == 1}
        self.evaluated: Dict[Any, Dict[Any, Any]] = {}  # (``constant_sizes``' values, shared by its calls)
        self.sizes: Dict[Any, List[Size]] = {}

    def of(self, value: Any) -> List[Size]:
        sizes = self.sizes.get(value)
        if sizes is None:
            sizes = [s if s >= 0 else Unknown("an unvisited op") for s in ir.RankedTensorType(value.type).shape]
        return sizes

    def alias(self, value: Any, same_as: Any) -> None:
        """`value` has the sizes of `same_as` (a marker or a clone standing for it)."""
        self.sizes[value] = self.of(same_as)

    def known(self, value: Any, dims: List[int]) -> bool:
        return not any(isinstance(self.of(value)[d], Unknown) for d in dims)

    def i32(self, value: Any, dim: int) -> Any:
        """The size of `value`'s dim `dim` as an ``i32`` scalar MLIR value (at the current insertion point)."""
        size = self.of(value)[dim]
        if isinstance(size, Unknown):
            raise Unsupported(f"the size of a {size.op_name} result is not given by the program's shape arithmetic")
        return i32(size) if isinstance(size, int) else size

    def visit_argument(self, arg: Any, read: Callable[[Any, int], Any]) -> None:
        """An input: its dynamic dims are the real sizes `read(arg, dim)` gives (an ``i32`` scalar value)."""
        self.sizes[arg] = [s if s >= 0 else read(arg, d) for d, s in enumerate(ir.RankedTensorType(arg.type).shape)]

    def visit(self, op: Any) -> None:
        """Record the sizes of `op`'s results (new ops, if any, go at the current insertion point)."""
        name = op.name
        for i, result in enumerate(op.results):
            if not isinstance(result.type, ir.RankedTensorType):
                continue
            shape = ir.RankedTensorType(result.type).shape
            if all(s >= 0 for s in shape):
                continue
            rule = _RULES.get(name) or (_elementwise if name in op_facts.ELEMENTWISE else None)
            self.sizes[result] = [
                s if s >= 0 else (rule(self, op, i, d) if rule else Unknown(name)) for d, s in enumerate(shape)
            ]


# ---- the rules: size of dim `d` of result `i` of `op` -------------------------------------------------
def _elementwise(s: RealSizes, op: Any, i: int, d: int) -> Size:
    rank = len(ir_shape(op.results[i]))
    candidates = [s.of(v)[d] for v in op.operands if len(ir_shape(v)) == rank]
    static = [c for c in candidates if isinstance(c, int)]
    known = [c for c in candidates if not isinstance(c, Unknown)]
    return static[0] if static else known[0] if known else Unknown(op.name)


def _barrier(s: RealSizes, op: Any, i: int, d: int) -> Size:
    return s.of(op.operands[i])[d]


def _transpose(s: RealSizes, op: Any, i: int, d: int) -> Size:
    return s.of(op.operands[0])[_ints(op, "permutation")[d]]


def _broadcast_in_dim(s: RealSizes, op: Any, i: int, d: int) -> Size:
    dims = _ints(op, "broadcast_dimensions")
    return s.of(op.operands[0])[dims.index(d)] if d in dims else Unknown(op.name)


def _reduce(s: RealSizes, op: Any, i: int, d: int) -> Size:
    reduced = _ints(op, "dimensions")
    kept = [k for k in range(len(ir_shape(op.operands[0]))) if k not in reduced]
    return s.of(op.operands[0])[kept[d]]


def _dot_general(s: RealSizes, op: Any, i: int, d: int) -> Size:
    dn = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs, rhs = op.operands[0], op.operands[1]
    lhs_free = [
        k
        for k in range(len(ir_shape(lhs)))
        if k not in dn.lhs_batching_dimensions and k not in dn.lhs_contracting_dimensions
    ]
    rhs_free = [
        k
        for k in range(len(ir_shape(rhs)))
        if k not in dn.rhs_batching_dimensions and k not in dn.rhs_contracting_dimensions
    ]
    where = [(lhs, k) for k in dn.lhs_batching_dimensions] + [(lhs, k) for k in lhs_free] + [(rhs, k) for k in rhs_free]
    value, k = where[d]
    return s.of(value)[k]


def _concatenate(s: RealSizes, op: Any, i: int, d: int) -> Size:
    if d != ir.IntegerAttr(op.attributes["dimension"]).value:
        return _elementwise(s, op, i, d)
    parts = [s.of(v)[d] for v in op.operands]
    if any(isinstance(p, Unknown) for p in parts):
        return Unknown(op.name)
    static = sum(p for p in parts if isinstance(p, int))
    total = i32(static)
    for p in parts:
        if not isinstance(p, int):
            total = stablehlo.AddOp(total, p).result
    return total


def _gather(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """A batch dim (not an offset dim: those have the static slice sizes) is a dim of the indices."""
    dn = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    if d in dn.offset_dims:
        return Unknown(op.name)
    indices = op.operands[1]
    batch = [k for k in range(len(ir_shape(indices))) if k != dn.index_vector_dim]
    position = [k for k in range(len(ir_shape(op.results[i]))) if k not in dn.offset_dims].index(d)
    return s.of(indices)[batch[position]]


def _from_shape_operand(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota: element `d` of the (run-time) shape."""
    position = 0 if op.name == "stablehlo.dynamic_iota" else 1
    shape = op.operands[position]
    # (a computed size that does not vary over the range is a constant already: ``tripy_trace.symbolic``; one
    # that does not vary in this bucket, because the sizes it reads hold one value here, is one evaluation)
    static = staticelement(shape, d)
    if static is None and s.size_one:
        static = constant_of([(s.twin.get(shape, shape), d)], lambda x: x, s.size_one, s.evaluated)
    return static if static is not None else element(s.twin.get(shape, shape), d)


def _real_dynamic_slice(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """ceil((limit - start) / stride) along `d`, from the run-time start, limit and stride."""
    vectors = [s.twin.get(op.operands[k], op.operands[k]) for k in (1, 2, 3)]
    if s.input_bounds is not None:  # (the same for every real size of the bucket: one row of every 2 of 2 rows)
        static = constant_of(
            [(v, d) for v in vectors], lambda a, b, k: -((a - b) // k), s.input_bounds, s.evaluated, s.input_lows
        )
        if static is not None and static > 0:  # (an empty slice of a padded source crashes XLA on jaxlib 0.6)
            return static
    start, limit, stride = (element(v, d) for v in vectors)
    extent = stablehlo.SubtractOp(limit, start).result
    one = i32(1)
    rounded = stablehlo.AddOp(extent, stablehlo.SubtractOp(stride, one).result).result
    return stablehlo.DivOp(rounded, stride).result


def _convolution(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """The batch has the input's size, the features the kernel's, a spatial dim the window's output size
    (the kernel's spatial sizes are static: ``masked_reads``)."""
    dn = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    if d == dn.output_batch_dimension and _int(op, "batch_group_count") == 1:
        return s.of(op.operands[0])[dn.input_batch_dimension]
    if d == dn.output_feature_dimension:
        return s.of(op.operands[1])[dn.kernel_output_feature_dimension]
    if d not in dn.output_spatial_dimensions:
        return Unknown(op.name)
    j = list(dn.output_spatial_dimensions).index(d)
    window = ir_shape(op.operands[1])[dn.kernel_spatial_dimensions[j]]
    if window < 0:
        return Unknown(op.name)
    n = s.of(op.operands[0])[dn.input_spatial_dimensions[j]]
    return _window_size(
        n,
        window,
        *(_attr(op, name, j, 1) for name in ("window_strides", "lhs_dilation", "rhs_dilation")),
        *_attr(op, "padding", j, 0, pair=True),
    )


def _along(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """reduce_window, pad, reverse, sort: a dim the op does not read across has its operand's size; one it reads
    across has the window's output size, the padded size, or (reverse) its own size. A sort's is unknown."""
    operand = op.operands[i] if op.name in ("stablehlo.sort", "stablehlo.reduce_window") else op.operands[0]
    n = s.of(operand)[d]
    if not any(k == d for _, k in READS_ACROSS[op.name](op)) or op.name == "stablehlo.reverse":
        return n
    if op.name == "stablehlo.pad":
        low, high, interior = (
            _ints(op, name)[d] for name in ("edge_padding_low", "edge_padding_high", "interior_padding")
        )
        return _affine(n, 1 + interior, low + high - interior)
    if op.name == "stablehlo.reduce_window":
        window = _dense(op.attributes["window_dimensions"])[d]
        return _window_size(
            n,
            window,
            *(_attr(op, name, d, 1) for name in ("window_strides", "base_dilations", "window_dilations")),
            *_attr(op, "padding", d, 0, pair=True),
        )
    return Unknown(op.name)


def _attr(op: Any, name: str, d: int, default: int, pair: bool = False) -> Any:
    """Element `d` of an optional window attribute (a (low, high) pair of `padding` if `pair`)."""
    if name not in op.attributes:
        return (default, default) if pair else default
    values = _dense(op.attributes[name])
    return (values[2 * d], values[2 * d + 1]) if pair else values[d]


def _window_size(
    n: Size, window: int, stride: int, base_dilation: int, window_dilation: int, low: int, high: int
) -> Size:
    """The output size of a window over `n` elements: ``((n - 1) * base_dilation + 1 + low + high - span) //
    stride + 1``, ``span`` the dilated window."""
    span = (window - 1) * window_dilation + 1
    return _affine(n, base_dilation, 1 - base_dilation + low + high - span, stride, 1)


def _affine(n: Size, multiplier: int, addend: int, divisor: int = 1, plus: int = 0) -> Size:
    """``(n * multiplier + addend) // divisor + plus`` on a size (``i32`` ops for a run-time one)."""
    if isinstance(n, Unknown):
        return n
    if isinstance(n, int):
        return (n * multiplier + addend) // divisor + plus
    for op, k in (
        (stablehlo.MulOp, multiplier),
        (stablehlo.AddOp, addend),
        (stablehlo.DivOp, divisor),
        (stablehlo.AddOp, plus),
    ):
        if k != (1 if op in (stablehlo.MulOp, stablehlo.DivOp) else 0):
            n = op(n, i32(k)).result
    return n


def _dynamic_gather(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """An offset dim has the run-time slice size of its operand dim; a batch dim is a dim of the indices."""
    dn = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    if d not in dn.offset_dims:
        return _gather(s, op, i, d)
    slice_sizes, k = op.operands[2], gather_operand_dim(op, d)
    static = staticelement(slice_sizes, k)
    return static if static is not None else element(s.twin.get(slice_sizes, slice_sizes), k)


def gather_operand_dim(op: Any, d: int) -> int:
    """The operand dim that offset dim `d` of a gather's result slices."""
    dn = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    skipped = {*dn.collapsed_slice_dims, *dn.operand_batching_dims}
    return [k for k in range(len(ir_shape(op.operands[0]))) if k not in skipped][list(dn.offset_dims).index(d)]


_RULES: Dict[str, Callable[[RealSizes, Any, int, int], Size]] = {
    "stablehlo.optimization_barrier": _barrier,
    "stablehlo.transpose": _transpose,
    "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.reduce": _reduce,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.concatenate": _concatenate,
    "stablehlo.dynamic_broadcast_in_dim": _from_shape_operand,
    "stablehlo.dynamic_reshape": _from_shape_operand,
    "stablehlo.dynamic_iota": _from_shape_operand,
    "stablehlo.gather": _gather,
    "stablehlo.real_dynamic_slice": _real_dynamic_slice,
    "stablehlo.convolution": _convolution,
    "stablehlo.reduce_window": _along,
    "stablehlo.pad": _along,
    "stablehlo.reverse": _along,
    "stablehlo.sort": _along,
    "stablehlo.dynamic_gather": _dynamic_gather,
}


# ---- the dims an op reads across ----------------------------------------------------------------------
# A window, a sort, a reverse, a pad or an indexed gather reads across some dims of its operands: with one of
# them padded, real results could read the padding (and sort corrupted memory on XLA:CPU). ``masked_reads``
# says which of them XLA masks itself and rewrites the others; a sort over a padded dim is refused. A dim an op
# only runs along, row by row (a batch), stays padded: padding rows do not change real rows. Each function
# gives the (operand, dim) pairs.
def _conv_dims(op: Any) -> List[Tuple[int, int]]:
    rank = len(ir_shape(op.operands[0]))
    if _int(op, "batch_group_count") != 1:  # (groups of the batch: mixes rows)
        return [(0, d) for d in range(rank)]
    batch = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"]).input_batch_dimension
    return [(0, d) for d in range(rank) if d != batch] + [(1, d) for d in range(len(ir_shape(op.operands[1])))]


def _window_dims(op: Any) -> List[Tuple[int, int]]:
    """reduce_window: the dims whose window is wider than one element, strided, dilated or padded."""
    trivial = {"window_dimensions": 1, "window_strides": 1, "base_dilations": 1, "window_dilations": 1}
    wide = {
        d
        for name, one in trivial.items()
        if name in op.attributes
        for d, v in enumerate(_dense(op.attributes[name]))
        if v != one
    }
    if "padding" in op.attributes:
        wide |= {k // 2 for k, v in enumerate(_dense(op.attributes["padding"])) if v != 0}
    inputs = len(op.operands) // 2  # (the inputs, then as many init values)
    return [(i, d) for i in range(inputs) for d in sorted(wide)]


def _pad_dims(op: Any) -> List[Tuple[int, int]]:
    amounts = zip(*(_ints(op, n) for n in ("edge_padding_low", "edge_padding_high", "interior_padding")))
    return [(0, d) for d, a in enumerate(amounts) if any(a)]


def _sort_dims(op: Any) -> List[Tuple[int, int]]:
    dim = _int(op, "dimension") % len(ir_shape(op.operands[0]))
    return [(i, dim) for i in range(len(op.operands))]


def _gather_dims(op: Any) -> List[Tuple[int, int]]:
    """A gather indexes its operand's start_index_map dims (starts clamped to the padded size) and collapses
    some: those may not be padded. Its other dims are sliced from 0, so their real rows come first."""
    dn = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    return [(0, d) for d in sorted({*dn.start_index_map, *dn.collapsed_slice_dims, *dn.operand_batching_dims})]


READS_ACROSS: Dict[str, Callable[[Any], List[Tuple[int, int]]]] = {
    "stablehlo.convolution": _conv_dims,
    "stablehlo.reduce_window": _window_dims,
    "stablehlo.pad": _pad_dims,
    "stablehlo.reverse": lambda op: [(0, d) for d in _ints(op, "dimensions")],
    "stablehlo.sort": _sort_dims,
    "stablehlo.dynamic_gather": _gather_dims,
    "stablehlo.gather": _gather_dims,
}


# ---- helpers ----------------------------------------------------------------------------------------


def _ints(op: Any, name: str) -> List[int]:
    return [int(x) for x in ir.DenseI64ArrayAttr(op.attributes[name])]


def staticelement(vector: Any, i: int) -> Union[int, None]:
    """Element `i` of a rank-1 integer vector if the program computes it from constants and static dims
    alone (a shape operand the frontend built as a concatenation of dim sizes), else None. A dim typed ``?``
    whose size is such an element is static: no bucket pads it."""
    op = producer(vector)
    if op is None:
        return None
    name = op_name(op)
    if name == "stablehlo.constant":
        values = ir.DenseIntElementsAttr(op.attributes["value"])
        return int(values[0] if values.is_splat else values[i])
    if name == "stablehlo.concatenate":
        for part in op.operands:
            n = ir_shape(part)[0]
            if i < n:
                return staticelement(part, i)
            i -= n
        return None
    if name in ("stablehlo.reshape", "stablehlo.convert") and len(ir_shape(op.operands[0])) <= 1:
        return staticelement(op.operands[0], 0 if not ir_shape(op.operands[0]) else i)
    if name == "stablehlo.get_dimension_size":
        size = ir_shape(op.operands[0])[_int(op, "dimension")]
        return size if size >= 0 else None
    return None


def _int(op: Any, name: str) -> int:
    return int(ir.IntegerAttr(op.attributes[name]).value)


def _dense(attr: Any) -> List[int]:
    """The integers of a dense array or dense elements attribute (reduce_window's padding is the latter)."""
    try:
        return [int(x) for x in ir.DenseI64ArrayAttr(attr)]
    except (TypeError, ValueError):
        values = ir.DenseIntElementsAttr(attr)
        return [int(values[i]) for i in range(len(values))]
