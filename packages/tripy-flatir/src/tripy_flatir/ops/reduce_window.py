import dataclasses
from typing import Any, List, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp

_BODY = {"sum": stablehlo.AddOp, "max": stablehlo.MaxOp, "min": stablehlo.MinOp}


@dataclasses.dataclass(repr=False, eq=False)
class ReduceWindowOp(BaseFlatIROp):
    """stablehlo.reduce_window: inputs are (operand, init value as a rank-0 tensor). The operand is padded
    with the init value by `padding` ((low, high) per dim) before windows of `window_dims` are reduced
    with `reduce_mode` (sum | max | min), moving by `window_strides`."""

    mlir_op = stablehlo.ReduceWindowOp

    reduce_mode: str
    window_dims: List[int]
    window_strides: List[int]
    padding: List[Tuple[int, int]]

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        pad_attr = ir.DenseElementsAttr.get(
            np.asarray(self.padding, dtype=np.int64).reshape(len(self.padding), 2),
            type=ir.IntegerType.get_signless(64),
            shape=[len(self.padding), 2],
        )
        op = self.mlir_op(
            [self.result_type()],
            [operands[0]],
            [operands[1]],
            i64_attr_array(self.window_dims),
            window_strides=i64_attr_array(self.window_strides),
            padding=pad_attr,
        )
        scalar = ir.RankedTensorType.get([], self.inputs[0].dtype.mlir_type())
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            stablehlo.ReturnOp([_BODY[self.reduce_mode](*block.arguments).result])
        return [op.result]
