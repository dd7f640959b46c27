"""tripy.Tensor: a handle on one output of a trace op. Ops only build graph; using a value evaluates it
(turning user data into an array is in ``host_data.py``). The class reads top to bottom: construction,
the methods of the ops (declared for type checkers, attached from ``ops/``), metadata, reading the value.

Shapes are values: ``t.shape`` is a tuple of ``DimensionSize``, a rank-0 int32 tensor (a Tensor subclass,
defined here beside Tensor) whose value is known statically when the dim is static (and folds in shape
arithmetic), and computed at run time when it is not (compiled programs with dynamic dims)."""

from __future__ import annotations

import difflib
import operator
import weakref
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Tuple, Type, Union

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.device import CPU as _CPU
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException, raise_error, warn
from tripy_backend import memory
from tripy_trace.ops.base import BaseTraceOp
from tripy_trace import symbolic
from tripy_trace.ops.binary_elementwise import SIZE_ARITHMETIC, BinaryElementwise, Kind
from tripy_trace.ops.constant import Constant
from tripy_trace.ops.dim_size import DimSize
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_trace.ops.storage import DeferredStorage, Storage
from tripy_trace.tensor import TraceTensor
from tripy_frontend import host_data
from tripy_frontend.compiler.tracing import traced_function
from tripy_frontend.eager import evaluate
from tripy_frontend.public_names import PUBLIC_API, public_class
from tripy_frontend.tracebacks import strip_tripy_frames

if TYPE_CHECKING:
    Operand = Union["Tensor", int, float, np.number]  # the other side of a Tensor's operators
    Shape = Sequence[Union[int, "DimensionSize"]]


