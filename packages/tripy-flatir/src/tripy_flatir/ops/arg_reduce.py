import dataclasses
from typing import Any, List

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.mlir_utils import i64_attr_array
from tripy_flatir.ops.base import BaseFlatIROp


def _compare(a: Any, b: Any, direction: str, dtype: Any) -> Any:
    kind = "FLOAT" if dtype.is_floating else ("UNSIGNED" if dtype.name == "bool" else "SIGNED")
    return stablehlo.CompareOp(
        a, b, stablehlo.ComparisonDirectionAttr.get(direction), compare_type=stablehlo.ComparisonTypeAttr.get(kind)
    ).result


@dataclasses.dataclass(repr=False, eq=False)
class ArgReduceOp(BaseFlatIROp):
    """A two-operand stablehlo.reduce over one dim that finds the largest (``mode="max"``) or smallest
    (``mode="min"``) value together with its index.

    inputs: (values, indices, value init, index init), the inits rank 0; outputs: (values, indices).
    Ties go to the smaller index, and NaN beats every number (the first NaN wins), as in NumPy.
    """

    mlir_op = stablehlo.ReduceOp

    mode: str  # max | min
    reduce_dim: int

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        vdt, idt = self.inputs[0].dtype, self.inputs[1].dtype
        op = self.mlir_op(
            [self.result_type(0), self.result_type(1)], operands[:2], operands[2:], i64_attr_array([self.reduce_dim])
        )
        vs = ir.RankedTensorType.get([], vdt.mlir_type())
        is_ = ir.RankedTensorType.get([], idt.mlir_type())
        block = op.regions[0].blocks.append(vs, is_, vs, is_)
        with ir.InsertionPoint(block):
            a, ia, b, ib = block.arguments
            better = _compare(a, b, "GT" if self.mode == "max" else "LT", vdt)
            tie = _compare(a, b, "EQ", vdt)
            if vdt.is_floating:
                a_nan = _compare(a, a, "NE", vdt)
                b_nan = _compare(b, b, "NE", vdt)
                better = stablehlo.OrOp(better, stablehlo.AndOp(a_nan, stablehlo.NotOp(b_nan).result).result).result
                tie = stablehlo.OrOp(tie, stablehlo.AndOp(a_nan, b_nan).result).result
            earlier = _compare(ia, ib, "LT", idt)
            pick_a = stablehlo.OrOp(better, stablehlo.AndOp(tie, earlier).result).result
            stablehlo.ReturnOp([stablehlo.SelectOp(pick_a, a, b).result, stablehlo.SelectOp(pick_a, ia, ib).result])
        return list(op.results)
