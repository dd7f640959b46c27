"""Data that already exists in a device buffer. It enters programs as an argument, never as a literal.

``ResultStorage`` is the same op made from a program's result buffer for an existing output tensor: a
``Storage`` to everything else (``isinstance``, traces, printing), with a constructor for the hot paths
that turn results into tensors. Like every single-output op it holds its output weakly (see
``BaseTraceOp.outputs``), so dropping the last user of a result frees tensor, op and buffer at once,
without waiting for the cycle collector."""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, ClassVar, List, Optional, Tuple

from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp, intern_key
from tripy_trace.tensor import TraceTensor


@dataclasses.dataclass(repr=False, eq=False)
class Storage(BaseTraceOp):
    __slots__ = ("data", "shape", "dtype", "device", "_kid")  # (_kid: key_id(), once known)
    data: Any  # a backend device buffer
    shape: tuple
    dtype: Any
    device: Any

    is_input: ClassVar[bool] = True
    is_eager_input: ClassVar[bool] = True
    holds_buffer: ClassVar[bool] = True

    @classmethod
    def tensor_of(cls, data: Any, shape: tuple, dtype: Any, device: Any, stack_info: Any = None) -> TraceTensor:
        """``Storage.make([], stack_info, 1, dict(data=..., shape=..., dtype=..., device=...))``, written out:
        every tensor made from user data is one."""
        op = cls([], data, shape, dtype, device)
        op._kid = None  # (set, so that key_id's first read does not miss: a miss raises and catches inside)
        out = TraceTensor(op, stack_info, tuple(shape), dtype, device)
        op._out = _weak(out)
        return out

    def infer_devices(self) -> None:
        self.outputs[0].device = self.device

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        self.outputs[0].shape = tuple(self.shape)

    def cache_key(self) -> tuple:
        return (Storage,)  # shape/dtype/device of inputs are added by key_id(); the data never is

    def key_id(self) -> int:
        # (What BaseTraceOp.key_id computes, written out and remembered: every op built on stored data and
        # every eager evaluation asks for it.)
        kid = getattr(self, "_kid", None)
        if kid is None:
            out = self._out  # (the only output, held weakly, or a list: see BaseTraceOp.outputs)
            o = out() if type(out) is not list else out[0] if len(out) == 1 else None
            if o is None:
                return super().key_id()
            device = o.device
            kid = intern_key(((Storage,), 0, 1, (o.shape, o.dtype, device.kind, device.index)))
            self._kid: Optional[int] = kid
        return kid  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return f"{self.outputs[0].name} = storage(shape={list(self.shape)}, dtype={self.dtype}, device={self.device})"

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        raise AssertionError("storage is a program input")


class ResultStorage(Storage):
    """A ``Storage`` op made from a result buffer, for an existing output tensor."""

    __slots__ = ()

    def __init__(self, output: TraceTensor, data: Any, shape: Tuple[int, ...], dtype: Any, device: Any) -> None:  # noqa: D107 (fields as in Storage; one output)
        self.inputs = []
        self._out = _weak(output)
        self._kid = None
        self.data = data
        self.shape = shape
        self.dtype = dtype
        self.device = device


_DATA = Storage.__dict__["data"]  # the slot that holds a Storage's buffer


class DeferredStorage(ResultStorage):
    """A ``ResultStorage`` whose buffer the backend gave deferred (``tripy_backend.memory.is_deferred``): ``data``
    makes it a buffer of its own on first use (``deferred.materialize()``), so a result that is only read into
    NumPy (``deferred.to_numpy()``) or dropped is never copied."""

    __slots__ = ("deferred",)

    def __init__(self, output: TraceTensor, deferred: Any, shape: Tuple[int, ...], dtype: Any, device: Any) -> None:  # noqa: D107
        super().__init__(output, None, shape, dtype, device)
        self.deferred = deferred

    @property  # type: ignore[override]
    def data(self) -> Any:
        deferred = self.deferred
        if deferred is not None:
            _DATA.__set__(self, deferred.materialize())
            self.deferred = None
        return _DATA.__get__(self)

    @data.setter
    def data(self, value: Any) -> None:
        _DATA.__set__(self, value)
        self.deferred = None

    def to_numpy(self) -> Any:
        deferred = self.deferred
        return deferred.to_numpy() if deferred is not None else None


def store_results(outputs: List[TraceTensor], buffers: List[Any]) -> None:
    """Eager evaluation: each of `outputs` now holds its result buffer as stored data."""
    for t, buf in zip(outputs, buffers):
        shape = t.shape
        if DYNAMIC in shape:  # (reading a buffer's shape costs a microsecond; a static one is known)
            shape = tuple(buf.shape)
        t.producer = ResultStorage(t, buf, shape, t.dtype, t.device)


_weak = weakref.ref
