"""The real size of every dynamic dim in a bounded program, from the program's own shape arithmetic.

A bounded program (see ``bounded``) must say how large each dynamic dim of its outputs really is, and a
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

from typing import Any, Callable, Dict, List, Union

_ELEMENTWISE = {f"stablehlo.{n}" for n in (
    "abs add and atan2 bitcast_convert cbrt ceil clamp compare convert cosine count_leading_zeros divide "
    "exponential exponential_minus_one floor is_finite log log_plus_one logistic maximum minimum multiply "
    "negate not or popcnt power reduce_precision remainder round_nearest_afz round_nearest_even rsqrt select "
    "shift_left shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor").split()}
_ELEMENTWISE |= {"chlo.erf", "chlo.tan"}


class Unknown:
    """A dynamic dim whose size no rule gives (the op that made it is named in the error)."""

    def __init__(self, op_name: str) -> None:
        self.op_name = op_name


Size = Union[int, Any, Unknown]  # static size, i32 scalar MLIR value, or Unknown


class RealSizes:
    """The size of each dim of each value of one function, filled op by op (`visit`)."""

    def __init__(self, twin: Dict[Any, Any], unsupported: Callable[[str], Exception]) -> None:
        self.twin = twin  # value -> its run-time twin (see ``bounded._add_twins``)
        self.unsupported = unsupported
        self.sizes: Dict[Any, List[Size]] = {}

    def of(self, value: Any) -> List[Size]:
        from jax.extend.mlir import ir

        sizes = self.sizes.get(value)
        if sizes is None:
            sizes = [s if s >= 0 else Unknown("an unvisited op")
                     for s in ir.RankedTensorType(value.type).shape]
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
            raise self.unsupported(f"the size of a {size.op_name} result is not given by the program's shape "
                                   "arithmetic")
        return _constant(size) if isinstance(size, int) else size

    def visit_argument(self, arg: Any, read: Callable[[Any, int], Any]) -> None:
        """An input: its dynamic dims are the real sizes `read(arg, dim)` gives (an ``i32`` scalar value)."""
        from jax.extend.mlir import ir

        self.sizes[arg] = [s if s >= 0 else read(arg, d) for d, s in enumerate(ir.RankedTensorType(arg.type).shape)]

    def visit(self, op: Any) -> None:
        """Record the sizes of `op`'s results (new ops, if any, go at the current insertion point)."""
        from jax.extend.mlir import ir

        name = op.name
        for i, result in enumerate(op.results):
            if not isinstance(result.type, ir.RankedTensorType):
                continue
            shape = ir.RankedTensorType(result.type).shape
            if all(s >= 0 for s in shape):
                continue
            rule = _RULES.get(name) or (_elementwise if name in _ELEMENTWISE else None)
            self.sizes[result] = [s if s >= 0 else (rule(self, op, i, d) if rule else Unknown(name))
                                  for d, s in enumerate(shape)]


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
    from jax.extend.mlir.dialects import stablehlo

    dn = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs, rhs = op.operands[0], op.operands[1]
    lhs_free = [k for k in range(len(ir_shape(lhs)))
                if k not in dn.lhs_batching_dimensions and k not in dn.lhs_contracting_dimensions]
    rhs_free = [k for k in range(len(ir_shape(rhs)))
                if k not in dn.rhs_batching_dimensions and k not in dn.rhs_contracting_dimensions]
    where = ([(lhs, k) for k in dn.lhs_batching_dimensions] + [(lhs, k) for k in lhs_free]
             + [(rhs, k) for k in rhs_free])
    value, k = where[d]
    return s.of(value)[k]


def _concatenate(s: RealSizes, op: Any, i: int, d: int) -> Size:
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    if d != ir.IntegerAttr(op.attributes["dimension"]).value:
        return _elementwise(s, op, i, d)
    parts = [s.of(v)[d] for v in op.operands]
    if any(isinstance(p, Unknown) for p in parts):
        return Unknown(op.name)
    static = sum(p for p in parts if isinstance(p, int))
    total = _constant(static)
    for p in parts:
        if not isinstance(p, int):
            total = stablehlo.AddOp(total, p).result
    return total


def _gather(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """A batch dim (not an offset dim: those have the static slice sizes) is a dim of the indices."""
    from jax.extend.mlir.dialects import stablehlo

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
    return _element(s.twin.get(shape, shape), d)


def _real_dynamic_slice(s: RealSizes, op: Any, i: int, d: int) -> Size:
    """ceil((limit - start) / stride) along `d`, from the run-time start, limit and stride."""
    from jax.extend.mlir.dialects import stablehlo

    start, limit, stride = (_element(s.twin.get(op.operands[k], op.operands[k]), d) for k in (1, 2, 3))
    extent = stablehlo.SubtractOp(limit, start).result
    one = _constant(1)
    rounded = stablehlo.AddOp(extent, stablehlo.SubtractOp(stride, one).result).result
    return stablehlo.DivOp(rounded, stride).result


_RULES: Dict[str, Callable[[RealSizes, Any, int, int], Size]] = {
    "stablehlo.optimization_barrier": _barrier, "stablehlo.transpose": _transpose,
    "stablehlo.broadcast_in_dim": _broadcast_in_dim, "stablehlo.reduce": _reduce,
    "stablehlo.dot_general": _dot_general, "stablehlo.concatenate": _concatenate,
    "stablehlo.dynamic_broadcast_in_dim": _from_shape_operand, "stablehlo.dynamic_reshape": _from_shape_operand,
    "stablehlo.dynamic_iota": _from_shape_operand, "stablehlo.gather": _gather, "stablehlo.real_dynamic_slice": _real_dynamic_slice,
}


# ---- helpers ----------------------------------------------------------------------------------------
def ir_shape(value: Any) -> List[int]:
    from jax.extend.mlir import ir

    return list(ir.RankedTensorType(value.type).shape)


def _ints(op: Any, name: str) -> List[int]:
    from jax.extend.mlir import ir

    return [int(x) for x in ir.DenseI64ArrayAttr(op.attributes[name])]


def _constant(n: int) -> Any:
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    return stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(i32, ir.IntegerAttr.get(i32.element_type, n))).result


def _element(vector: Any, i: int) -> Any:
    """Element `i` of a rank-1 integer tensor, as an ``i32`` scalar."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    t = ir.RankedTensorType(vector.type)
    one = stablehlo.SliceOp(vector, ir.DenseI64ArrayAttr.get([i]), ir.DenseI64ArrayAttr.get([i + 1]),
                            ir.DenseI64ArrayAttr.get([1])).result
    scalar = stablehlo.ReshapeOp(ir.RankedTensorType.get([], t.element_type), one).result
    i32 = ir.IntegerType.get_signless(32)
    if t.element_type != i32:
        scalar = stablehlo.ConvertOp(ir.RankedTensorType.get([], i32), scalar).result
    return scalar
