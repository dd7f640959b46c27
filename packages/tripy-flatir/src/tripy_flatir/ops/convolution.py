import dataclasses
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class ConvolutionOp(BaseFlatIROp):
    """stablehlo.convolution in channels-first layout: inputs are (lhs ``[N, C, *spatial]``, rhs
    ``[O, C / feature_group_count, *kernel]``, or ``[*kernel, C / feature_group_count, O]`` with
    `kernel_last`); the result is ``[N, O, *out_spatial]``.

    `padding` holds one (low, high) pair per spatial dim (negative values crop); `lhs_dilation` inserts
    zeros between input elements (a transposed convolution), `rhs_dilation` between kernel elements.
    `window_reversal` flips the kernel along the marked spatial dims.
    """

    mlir_op = stablehlo.ConvolutionOp

    window_strides: List[int]
    padding: List[Tuple[int, int]]
    lhs_dilation: List[int]
    rhs_dilation: List[int]
    feature_group_count: int
    window_reversal: Optional[List[bool]] = None
    kernel_last: bool = False

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        n = len(self.window_strides)
        spatial = list(range(2, 2 + n))
        k_out, k_in, k_spatial = (n + 1, n, list(range(n))) if self.kernel_last else (0, 1, spatial)
        numbers = stablehlo.ConvDimensionNumbers.get(
            input_batch_dimension=0,
            input_feature_dimension=1,
            input_spatial_dimensions=spatial,
            kernel_output_feature_dimension=k_out,
            kernel_input_feature_dimension=k_in,
            kernel_spatial_dimensions=k_spatial,
            output_batch_dimension=0,
            output_feature_dimension=1,
            output_spatial_dimensions=spatial,
        )
        i64 = ir.IntegerType.get_signless(64)
        padding = ir.DenseElementsAttr.get(
            np.asarray(self.padding, dtype=np.int64).reshape(n, 2), type=i64, shape=[n, 2]
        )
        reversal = None
        if self.window_reversal is not None and any(self.window_reversal):
            reversal = ir.DenseBoolArrayAttr.get([bool(r) for r in self.window_reversal])
        return [
            self.mlir_op(
                self.result_type(),
                operands[0],
                operands[1],
                numbers,
                ir.IntegerAttr.get(i64, self.feature_group_count),
                ir.IntegerAttr.get(i64, 1),
                window_strides=i64_attr_array(self.window_strides),
                padding=padding,
                lhs_dilation=i64_attr_array(self.lhs_dilation),
                rhs_dilation=i64_attr_array(self.rhs_dilation),
                window_reversal=reversal,
            ).result
        ]


def output_size(
    size: int, kernel: int, stride: int, padding: Sequence[int], lhs_dilation: int, rhs_dilation: int
) -> int:
    """The output length of one spatial dim of a convolution (-1 when the input length is dynamic)."""
    if size < 0:
        return -1
    dilated_in = (size - 1) * lhs_dilation + 1 if size > 0 else 0
    dilated_k = (kernel - 1) * rhs_dilation + 1
    span = dilated_in + padding[0] + padding[1] - dilated_k
    return span // stride + 1 if span >= 0 else 0