@public_class(document_under="tensors")
class Tensor:
    """A tensor. Create one from a Python scalar or (nested) list, a NumPy array, or any object that
    supports DLPack or the array protocol; or get one from a tripy operation. Arrays must be row-major
    (C-contiguous): a view with other strides (a transpose, a slice with a step) is refused, as in nvtripy;
    ``np.ascontiguousarray(a)`` (``t.contiguous()`` in PyTorch) makes one that is. With `dtype` the data is
    converted, with `device` copied there.

    The data is copied once into a buffer the tensor owns (DLPack producers are read without a copy first),
    so later writes to the array do not change the tensor. Reading a result out is not a copy on the CPU:
    ``np.from_dlpack(t)`` shares its memory (read-only).

    Operations are lazy: they record what to compute. A tensor is evaluated when its value is used
    (``print``, ``.eval()``, ``np.from_dlpack(t)``, ``t.tolist()``, ``bool(t)``).

    .. code-block:: python

        t = tp.Tensor([[1.0, 2.0], [3.0, 4.0]])
        assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    """

    __slots__ = ("trace_tensor", "__weakref__")
    # NumPy's operators defer to tripy's (``np_array + tensor`` is a Tensor, as in nvtripy): NumPy returns
    # NotImplemented from ndarray.__add__ for an operand of higher priority, so Python calls Tensor.__radd__.
    # NumPy functions (np.exp(t), np.allclose(t, a)) still read the value through __array__.
    __array_priority__ = 1000
    _tripy_unchecked_init = True  # construction validates its data itself and is on the eager hot path

    def __init__(
        self,
        data: Any,
        dtype: Optional[dtypes.dtype] = None,
        device: Optional[Device] = None,
        name: Optional[str] = None,
        fetch_stack_info: bool = True,
    ) -> None:
        try:  # (an API boundary itself, like eval: see tracebacks.py; tp.Tensor(data) is on the eager hot path)
            info = _capture(1, 1) if fetch_stack_info else None  # (skip: this frame)
            tdtype = buffer = None
            if type(data) is np.ndarray and dtype is None and data.flags.c_contiguous:  # the common case, kept short
                array = data
                tdtype = _FROM_NUMPY.get(array.dtype)
                if tdtype is not None and device is None:
                    buffer = memory.to_cpu(array)
            if tdtype is None:
                array = _to_numpy(data, dtype, info)
                tdtype = dtypes.from_numpy(array.dtype)
                assert tdtype is not None
            if device is None:
                device = _CPU
            if buffer is None:
                buffer = _to_device(array, device)
            self.trace_tensor = Storage.tensor_of(buffer, array.shape, tdtype, device, info)
            if name:
                self.trace_tensor.name = name
        except TripyException as e:
            strip_tripy_frames(e)
            raise

    if TYPE_CHECKING:  # methods attached from ops/ through TENSOR_METHOD_REGISTRY, declared for type checkers

        def __add__(self, other: "Operand") -> "Tensor": ...
        def __radd__(self, other: "Operand") -> "Tensor": ...
        def __sub__(self, other: "Operand") -> "Tensor": ...
        def __rsub__(self, other: "Operand") -> "Tensor": ...
        def __mul__(self, other: "Operand") -> "Tensor": ...
        def __rmul__(self, other: "Operand") -> "Tensor": ...
        def __truediv__(self, other: "Operand") -> "Tensor": ...
        def __rtruediv__(self, other: "Operand") -> "Tensor": ...
        def __floordiv__(self, other: "Operand") -> "Tensor": ...
        def __rfloordiv__(self, other: "Operand") -> "Tensor": ...
        def __mod__(self, other: "Operand") -> "Tensor": ...
        def __rmod__(self, other: "Operand") -> "Tensor": ...
        def __pow__(self, other: "Operand") -> "Tensor": ...
        def __rpow__(self, other: "Operand") -> "Tensor": ...
        def __matmul__(self, other: "Operand") -> "Tensor": ...
        def __rmatmul__(self, other: "Operand") -> "Tensor": ...
        def __neg__(self) -> "Tensor": ...
        def __abs__(self) -> "Tensor": ...
        def __invert__(self) -> "Tensor": ...
        def __and__(self, other: "Operand") -> "Tensor": ...
        def __or__(self, other: "Operand") -> "Tensor": ...
        def __xor__(self, other: "Operand") -> "Tensor": ...
        def __lt__(self, other: "Operand") -> "Tensor": ...
        def __le__(self, other: "Operand") -> "Tensor": ...
        def __gt__(self, other: "Operand") -> "Tensor": ...
        def __ge__(self, other: "Operand") -> "Tensor": ...
        def __eq__(self, other: "Operand") -> "Tensor": ...  # type: ignore[override]
        def __ne__(self, other: "Operand") -> "Tensor": ...  # type: ignore[override]
        def __getitem__(self, index: Any) -> "Tensor": ...
        def reshape(self, shape: "Shape") -> "Tensor": ...
        def permute(self, perm: Sequence[int]) -> "Tensor": ...
        def transpose(self, dim0: int, dim1: int) -> "Tensor": ...
        def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor": ...
        def squeeze(self, dims: Union[int, Sequence[int]]) -> "Tensor": ...
        def unsqueeze(self, dim: int) -> "Tensor": ...
        def cast(self, dtype: dtypes.dtype) -> "Tensor": ...
        def copy(self, device: Device) -> "Tensor": ...
        def expand(self, sizes: "Shape") -> "Tensor": ...

    # ---- construction from ops (used by every frontend op) --------------------------------------
    @classmethod
    def _from_trace_tensor(cls, trace_tensor: TraceTensor) -> "Tensor":
        t = cls.__new__(cls)
        t.trace_tensor = trace_tensor
        return t

    @classmethod
    def _from_op(cls, op_cls: Type[BaseTraceOp], inputs: Sequence["Tensor"], num_outputs: int = 1, **attrs: Any) -> Any:
        """Build a trace op on `inputs` and wrap its output(s); the stack is captured for error reports
        (from the caller's frame on)."""
        out = op_cls.make(list(map(_trace_tensor_of, inputs)), _capture(1, 1), num_outputs, attrs)
        if num_outputs == 1:  # the common case, kept short: this runs for every op the user calls
            t = _new(cls)
            t.trace_tensor = out
            return t
        return [cls._from_trace_tensor(o) for o in out.producer.outputs]  # type: ignore[union-attr]

    # ---- metadata (no evaluation needed) ---------------------------------------------------------
    @property
    def dtype(self) -> dtypes.dtype:
        return self.trace_tensor.dtype

    @property
    def device(self) -> Device:
        return self.trace_tensor.device

    @property
    def rank(self) -> int:
        return self.trace_tensor.rank

    @property
    def ndim(self) -> int:
        """The number of dimensions (the same as ``rank``, by NumPy's name)."""
        return self.trace_tensor.rank

    @property
    def shape(self) -> Tuple["DimensionSize", ...]:
        """The shape as a tuple of ``DimensionSize`` values (ints when known, run-time values when not)."""
        return shape_of(self)

    @property
    def name(self) -> str:
        return self.trace_tensor.name

    @name.setter
    def name(self, value: str) -> None:
        self.trace_tensor.name = value

    @property
    def stack_info(self) -> Any:
        return self.trace_tensor.stack_info

    # ---- reading the value (each of these evaluates the tensor first if it is not yet) ------------
    def eval(self) -> Tensor:  # (nvtripy's name)
        """Compute this tensor's value now (compiling if needed) and return the tensor itself."""
        if not isinstance(self.trace_tensor.producer, Storage):
            try:  # (an API boundary: see tracebacks.py)
                evaluate([self])
            except TripyException as e:
                strip_tripy_frames(e)
                raise
            _warn_if_compiling(self)  # (once it is evaluated: a tensor that cannot be is an error instead)
        return self

    def _buffer(self) -> Any:
        self.eval()
        producer = self.trace_tensor.producer
        assert isinstance(producer, Storage)
        return producer.data

    def _numpy(self) -> np.ndarray:
        self.eval()
        producer = self.trace_tensor.producer
        if producer.__class__ is DeferredStorage:  # (read without materializing it)
            array = producer.to_numpy()  # type: ignore[union-attr]
            if array is not None:
                return array  # type: ignore[no-any-return]
        return memory.to_numpy(producer.data)  # type: ignore[union-attr]

    def tolist(self) -> Any:
        """The value as (nested) Python lists of Python scalars."""
        array = self._numpy()
        if self.dtype in (dtypes.bfloat16, dtypes.float8):
            array = array.astype(np.float32)
        return array.tolist()

    def __dlpack__(
        self, *args: Any, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None
    ) -> Any:
        try:  # (an API boundary itself, like eval: np.from_dlpack(t) is how eager results are read)
            buffer = self._buffer()
            if self.trace_tensor.producer.__class__ is ShardedStorage:  # (split across devices: gathered)
                return self._numpy().__dlpack__(
                    *args, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
                )
            if not args and stream is None and copy is not True and (dl_device is None or tuple(dl_device) == (1, 0)):
                capsule = memory.cpu_dlpack(buffer)  # (the common case, NumPy reading a CPU tensor: no detours)
                if capsule is not None:
                    return capsule
            return buffer.__dlpack__(*args, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
        except TripyException as e:
            strip_tripy_frames(e)
            raise

    def __dlpack_device__(self) -> Any:
        return self._buffer().__dlpack_device__()

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        """NumPy 2's array protocol: ``copy=True`` (``np.array(t)``) returns a new, writeable array;
        ``copy=None`` (``np.asarray(t)``) may share the tensor's memory, read-only; ``copy=False`` shares it
        or raises ValueError when a copy is needed (a different dtype)."""
        array = self._numpy()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError(
                    f"Converting a {self.dtype} tensor to {np.dtype(dtype)} needs a copy, but copy=False "
                    f"was given. Use np.asarray(t, dtype) to allow the copy."
                )
            return array.astype(dtype)  # (a new array, writeable)
        return array.copy() if copy else array

    def __bool__(self) -> bool:
        array = self._numpy()  # (a static DimensionSize's without evaluating: see its _numpy)
        if array.size != 1:
            raise_error(
                f"The truth value of a tensor with shape {list(array.shape)} is ambiguous.",
                self.stack_info,
                ["Use tripy.any() or tripy.all() to reduce it first."],
            )
        return bool(array.reshape(()))

    def __int__(self) -> int:  # (DimensionSize has its own)
        return int(self._scalar())

    def __float__(self) -> float:
        return float(self._scalar())

    def __index__(self) -> int:
        if self.dtype not in dtypes.INTEGER:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self)

    def _scalar(self) -> Any:
        array = self._numpy()
        if array.size != 1:
            raise_error(
                f"Only a tensor with one element can be converted to a Python scalar, but this one has "
                f"shape {list(array.shape)}.",
                self.stack_info,
            )
        return array.reshape(()).item()

    def __repr__(self) -> str:
        array = self._numpy()
        if self.dtype in (dtypes.bfloat16, dtypes.float8):
            array = array.astype(np.float32)
        body = np.array2string(array, separator=", ", prefix="    ", threshold=1000, edgeitems=3)
        return f"tensor(\n    {body},\n    dtype={self.dtype}, loc={self.device}, shape={tuple(array.shape)})"

    __str__ = __repr__

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickling (``pickle``, ``multiprocessing``, Ray) through host memory: the value (evaluated now), its dtype
        and device; unpickling copies it onto that device, as ``tp.Tensor(array, dtype, device)`` does."""
        return (Tensor, (np.require(self._numpy(), requirements="C"), self.dtype, self.device))

    @property
    def is_evaluated(self) -> bool:
        return isinstance(self.trace_tensor.producer, Storage)

    def __len__(self) -> int:
        if self.rank == 0:
            raise TypeError("len() of a rank-0 tensor")
        return int(self.shape[0])

    def __iter__(self) -> Any:
        raise TypeError("tripy tensors are not iterable; index them with t[i] or convert with t.tolist().")

    __hash__ = object.__hash__  # tensors are hashable by identity (== builds a comparison)

    if not TYPE_CHECKING:  # (hidden from type checkers, which would otherwise accept any attribute)

        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            if name in _OTHER_LIBRARIES:
                hint = f" {_OTHER_LIBRARIES[name]}"
            elif name in PUBLIC_API:
                hint = f" Did you mean: 'tripy.{name}'?"
            else:  # (public names only: a private helper is never the answer)
                close = difflib.get_close_matches(name, [n for n in dir(type(self)) if not n.startswith("_")], n=1)
                hint = f" Did you mean: '{close[0]}'?" if close else ""
            raise AttributeError(f"'tripy.Tensor' object has no attribute '{name}'.{hint}")


# What users of NumPy and PyTorch reach for on a tensor, and tripy's spelling of it (nvtripy's too).
_TO_NUMPY = (
    "To get a NumPy array, use np.from_dlpack(t) (it shares the evaluated result's memory on the CPU), "
    "or t.tolist() for Python lists."
)
_OTHER_LIBRARIES = {
    "numpy": _TO_NUMPY,
    "to_numpy": _TO_NUMPY,
    "item": "For a Python number, use float(t), int(t) or bool(t) (on a tensor with one element).",
    "cpu": "To move a tensor, use tripy.copy(t, tp.device('cpu')).",
    "to": "To move a tensor, use tripy.copy(t, device); to change its dtype, tripy.cast(t, dtype).",
    "astype": "To change a tensor's dtype, use tripy.cast(t, dtype).",
}


def _warn_if_compiling(t: Tensor) -> None:
    name = traced_function()
    if name is not None:
        frame = t.stack_info.user_frame if t.stack_info else None
        warn(
            f"A tensor{f' created at {frame}' if frame else ''} is evaluated while tripy.compile traces "
            f"'{name}': its value is computed now, once, and baked into the executable as a constant.",
            t.stack_info,
        )


_capture = _stack.capture
_new = object.__new__
_trace_tensor_of = operator.attrgetter("trace_tensor")
_to_device = memory.to_device
_FROM_NUMPY = {d.numpy_dtype: d for d in dtypes.ALL_DTYPES if d.numpy_dtype is not None}


if TYPE_CHECKING:
    # Type checkers see a DimensionSize as an int too (``n: int = x.shape[0]``, ``range(x.shape[0])``), as
    # it behaves: it converts, indexes and compares as one. (At run time it is a Tensor only: an int base
    # would give it a second memory layout.)
    class _SizeBase(Tensor, int):  # type: ignore[misc]
        pass
else:
    _SizeBase = Tensor


@public_class(document_under="tensors")
class DimensionSize(_SizeBase):
    """The size of one dimension: a rank-0 int32 tensor. Static sizes behave like Python ints, and every
    size prints as a number.

    Arithmetic on sizes and ints gives DimensionSizes: ``+``, ``-``, ``*``, ``//`` and ``%`` as Python's
    ints do, and ``/`` as nvtripy's does, an int32 division that rounds toward zero (``7 / 2 == 3``,
    so ``x - (x / y) * y`` is the remainder), whether the sizes are static or known only at run time.

    .. code-block:: python

        a = tp.ones((2, 3, 8))
        assert str(a.shape[1]) == "3"
        half = a.shape[2] / 2
        assert isinstance(half, tp.DimensionSize) and half == 4
        assert a.shape[1] / 2 == 1 and a.shape[1] - (a.shape[1] / 2) * 2 == 1
        assert tp.reshape(a, (2, a.shape[1], a.shape[2] / 2, -1)).shape == (2, 3, 4, 2)
        assert tp.DimensionSize(5, name="five") + 1 == 6
    """

    __slots__ = ("_static", "_tt")

    def __init__(self, data: Any, name: Optional[str] = None) -> None:  # noqa: D107
        self._static: Optional[int] = int(data)
        self._tt: Optional[TraceTensor] = None
        if name:
            self.trace_tensor.name = name

    @property  # type: ignore[override]
    def trace_tensor(self) -> TraceTensor:  # built lazily: most static sizes never enter a graph
        if self._tt is None:
            op = Constant.build([], _capture(), value=np.int32(self._static or 0), dtype=dtypes.int32, device=_CPU)
            self._tt = op.outputs[0]
        return self._tt

    @trace_tensor.setter
    def trace_tensor(self, value: TraceTensor) -> None:
        self._tt = value

    @classmethod
    def _dynamic(cls, tensor: Tensor) -> "DimensionSize":
        d = cls.__new__(cls)
        d._static = None
        d._tt = tensor.trace_tensor
        return d

    def __repr__(self) -> str:
        return str(self._static) if self._static is not None else str(int(self))

    __str__ = __repr__

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool) or isinstance(other, DimensionSize):
            return _integer_div(self, other)
        return Tensor.__truediv__(self, other)  # type: ignore[attr-defined]

    def __rtruediv__(self, other: Any) -> Any:
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            return _integer_div_reflected(self, other)
        return Tensor.__rtruediv__(self, other)  # type: ignore[attr-defined]

    def __int__(self) -> int:
        return self._static if self._static is not None else int(Tensor._scalar(self))

    def __index__(self) -> int:
        return int(self)

    def __reduce__(self) -> Tuple[Any, ...]:
        return (DimensionSize, (int(self),))  # (its value: a static size again, once unpickled)

    def _numpy(self) -> np.ndarray:
        # A static size converts (float(), NumPy, ...) without evaluating its tensor: evaluation would turn
        # it into stored data, a program argument, where shape arithmetic needs a constant it can fold.
        if self._static is not None:
            return np.array(self._static, dtype=np.int32)
        return super()._numpy()

    __hash__ = Tensor.__hash__


def static_value(t: Any) -> Optional[int]:
    """The statically known value of a DimensionSize (None if only known at run time)."""
    return _constant(size_expression(t)) if isinstance(t, DimensionSize) else None


def size_expression(d: DimensionSize) -> Any:
    """A size as an expression over the sizes only known at run time (``tripy_trace.symbolic``), or None."""
    if d._static is not None:
        return d._static
    value = symbolic.value(d.trace_tensor)
    return value[0] if value is not None and len(value) == 1 else None


def _constant(expression: Any) -> Optional[int]:
    return expression if isinstance(expression, int) else None


class TensorShape(tuple):
    """A tensor's shape: a tuple of DimensionSizes that also compares equal to a list, as older nvtripy's
    shapes did (``t.shape == [2, 3]`` and ``t.shape == (2, 3)``)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__


