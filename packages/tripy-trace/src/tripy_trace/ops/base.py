"""The trace op base class.

A trace op is a 1:1 picture of one user-level operation. Building it creates its output tensors and
immediately infers their shape (static where known, ``-1`` where not), dtype and device, so bad input
is reported at the user's line. ``to_flat_ir(inputs, outputs)`` binds a FlatIR subgraph to the given
FlatIR tensors.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Dict, List, NoReturn, Optional, Sequence, Tuple

from tripy_flatir.exceptions import raise_error
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.tensor import TraceTensor


@dataclasses.dataclass(repr=False, eq=False)
class BaseTraceOp:
    inputs: List[TraceTensor]
    outputs: List[TraceTensor]

    # True for ops whose output is a program input (stored data, compile-time placeholders).
    is_input: ClassVar[bool] = False
    # The user-facing spelling used in error messages, e.g. "'+'" or "tripy.reshape".
    display_name: ClassVar[Optional[str]] = None

    @classmethod
    def build(cls, inputs: Sequence[TraceTensor], stack_info: Any = None, num_outputs: int = 1, **attrs: Any) -> "BaseTraceOp":
        op = cls(list(inputs), [], **attrs)
        op.outputs = ([TraceTensor(op, stack_info)] if num_outputs == 1 else
                      [TraceTensor(op, stack_info) for _ in range(num_outputs)])
        op.infer_devices()
        op.infer_dtypes()
        op.infer_shapes()
        return op

    # ---- inference (override as needed) ------------------------------------------------------
    def infer_devices(self) -> None:
        inputs = self.inputs
        device = inputs[0].device if inputs else self.default_device()
        for i in inputs:  # (written without a set: this runs for every op the user builds)
            if i.device is not device and i.device != device:
                self.raise_error("Inputs are on different devices: " + ", ".join(str(i.device) for i in inputs) + ".",
                                 ["Move them to one device first with tripy.copy(tensor, device)."])
        for o in self.outputs:
            o.device = device

    def default_device(self) -> Any:
        from tripy_flatir.device import CPU

        return CPU

    def infer_dtypes(self) -> None:
        dts = [i.dtype for i in self.inputs]
        for d in dts:  # dtypes are singletons
            if d is not dts[0]:
                self.raise_error(f"Inputs of {self.name()} must have the same data type, but got: "
                                 + ", ".join(str(d) for d in dts) + ".",
                                 ["Use tripy.cast() to convert one of them."])
        for o in self.outputs:
            o.dtype = dts[0]

    def infer_shapes(self) -> None:
        raise NotImplementedError

    # ---- lowering ------------------------------------------------------------------------------
    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        raise NotImplementedError

    # ---- helpers ----------------------------------------------------------------------------------
    def name(self) -> str:
        return self.display_name or type(self).__name__.lower()

    def raise_error(self, message: str, details: Sequence[str] = ()) -> NoReturn:
        raise_error(message, self.outputs[0].stack_info if self.outputs else None, details,
                    [i.stack_info for i in self.inputs])

    def attribute_items(self) -> list[tuple[str, Any]]:
        return [(name, getattr(self, name)) for name in _attribute_names(type(self))]

    def cache_key(self) -> tuple:
        """A hashable description of this op's kind and attributes (not its data)."""
        cls = type(self)
        return (cls, tuple([_freeze(getattr(self, name)) for name in _attribute_names(cls)]))

    def __str__(self) -> str:
        outs = ", ".join(o.name for o in self.outputs)
        args = [i.name for i in self.inputs] + [f"{k}={v}" for k, v in self.attribute_items()]
        return f"{outs} = {type(self).__name__.lower()}({', '.join(args)})"


_ATTRIBUTE_NAMES: Dict[type, Tuple[str, ...]] = {}
_ATOMS = frozenset({int, float, bool, str, type(None)})


def _attribute_names(cls: type) -> Tuple[str, ...]:
    """The dataclass fields of an op class other than inputs/outputs (cached: dataclasses.fields() is slow
    and this runs for every op on every eager evaluation, through cache_key)."""
    names = _ATTRIBUTE_NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("inputs", "outputs"))
        _ATTRIBUTE_NAMES[cls] = names
    return names


def _freeze(v: Any) -> Any:
    if type(v) in _ATOMS:
        return v
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v
