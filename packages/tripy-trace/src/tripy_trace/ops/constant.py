"""A small literal (a Python scalar or a short list) embedded in the program."""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, ClassVar, Dict, List, Optional, Tuple

import numpy as np

from tripy_flatir.ops.constant import ConstantOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp
from tripy_trace.tensor import TraceTensor


@dataclasses.dataclass(repr=False, eq=False)
class Constant(BaseTraceOp):
    value: Any  # a NumPy array (small)
    dtype: Any
    device: Any

    _kid: ClassVar[Optional[int]] = None  # key_id(), where known when the op is made (see scalar())

    @classmethod
    def scalar(cls, value: Any, dtype: Any, device: Any) -> TraceTensor:
        """A rank-0 constant of a Python number: operators put one in the graph for every number the user
        combines with a tensor (``x * 0.5``). Equal numbers share one tensor (and its read-only array), so
        after the first time this is one dict lookup. Sharing is safe: the tensor is a graph leaf that no
        user holds (operators consume it), nothing changes it, and it carries no stack info, since where a
        number was first used says nothing about the line an error report is about."""
        cache_key = (type(value), value, dtype, device.kind, device.index)
        out = _SCALARS.get(cache_key)
        if out is not None:
            return out
        array = np.asarray(value, dtype=dtype.numpy_dtype)
        array.flags.writeable = False
        op = cls([], array, dtype, device)
        out = TraceTensor(op, None, (), dtype, device)
        op._out = _weak(out)
        op._kid = BaseTraceOp.key_id(op)  # type: ignore[misc]
        # Equal numbers that are different constants are not shared: -0.0 and 0.0; NaNs never match.
        if type(value) in (int, bool) or (value == value and value != 0):
            if len(_SCALARS) >= _MAX_SCALARS:
                _SCALARS.clear()
            _SCALARS[cache_key] = out
        return out

    def infer_devices(self) -> None:
        self.outputs[0].device = self.device

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        v = self.value
        self.outputs[0].shape = v.shape if type(v) is np.ndarray else tuple(np.shape(v))

    def cache_key(self) -> tuple:
        v = np.asarray(self.value)
        return (Constant, self.dtype.name, v.shape, v.tobytes(), self.device)

    def key_id(self) -> int:
        kid = self._kid
        return super().key_id() if kid is None else kid

    def __str__(self) -> str:
        return f"{self.outputs[0].name} = constant(value={np.asarray(self.value).tolist()}, dtype={self.dtype})"

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        ConstantOp.build([], outputs, data=np.asarray(self.value, dtype=self.dtype.numpy_dtype))


# (type, value, dtype, device kind, device index) of a Python number -> the rank-0 constant of it.
_SCALARS: Dict[Tuple[Any, ...], TraceTensor] = {}
_MAX_SCALARS = 4096
_weak = weakref.ref
