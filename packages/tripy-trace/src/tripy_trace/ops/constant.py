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
    def scalar(cls, value: Any, dtype: Any, device: Any, stack_info: Any = None) -> TraceTensor:
        """``Constant.make([], stack_info, 1, dict(value=np.asarray(value, dtype.numpy_dtype), dtype=dtype,
        device=device))`` for a Python number, written out: operators put one in the graph for every
        number the user combines with a tensor (``x * 0.5``), so the value's array and key are cached."""
        cache_key = (type(value), value, dtype, device.kind, device.index)
        entry = _SCALARS.get(cache_key)
        op = cls([], entry[0] if entry is not None else np.asarray(value, dtype=dtype.numpy_dtype), dtype, device)
        out = TraceTensor(op, stack_info)
        out.shape = ()
        out.dtype = dtype
        out.device = device
        op._out = _weak(out)
        if entry is None:
            op.value.flags.writeable = False
            entry = (op.value, BaseTraceOp.key_id(op))
            # Equal numbers that are different constants are not cached: -0.0 and 0.0; NaNs never match.
            if type(value) in (int, bool) or (value == value and value != 0):
                if len(_SCALARS) >= _MAX_SCALARS:
                    _SCALARS.clear()
                _SCALARS[cache_key] = entry
        op._kid = entry[1]  # type: ignore[misc]
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


# (type, value, dtype, device kind, device index) of a Python number -> (its read-only array, the key id
# of a rank-0 constant of it).
_SCALARS: Dict[Tuple[Any, ...], Tuple[np.ndarray, int]] = {}
_MAX_SCALARS = 4096
_weak = weakref.ref
