"""A small literal (a short list, a size) embedded in the program, and the Python numbers next to tensors
(``Scalar``: literals in compiled programs, arguments of eager ones)."""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tripy_flatir.ops.constant import ConstantOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_trace.ops.base import BaseTraceOp, intern_key
from tripy_trace.tensor import TraceTensor

# How a Python number's array becomes a device buffer: (array, device) -> buffer.
Upload = Callable[[np.ndarray, Any], Any]


@dataclasses.dataclass(repr=False, eq=False)
class Constant(BaseTraceOp):
    value: Any  # a NumPy array (small)
    dtype: Any
    device: Any

    _kid: ClassVar[Optional[int]] = None  # key_id(), where known when the op is made (see scalar())

    @classmethod
    def scalar(cls, value: Any, dtype: Any, device: Any, upload: Optional[Upload] = None) -> TraceTensor:
        """A rank-0 ``Scalar`` of a Python number: operators put one in the graph for every number the user
        combines with a tensor (``x * 0.5``). `upload(array, device)` makes its device buffer (the frontend
        passes the backend's; without one the number cannot be evaluated eagerly). Each use is its own
        graph leaf, so the wiring of a graph (and its eager program) does not depend on which numbers
        happen to be equal; equal numbers share the read-only array, the buffer and the key id, made the
        first time. The leaf carries no stack info: errors are about the op that uses the number."""
        cache_key = (type(value), value, dtype, device.kind, device.index, upload)
        known = _SCALARS.get(cache_key)
        if known is None:
            array = np.asarray(value, dtype=dtype.numpy_dtype)
            array.flags.writeable = False
            # The value is not part of the key id: eager programs take it as an argument (see Scalar).
            kid = intern_key(((Scalar,), 0, 1, ((), dtype, device.kind, device.index)))
            known = (array, None if upload is None else upload(array, device), kid)
            # Equal numbers that are different constants are not shared: -0.0 and 0.0; NaNs never match.
            if type(value) in (int, bool) or (value == value and value != 0):
                if len(_SCALARS) >= _MAX_SCALARS:
                    _SCALARS.clear()
                _SCALARS[cache_key] = known
        op = Scalar(known, dtype, device)
        out = TraceTensor(op, None, (), dtype, device)
        op._out = _weak(out)
        return out

    def infer_devices(self) -> None:
        self.outputs[0].device = self.device

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.dtype

    def infer_shapes(self) -> None:
        v = self.value
        self.outputs[0].shape = v.shape if type(v) is np.ndarray else tuple(np.shape(v))

    def sym_value(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        return [int(v) for v in np.asarray(self.value).reshape(-1)]

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


class Scalar(Constant):
    """A Python number next to a tensor (made by ``Constant.scalar``). Eager evaluation passes it to the
    program as an argument (``data``, its device buffer), so a loop that changes only the number (a
    temperature, a step size) compiles one program; its key id says rank-0 of this dtype on this device,
    never the value. ``tripy.compile`` lowers it like any constant: a literal in the program."""

    is_eager_input: ClassVar[bool] = True

    def __init__(self, known: Tuple[np.ndarray, Any, int], dtype: Any, device: Any) -> None:  # noqa: D107
        self.inputs = []
        self.value, self.data, self._kid = known  # type: ignore[misc]  # (the number's array, buffer, key id)
        self.dtype = dtype
        self.device = device

    def __str__(self) -> str:
        return f"{self.outputs[0].name} = scalar(value={self.value.tolist()}, dtype={self.dtype})"


# (type, value, dtype, device kind, device index, upload) of a Python number -> (read-only array, device
# buffer, key id) of its Scalars.
_SCALARS: Dict[Tuple[Any, ...], Tuple[np.ndarray, Any, int]] = {}
_MAX_SCALARS = 4096
_weak = weakref.ref
