"""What the bounded-program passes share: the markers that ``bounded_markers`` leaves in a module for
``lower_markers`` to turn into ops, the errors saying a bucket gets no bounded program, and small builders
of the ops that read and set a dim's real size (at the current insertion point)."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import main_function

DIM_MARKER = "tripy.dim_size"  # custom_call target of a run-time read of an input's dim
SET_DIMS = "tripy.set_dims"  # attribute of an optimization_barrier whose result gets run-time sizes
SLICE = "tripy.slice"  # attribute of an optimization_barrier that marks a size-dependent slice
SOURCE_DIMS = "tripy.source_dims"  # attribute of a reshape's marker: the dims of its source that may be padded
SIZES = "tripy.sizes"  # attribute of an optimization_barrier: its first operand gets the sizes that follow
MASK = "tripy.mask"  # attribute of an optimization_barrier: its operand's padding along these dims becomes 0


class Unsupported(Exception):
    """The module uses sizes in a way a bounded program cannot express."""


class SmallSize(Unsupported):
    """This bucket holds several shapes and a size in it has a bound of 0 or 1: a size computed at run time
    could be 0 where the bound is 1 (XLA takes no dynamic size-1 dims), or an input is empty while others
    are padded (XLA's dynamic padder divides by its sizes). The range plan gives each size of this bucket a
    bucket of its own; other buckets are not affected."""


def main(module: Any) -> Any:
    fn = main_function(module)
    if fn is None:
        raise Unsupported("the module has no main function")
    return fn


def set_function_type(fn: Any) -> None:
    """`fn`'s type from its arguments and what it returns (after either changed)."""
    block = fn.regions[0].blocks[0]
    ret = block.operations[-1]  # (not list(...)[-1]: that makes a Python object per op)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in ret.operands])
    )


def producer(value: Any) -> Any:
    """The op that makes `value` (an OpView or an Operation: both have its name, operands, results and
    attributes), or None for a block argument. (Not ``value.owner.operation``: a new Python object each time.)"""
    owner = value.owner
    return owner if isinstance(owner, (ir.OpView, ir.Operation)) else None


def op_name(op: Any) -> str:
    """`op`'s name (``stablehlo.add``) without making an ``ir.Operation`` of an OpView (``op.operation.name``);
    an OpView's own ``name`` can be an attribute (a composite's)."""
    name = getattr(type(op), "OPERATION_NAME", None)
    return name if isinstance(name, str) else str(op.operation.name)


def shape(value: Any) -> List[int]:
    return list(ir.RankedTensorType(value.type).shape)


def is_dynamic(value: Any, dim: int) -> bool:
    return bool(ir.RankedTensorType(value.type).shape[dim] < 0)


def bounded_type(t: Any, dim: int) -> Any:
    """`t` (static) with dim `dim` dynamic up to its static size."""
    dims = list(t.shape)
    bounds = [ir.ShapedType.get_dynamic_size()] * len(dims)
    bounds[dim], dims[dim] = dims[dim], ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get(dims, t.element_type, stablehlo.TypeExtensions.get(bounds))


def real_size(value: Any, dim: int) -> Any:
    """The run-time size of `value`'s dim `dim` (a ``tensor<i32>``): read through a bounded view."""
    view = stablehlo.ConvertOp(bounded_type(ir.RankedTensorType(value.type), dim), value).result
    return stablehlo.GetDimensionSizeOp(view, dim).result


def set_size(value: Any, size: Any, dim: int) -> Any:
    """`value` with the real size of dim `dim` set to `size` (any integer scalar tensor); same static type."""
    t = ir.RankedTensorType(value.type)
    if t.shape[dim] <= 1:  # a bound of 1 is the size (and XLA rejects dynamic size-1 dims inside a shape)
        return value
    i32_type = ir.IntegerType.get_signless(32)
    if ir.RankedTensorType(size.type).element_type != i32_type:
        size = stablehlo.ConvertOp(ir.RankedTensorType.get([], i32_type), size).result
    return stablehlo.ConvertOp(t, stablehlo.SetDimensionSizeOp(value, size, dim).result).result


def element(vector: Any, i: int) -> Any:
    """Element `i` of a rank-1 integer tensor, as an ``i32`` scalar. Shape arithmetic builds its shape vectors
    by concatenating scalars and constants, and reads them back element by element: where `vector` is such a
    concatenation, the element is the scalar (or constant) it was made of, without a slice and reshape for XLA
    to convert and fold (GPT-2 over 1..1024 tokens: its bounded program went from 7400 ops to 4800)."""
    t = ir.RankedTensorType(vector.type)
    i32_type = ir.IntegerType.get_signless(32)
    owner = producer(vector)
    name = op_name(owner) if owner is not None else ""
    if name == "stablehlo.concatenate" and all(ir.RankedTensorType(p.type).shape[0] >= 0 for p in owner.operands):
        for piece in owner.operands:
            n = ir.RankedTensorType(piece.type).shape[0]
            if i < n:
                return element(piece, i)
            i -= n
    if name == "stablehlo.reshape" and t.shape == [1] and ir.RankedTensorType(owner.operands[0].type).rank == 0:
        scalar = owner.operands[0]
    elif name == "stablehlo.constant" and t.element_type == i32_type:
        return i32(constant_ints(vector, t.shape[0])[i])  # type: ignore[index]
    else:
        one = stablehlo.SliceOp(
            vector, ir.DenseI64ArrayAttr.get([i]), ir.DenseI64ArrayAttr.get([i + 1]), ir.DenseI64ArrayAttr.get([1])
        ).result
        scalar = stablehlo.ReshapeOp(ir.RankedTensorType.get([], t.element_type), one).result
    if t.element_type != i32_type:
        scalar = stablehlo.ConvertOp(ir.RankedTensorType.get([], i32_type), scalar).result
    return scalar


def i32(k: int) -> Any:
    """An ``i32`` scalar constant."""
    t = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    return stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(t.element_type, k))).result


def constant_ints(vector: Any, rank: int) -> Optional[List[int]]:
    """The `rank` integers of a constant vector (a splat too), or None if it is computed at run time."""
    owner = producer(vector)
    if owner is None or op_name(owner) != "stablehlo.constant":
        return None
    values = ir.DenseIntElementsAttr(owner.attributes["value"])
    return [int(values[0] if values.is_splat else values[i]) for i in range(rank)]


def source_element(value: Any, i: int) -> Optional[Tuple[Any, int]]:
    """The (vector, index) that element `i` of `value` is a copy of (a concatenation's part, a reshape's or
    convert's operand, a slice's source), or None."""
    op = producer(value)
    if op is None:
        return None
    name = op_name(op)
    if name == "stablehlo.concatenate":
        for part in op.operands:
            n = ir.RankedTensorType(part.type).shape[0]
            if i < n:
                break
            i -= n
        return part, i
    if name in ("stablehlo.reshape", "stablehlo.convert") and ir.RankedTensorType(value.type).rank <= 1:
        return op.operands[0], i if ir.RankedTensorType(op.operands[0].type).rank else 0
    if name == "stablehlo.slice":
        start = list(ir.DenseI64ArrayAttr(op.attributes["start_indices"]))[0]
        return op.operands[0], start + i * list(ir.DenseI64ArrayAttr(op.attributes["strides"]))[0]
    return None
