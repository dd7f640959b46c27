"""The trace op base class.

A trace op is a 1:1 picture of one user-level operation. Building it creates its output tensors and
immediately infers their shape (static where known, ``-1`` where not), dtype and device, so bad input
is reported at the user's line. ``to_flat_ir(inputs, outputs)`` binds a FlatIR subgraph to the given
FlatIR tensors.
"""

from __future__ import annotations

import dataclasses
import itertools
import weakref
from typing import Any, ClassVar, Dict, Hashable, List, NoReturn, Optional, Sequence, Tuple

from tripy_flatir.exceptions import raise_error
from tripy_flatir.tensor import FlatIRTensor
from tripy_flatir.device import CPU
from tripy_trace.tensor import TraceTensor


@dataclasses.dataclass(repr=False, eq=False)
class BaseTraceOp:
    """Fields: ``inputs`` (the only dataclass field here), then each op's attributes. ``outputs`` are made
    with the op (``make`` / ``build``)."""

    # Slots for the fields (no per-op __dict__) on the classes the eager hot path builds most; subclasses
    # that declare no __slots__ get a __dict__ as usual.
    __slots__ = ("inputs", "_out")
    inputs: List[TraceTensor]

    # True for ops whose output is a program input (stored data, compile-time placeholders).
    is_input: ClassVar[bool] = False
    # True for ops whose output is an input of the programs eager evaluation compiles: every input op, and
    # the Python numbers next to tensors (``constant.Scalar``), so that a new number is new data for the
    # same program, not a new program. (``tripy.compile`` bakes those numbers in as literals.)
    is_eager_input: ClassVar[bool] = False
    # True for stored data whose ``data`` is one device buffer that a program takes as is (what the fast
    # path of a compiled call asks of each argument's producer).
    holds_buffer: ClassVar[bool] = False
    # The user-facing spelling used in error messages, e.g. "'+'" or "tripy.reshape".
    display_name: ClassVar[Optional[str]] = None

    # ---- sizes as expressions (``tripy_trace.symbolic``) -------------------------------------------
    # Given each input's dims and (for short integer vectors: sizes) value as expressions, an op with a rule
    # says the expression of each dim of its output `index`, and of its value where that is a vector of sizes.
    # None: no rule (each dynamic dim is then a size of its own).
    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return None

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return None

    # ---- outputs ----------------------------------------------------------------------------------
    # A tensor holds its producer, and the producer lists its outputs: a reference cycle per op, which
    # only Python's cycle collector can free. Eager code makes and drops graphs by the thousand, so an op
    # made by ``make`` with one output (nearly all) holds it weakly instead: nothing but its users owns a
    # tensor, and dropping the last user frees tensor, op and any device buffer at once. That is safe
    # because such an op is only reachable through its output (``producer``). ``build`` returns the op
    # itself, so its outputs are held strongly; so are those of ops with several outputs (a user may hold
    # just one of them while the op needs all to be lowered).
    @property
    def outputs(self) -> List[TraceTensor]:
        out = self._out
        if type(out) is list:
            return out  # type: ignore[no-any-return]
        t = out()
        return [] if t is None else [t]

    @outputs.setter
    def outputs(self, value: List[TraceTensor]) -> None:
        out: Any = list(value)  # (``_out``: a list, or a weak reference to the only output)
        self._out = out

    @classmethod
    def make(cls, inputs: List[TraceTensor], stack_info: Any, num_outputs: int, attrs: Dict[str, Any]) -> TraceTensor:
        """Build the op on `inputs` (a fresh list, not copied) and return its first output (the others are
        ``out.producer.outputs``); shapes, dtypes and devices are inferred, so bad input raises here. The
        frontend's path for every op the user calls."""
        op = cls(inputs, **attrs)
        out = TraceTensor(op, stack_info)
        op._out = (
            _weak(out) if num_outputs == 1 else [out] + [TraceTensor(op, stack_info) for _ in range(num_outputs - 1)]
        )
        op.infer(out)
        return out

    @classmethod
    def make_one(cls, inputs: List[TraceTensor], stack_info: Any, *attrs: Any) -> TraceTensor:
        """``make(inputs, stack_info, 1, attrs)`` with the attributes given in field order: the frontend's
        elementwise ops and operators, the ops users call most, build theirs with it."""
        op = cls(inputs, *attrs)
        out = TraceTensor(op, stack_info)
        op._out = _weak(out)
        op.infer(out)
        return out

    @classmethod
    def build(
        cls, inputs: Sequence[TraceTensor], stack_info: Any = None, num_outputs: int = 1, **attrs: Any
    ) -> "BaseTraceOp":
        """The op on `inputs`, with its outputs (``op.outputs``) inferred (see ``make``)."""
        out = cls.make(list(inputs), stack_info, num_outputs, attrs)
        op = out.producer
        op._out = op.outputs  # type: ignore[union-attr]  # (held strongly: the caller holds only the op)
        return op  # type: ignore[return-value]

    # ---- inference (override as needed) ------------------------------------------------------
    def infer(self, out: TraceTensor) -> None:
        """Fill in the outputs' device, dtype and shape (`out` is the first output). Ops on the eager hot
        path override this with one method that does all three."""
        self.infer_devices()
        self.infer_dtypes()
        self.infer_shapes()

    def infer_devices(self) -> None:
        inputs = self.inputs
        device = inputs[0].device if inputs else self.default_device()
        for i in inputs:  # (written without a set: this runs for every op the user builds)
            if i.device is not device and i.device != device:
                self.raise_error(
                    "Inputs are on different devices: " + ", ".join(str(i.device) for i in inputs) + ".",
                    ["Move them to one device first with tripy.copy(tensor, device)."],
                )
        for o in self.outputs:
            o.device = device

    def default_device(self) -> Any:

        return CPU

    def infer_dtypes(self) -> None:
        dts = [i.dtype for i in self.inputs]
        for d in dts:  # dtypes are singletons
            if d is not dts[0]:
                self.raise_error(
                    f"Inputs of {self.name()} must have the same data type, but got: "
                    + ", ".join(str(d) for d in dts)
                    + ".",
                    ["Use tripy.cast() to convert one of them."],
                )
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
        raise_error(
            message, self.outputs[0].stack_info if self.outputs else None, details, [i.stack_info for i in self.inputs]
        )

    def attribute_items(self) -> list[tuple[str, Any]]:
        return [(name, getattr(self, name)) for name in _attribute_names(type(self))]

    def cache_key(self) -> tuple:
        """A hashable description of this op's kind and attributes (not its data)."""
        cls = type(self)
        return (cls, tuple([_freeze(getattr(self, name)) for name in _attribute_names(cls)]))

    def key_id(self) -> int:
        """A small int standing for everything about this op that a compiled program depends on:
        ``cache_key()``, the number of inputs and outputs, and for input ops the shape, dtype and device
        of each output. Equal ids mean equal descriptions (see ``intern_key``); the Trace's structural
        key is made of these ids and the wiring. Ops on the eager hot path override this with cheaper
        lookups that give the same guarantee."""
        key: Tuple[Any, ...] = (self.cache_key(), len(self.inputs), len(self.outputs))
        if self.is_input:
            key += tuple((o.shape, o.dtype, o.device.kind, o.device.index) for o in self.outputs)
        return intern_key(key)

    def __str__(self) -> str:
        outs = ", ".join(o.name for o in self.outputs)
        args = [i.name for i in self.inputs] + [f"{k}={v}" for k, v in self.attribute_items()]
        return f"{outs} = {type(self).__name__.lower()}({', '.join(args)})"


_weak = weakref.ref


# ---- interned keys ----------------------------------------------------------------------------------
# Descriptions of ops (hashable tuples) -> ids. Ids come from a counter and are never reused, so an id
# stands for one description forever, even after the table is cleared to bound its size (programs cached
# under old ids then simply stop matching and age out of the program cache).
_KEY_IDS: Dict[Hashable, int] = {}
_next_key_id = itertools.count(1).__next__
MAX_INTERNED_KEYS = 1 << 16


def intern_key(key: Hashable) -> int:
    """The id of `key`: equal keys get equal ids, different keys different ids."""
    kid = _KEY_IDS.get(key)
    if kid is None:
        if len(_KEY_IDS) >= MAX_INTERNED_KEYS:
            _KEY_IDS.clear()
        kid = _KEY_IDS[key] = _next_key_id()
    return kid


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
