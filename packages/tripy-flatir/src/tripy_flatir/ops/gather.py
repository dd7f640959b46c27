import dataclasses
from typing import Any, List

from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


def take_dimension_numbers(operand_rank: int, index_rank: int, dim: int) -> Any:
    """Dimension numbers that make gather behave like ``numpy.take(operand, index, axis=dim)``, with the
    indices given as `index` with a trailing size-1 dim (the index vector)."""
    out_rank = operand_rank - 1 + index_rank
    offset_dims = list(range(dim)) + list(range(dim + index_rank, out_rank))
    return stablehlo.GatherDimensionNumbers.get(
        offset_dims=offset_dims,
        collapsed_slice_dims=[dim],
        operand_batching_dims=[],
        start_indices_batching_dims=[],
        start_index_map=[dim],
        index_vector_dim=index_rank,
    )


@dataclasses.dataclass(repr=False, eq=False)
class GatherOp(BaseFlatIROp):
    """``numpy.take`` along `dim` as a stablehlo.gather: inputs are (operand, indices of shape
    index_shape + [1]). Out-of-range indices are clamped. Needs the operand's dims other than `dim` static."""

    mlir_op = stablehlo.GatherOp

    dim: int

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        operand, indices = self.inputs
        sizes = [1 if d == self.dim else s for d, s in enumerate(operand.shape)]
        numbers = take_dimension_numbers(operand.rank, indices.rank - 1, self.dim)
        return [self.mlir_op(operands[0], operands[1], numbers, i64_attr_array(sizes)).result]