# Tensors of sizes by what they hold, as ``symbolic`` expressions (see `size_tensor`).
_SIZE_TENSORS: "weakref.WeakValueDictionary[Any, TraceTensor]" = weakref.WeakValueDictionary()


def size_tensor(key: Any, build: Callable[[], TraceTensor]) -> TraceTensor:
    """The tensor an earlier op made for `key` (a size's expression, or a shape's tuple of expressions and ints),
    else `build()`'s, kept for the ops after it. So a traced program reads each run-time size once and builds each
    shape vector once, not once per op that needs them (GPT-2 over a range of lengths: 135 reads of its length, 98
    shape vectors). Weak: an entry goes with the trace that made it (and symbols are never reused)."""
    found = _SIZE_TENSORS.get(key)
    if found is None:
        found = build()
        _SIZE_TENSORS[key] = found
    return found


def shape_of(t: Tensor) -> tuple:
    out = []
    for d, typed in enumerate(t.trace_tensor.shape):
        if typed >= 0:
            out.append(DimensionSize(typed))
            continue
        expression = symbolic.dims(t.trace_tensor)[d]
        size = _constant(expression)  # (a dim typed dynamic whose expression is a number is that number)
        if size is not None:
            out.append(DimensionSize(size))
            continue
        read = size_tensor(expression, lambda: Tensor._from_op(DimSize, [t], dim=d).trace_tensor)
        out.append(DimensionSize._dynamic(Tensor._from_trace_tensor(read)))
    return TensorShape(out)


