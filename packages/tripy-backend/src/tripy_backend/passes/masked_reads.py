"""Windows, pads and reverses over a padded dim in a bounded program.

An op that reads across a padded dim (``real_sizes.READS_ACROSS``: a window over an image's height, a pad
or a reverse of it) must not read the padding as if it were data. XLA's dynamic padder already handles
some of them, measured on jaxlib 0.6.2 and 0.10.2 against eager mode (``tests/e2e/test_compile_once_ops.py``):

- reduce_window (max and avg pooling, any stride and padding): it masks the operand's padding with the init
  value (-inf for max, 0 for sums; an average's divisor without the padded zeros is a reduce_window of ones,
  masked the same way) and gives the result's real size;
- pad (constant, negative amounts too): it masks the padding with the pad value, so the high padding starts
  right after the real elements;
- reverse (flip): it moves the real elements to the start of the result.

A convolution over a padded spatial dim it refuses ("Dynamic Spatial Convolution is not supported"), so the
bounded program runs it on the whole buffer, made static first, with its padding set to 0 (what the
convolution's own zero padding holds, and what adds nothing to a sum): each real result reads what it reads
in the exact-shape program. The result's real size (``real_sizes``' window rule) is set on it again after.
``bounded-markers`` marks the operand (`mark_reads`: an optimization_barrier with attribute `MASK`),
``lower-markers`` lowers it (`lower`). A sort or an indexed gather over a padded dim is not supported.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_backend.passes.markers import MASK, Unsupported, i32
from tripy_backend.passes.real_sizes import READS_ACROSS, RealSizes

XLA_MASKS = ("stablehlo.reduce_window", "stablehlo.pad", "stablehlo.reverse")  # (see the module's docstring)


def mark_reads(op: Any, name: str, sizes: RealSizes) -> None:
    """Before `op` (a READS_ACROSS op), mark the operand that it reads across a padded dim of (see the module's
    docstring). Raises `Unsupported` where that cannot be done."""
    reads: Dict[int, List[int]] = {}
    for i, d in READS_ACROSS[name](op):
        if not isinstance(sizes.of(op.operands[i])[d], int):
            reads.setdefault(i, []).append(d)
    if not reads or name in XLA_MASKS:
        return
    why = f"{name} over a dynamic dim is not supported with bounded dims"
    if name in ("stablehlo.gather", "stablehlo.dynamic_gather"):
        _clamp_indices(op, reads, sizes, lambda: Unsupported(why))
        return
    operand = op.operands[0]
    if name != "stablehlo.convolution" or list(reads) != [0] or not sizes.known(operand, reads[0]):
        raise Unsupported(why)  # (a sort, an indexed gather, a kernel of run-time size)
    with ir.InsertionPoint(op):
        marker = stablehlo.OptimizationBarrierOp([operand] + [sizes.i32(operand, d) for d in reads[0]])
    marker.attributes[MASK] = ir.DenseI64ArrayAttr.get(reads[0])
    op.operands[0] = marker.results[0]
    sizes.alias(marker.results[0], operand)


def _clamp_indices(
    op: Any, reads: Dict[int, List[int]], sizes: RealSizes, unsupported: Callable[[], Exception]
) -> None:
    """A gather of single elements along one padded dim (``take``: an embedding, resize's source rows) reads
    real elements only if its indices are clamped to the real size, as the exact-shape program clamps them
    (XLA would clamp them to the padded size). Its indices get that clamp, at run time."""
    dn = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    dims = list(dn.start_index_map)
    if list(reads) != [0] or len(dims) != 1 or reads[0] != dims or list(dn.collapsed_slice_dims) != dims:
        raise unsupported()
    operand, indices = op.operands[0], op.operands[1]
    if not sizes.known(operand, dims):
        raise unsupported()
    indices = sizes.twin.get(indices, indices)  # (resize computes its indices from the sizes: their run-time twin)
    scalar = ir.RankedTensorType.get([], ir.RankedTensorType(indices.type).element_type)
    with ir.InsertionPoint(op):
        last = stablehlo.ConvertOp(scalar, stablehlo.SubtractOp(sizes.i32(operand, dims[0]), i32(1)).result).result
        clamped = stablehlo.ClampOp(stablehlo.ConvertOp(scalar, i32(0)).result, indices, last).result
    op.operands[1] = clamped
    sizes.alias(clamped, indices)


def lower(marker: Any) -> Any:
    """The value a `MASK` marker stands for (at the current insertion point): its operand's whole buffer,
    static along the marked dims, with 0 beyond their real sizes."""
    dims = list(ir.DenseI64ArrayAttr(marker.attributes[MASK]))
    value = static_buffer(marker.operands[0], dims)
    t = ir.RankedTensorType(value.type)
    index = ir.RankedTensorType.get(list(t.shape), ir.IntegerType.get_signless(32))
    fill = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(t, zero_attr(t.element_type))).result
    for d, n in zip(dims, list(marker.operands)[1:]):
        real = stablehlo.CompareOp(
            stablehlo.IotaOp(index, d).result,
            stablehlo.BroadcastInDimOp(index, n, ir.DenseI64ArrayAttr.get([])).result,
            stablehlo.ComparisonDirectionAttr.get("LT"),
        ).result
        value = stablehlo.SelectOp(real, value, fill).result
    return value


def static_buffer(value: Any, dims: List[int]) -> Any:
    """`value`'s whole buffer, typed static for XLA along `dims`: a gather of every element, one by one along
    them (XLA takes a dim gathered in slices of 1 as static). A ``set_dimension_size`` to the bound or an
    update of a larger static buffer would do it too, but the first is folded away before XLA sees it and
    XLA's dynamic padder fails on the second; a slice or a pad keeps the dynamic size. The elements keep
    their places."""
    t = ir.RankedTensorType(value.type)
    shape = list(t.shape)
    i32 = ir.IntegerType.get_signless(32)
    grid = [shape[d] for d in dims] + [1]
    columns = [stablehlo.IotaOp(ir.RankedTensorType.get(grid, i32), k).result for k in range(len(dims))]
    indices = columns[0] if len(columns) == 1 else stablehlo.ConcatenateOp(columns, len(dims)).result
    numbers = stablehlo.GatherDimensionNumbers.get(
        offset_dims=[k for k in range(t.rank) if k not in dims],
        collapsed_slice_dims=dims,
        operand_batching_dims=[],
        start_indices_batching_dims=[],
        start_index_map=dims,
        index_vector_dim=len(dims),
    )
    sizes = ir.DenseI64ArrayAttr.get([1 if k in dims else n for k, n in enumerate(shape)])
    return stablehlo.GatherOp(value, indices, numbers, sizes, indices_are_sorted=ir.BoolAttr.get(True)).result


def zero_attr(element: Any) -> Any:
    """0 of an integer or floating-point element type."""
    try:
        return ir.IntegerAttr.get(ir.IntegerType(element), 0)
    except ValueError:
        return ir.FloatAttr.get(element, 0.0)
