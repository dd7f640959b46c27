"""The FlatIR op base class.

``SomeOp.build(inputs, outputs, **attrs)`` creates the op and makes it the producer of its outputs:
building an op is what adds it to a subgraph. ``to_mlir(operands)`` emits exactly one MLIR op and
returns its result values.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Dict, List, Sequence, Tuple

from tripy_flatir.tensor import FlatIRTensor


@dataclasses.dataclass(repr=False, eq=False)
class BaseFlatIROp:
    inputs: List[FlatIRTensor]
    outputs: List[FlatIRTensor]

    # What the layers above need to know about an op, declared with it:
    # the MLIR op class it emits (``mlir_op.OPERATION_NAME``, e.g. "stablehlo.dynamic_reshape", is how the
    # backend's passes over the MLIR recognise it);
    mlir_op: ClassVar[Any] = None
    # the operand positions that give its result's shape at run time (dynamic ops), as opposed to data;
    shape_operands: ClassVar[Tuple[int, ...]] = ()
    # whether a bounded program (one program for a range of shapes, ``tripy_backend.passes.bounded_markers``) can run it on
    # operands padded to their bounds: XLA's dynamic padder handles it, or the backend masks the padding.
    bounded: ClassVar[bool] = True
    # whether each element of its result is a function of the same element of each operand, all of one shape
    # (the backend's passes move layouts and sizes through such ops unchanged).
    elementwise: ClassVar[bool] = False

    # Fields not shown in the text form.
    str_skip_fields: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def build(cls, inputs: Sequence[FlatIRTensor], outputs: Sequence[FlatIRTensor], **attrs: Any) -> "BaseFlatIROp":
        op = cls(list(inputs), list(outputs), **attrs)
        for out in op.outputs:
            out.producer = op
        return op

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        raise NotImplementedError

    @classmethod
    def mlir_name(cls) -> str:
        """The MLIR operation's name, e.g. ``"stablehlo.tanh"``."""
        return str(cls.mlir_op.OPERATION_NAME)

    def result_type(self, index: int = 0) -> Any:
        return self.outputs[index].mlir_type()

    def attributes(self) -> list[tuple[str, Any]]:
        """Every attribute (each field but the inputs and outputs) with its value: what, with the operands, the op
        computes from."""
        names = _ATTRIBUTE_NAMES.get(type(self))
        if names is None:
            names = tuple(f.name for f in dataclasses.fields(self) if f.name not in ("inputs", "outputs"))
            _ATTRIBUTE_NAMES[type(self)] = names
        return [(name, getattr(self, name)) for name in names]

    def attribute_items(self) -> list[tuple[str, Any]]:
        """The attributes shown in the text form (all but `str_skip_fields`)."""
        return [(k, v) for k, v in self.attributes() if k not in self.str_skip_fields]

    def __str__(self) -> str:
        outs = ", ".join(str(o) for o in self.outputs)
        args = [i.name for i in self.inputs] + [f"{k}={_attr_str(v)}" for k, v in self.attribute_items()]
        return f"{outs} = {type(self).__name__}({', '.join(args)})"

    __repr__ = __str__


_ATTRIBUTE_NAMES: Dict[type, Tuple[str, ...]] = {}  # op class -> its attribute fields (see `attributes`)


def _attr_str(value: Any) -> str:
    import numpy as np

    if isinstance(value, np.ndarray):
        if value.size > 8:
            return f"<array shape={list(value.shape)} dtype={value.dtype}>"
        return str(value.tolist())
    return str(value)


@dataclasses.dataclass(repr=False, eq=False)
class UnaryElementwiseOp(BaseFlatIROp):
    """Base for ops that apply one StableHLO elementwise op to one operand. A subclass names its StableHLO op
    class (``mlir_op``); the trace's ``UnaryElementwise`` and the frontend's ``unary`` take the subclass itself,
    so a new elementwise function needs only its FlatIR file and its frontend file."""

    elementwise = True

    # The result is bool whatever the operand's type (a predicate such as is_finite).
    returns_bool: ClassVar[bool] = False
    # XLA:CPU computes garbage for a NaN operand it can see at compile time (exp(x + nan), also under jax.jit):
    # the trace lowers such ops to select(x != x, x, op(x)) to keep the NaN.
    guards_nan: ClassVar[bool] = False

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [type(self).mlir_op(operands[0]).result]


@dataclasses.dataclass(repr=False, eq=False)
class BinaryElementwiseOp(BaseFlatIROp):
    """Base for ops that apply one StableHLO elementwise op (``mlir_op``) to two same-shaped operands."""

    elementwise = True

    def to_mlir(self, operands: List[Any]) -> List[Any]:
        return [type(self).mlir_op(*operands).result]