def _arith(kind: Kind, fold: Callable[[int, int], Any], reflected: bool = False) -> Callable[..., Any]:
    def method(self: DimensionSize, other: Any) -> Any:
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            other = DimensionSize(int(other))
        if not isinstance(other, DimensionSize):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        if a._static is not None and b._static is not None:
            result = fold(a._static, b._static)
            return DimensionSize(result) if not isinstance(result, bool) else result
        if kind in SIZE_ARITHMETIC:  # (shape arithmetic whose result does not vary is a static size)
            ea, eb = size_expression(a), size_expression(b)
            static = None if ea is None or eb is None else _constant(SIZE_ARITHMETIC[kind](ea, eb))
            if static is not None:
                return DimensionSize(static)
        out = Tensor._from_op(BinaryElementwise, [a, b], kind=kind)
        return DimensionSize._dynamic(out) if not kind.is_comparison else out

    return method


for _name, _kind, _fold in [
    ("add", Kind.SUM, operator.add),
    ("sub", Kind.SUB, operator.sub),
    ("mul", Kind.MUL, operator.mul),
    ("floordiv", Kind.FLOOR_DIV, operator.floordiv),
    ("mod", Kind.MOD, operator.mod),
]:
    setattr(DimensionSize, f"__{_name}__", _arith(_kind, _fold))
    setattr(DimensionSize, f"__r{_name}__", _arith(_kind, _fold, reflected=True))


def _truncating_div(a: int, b: int) -> int:
    """int32 division as nvtripy's (TensorRT's) and StableHLO's: rounds toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_integer_div = _arith(Kind.DIV, _truncating_div)
_integer_div_reflected = _arith(Kind.DIV, _truncating_div, reflected=True)
for _name, _kind, _fold in [
    ("eq", Kind.EQ, operator.eq),
    ("ne", Kind.NE, operator.ne),
    ("lt", Kind.LT, operator.lt),
    ("le", Kind.LE, operator.le),
    ("gt", Kind.GT, operator.gt),
    ("ge", Kind.GE, operator.ge),
]:
    setattr(DimensionSize, f"__{_name}__", _arith(_kind, _fold))


def _to_numpy(data: Any, dtype: Optional[dtypes.dtype], info: Any) -> np.ndarray:
    if isinstance(data, Tensor):
        raise_error(
            "tp.Tensor() was given a tripy Tensor.", info, ["Use the tensor directly, or tripy.copy() to copy it."]
        )
    return host_data.to_numpy(data, dtype, info)
