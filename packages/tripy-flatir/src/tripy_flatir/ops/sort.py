import dataclasses
from typing import Any, List

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.ops.base import BaseFlatIROp


@dataclasses.dataclass(repr=False, eq=False)
class SortOp(BaseFlatIROp):
    """stablehlo.sort of several same-shaped operands along `dim`, keyed on the first operand.

    ``descending`` orders the keys largest first. NaN keys (of either sign) count as larger than every
    number and equal to each other, as in NumPy and PyTorch. The sort is stable: equal keys keep their order.
    """

    mlir_op = stablehlo.SortOp

    dim: int
    descending: bool

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        op = self.mlir_op(
            [self.result_type(i) for i in range(len(self.outputs))],
            operands,
            dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.dim),
            is_stable=ir.BoolAttr.get(True),
        )
        scalars = []
        for t in self.inputs:
            s = ir.RankedTensorType.get([], t.dtype.mlir_type())
            scalars += [s, s]
        block = op.regions[0].blocks.append(*scalars)
        key = self.inputs[0].dtype
        kind = "FLOAT" if key.is_floating else ("UNSIGNED" if key.name == "bool" else "SIGNED")

        def cmp(x: Any, y: Any, direction: str) -> Any:
            return stablehlo.CompareOp(
                x,
                y,
                stablehlo.ComparisonDirectionAttr.get(direction),
                compare_type=stablehlo.ComparisonTypeAttr.get(kind),
            ).result

        with ir.InsertionPoint(block):
            a, b = block.arguments[0], block.arguments[1]
            if self.descending:
                less = cmp(a, b, "GT")
                if key.is_floating:  # NaN first: a is NaN and b is not
                    less = stablehlo.OrOp(less, stablehlo.AndOp(cmp(a, a, "NE"), cmp(b, b, "EQ")).result).result
            else:
                less = cmp(a, b, "LT")
                if key.is_floating:  # NaN last: b is NaN and a is not
                    less = stablehlo.OrOp(less, stablehlo.AndOp(cmp(a, a, "EQ"), cmp(b, b, "NE")).result).result
            stablehlo.ReturnOp([less])
        return list(op.results)
