"""Elementwise functions of one tensor: tanh, exp, log, ...

One trace op for all of them: it carries the FlatIR op class (``TanhOp``, which names its StableHLO op) and the
public spelling (``"tanh"``), both given by the frontend's op file, so adding an elementwise function touches no
file here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Type

from tripy_flatir import dtypes
from tripy_flatir.ops.base import UnaryElementwiseOp
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp
from tripy_trace.tensor import TraceTensor


@dataclasses.dataclass(repr=False, eq=False)
class UnaryElementwise(BaseTraceOp):
    __slots__ = ("flat_op", "spelling")
    flat_op: Type[UnaryElementwiseOp]
    spelling: str

    def name(self) -> str:
        return f"tripy.{self.spelling}"

    # (Inference in one method: it runs for every elementwise function the user calls, on the eager hot path.)
    def infer(self, out: TraceTensor) -> None:
        x = self.inputs[0]
        out.device = x.device
        out.dtype = dtypes.bool if self.flat_op.returns_bool else x.dtype
        out.shape = x.shape

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return dims[0]

    def key_id(self) -> int:
        if type(self) is UnaryElementwise and type(self._out) is not list and len(self.inputs) == 1:
            kid = _KEY_IDS.get((self.flat_op, self.spelling))
            if kid is None:
                kid = _KEY_IDS[(self.flat_op, self.spelling)] = super().key_id()
            return kid
        return super().key_id()

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        if not self.flat_op.guards_nan:
            self.flat_op.build(inputs, outputs)
            return
        x, out = inputs[0], outputs[0]
        result = FlatIRTensor.build(out.shape, out.dtype, out.device)
        is_nan = FlatIRTensor.build(x.shape, dtypes.bool, x.device)
        self.flat_op.build([x], [result])
        CompareOp.build([x, x], [is_nan], direction="NE")
        SelectOp.build([is_nan, x, result], [out])

    def __str__(self) -> str:
        return f"{self.outputs[0].name} = {self.name()}({self.inputs[0].name})"


# (flat op, spelling) -> the interned key of a one-input UnaryElementwise of that op (what BaseTraceOp.key_id
# computes, without building the attribute tuple on every evaluation).
_KEY_IDS: Dict[tuple, int] = {}
