"""tp.InputInfo: the shape bounds and dtype of one runtime input of a compiled function."""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.sharding import Layout
from tripy_flatir.tensor import DYNAMIC
from tripy_frontend.compiler.named_dimension import NamedDimension, check_bounds
from tripy_frontend.export import public_api
from tripy_frontend.sharding import Sharding
from tripy_frontend.tensor import DimensionSize, Tensor


@public_api(document_under="compile")
class Bounds(NamedTuple):
    """Per-dim minimum, optimum and maximum sizes of an input's shape (``InputInfo.shape_bounds``).

    .. code-block:: python

        bounds = tp.InputInfo(((1, 2, 3), 4), dtype=tp.float32).shape_bounds
        assert bounds == tp.Bounds(min=(1, 4), opt=(2, 4), max=(3, 4)) and not bounds.is_static()
    """

    min: Tuple[int, ...]
    opt: Tuple[int, ...]
    max: Tuple[int, ...]

    def is_static(self) -> bool:
        return self.min == self.opt == self.max


@public_api(document_under="compile")
class InputInfo:
    """Describes one runtime input of a function compiled with :func:`tripy.compile`: its data type
    and, for each dim, either a fixed size (an int) or a range of sizes (a ``(min, opt, max)``
    triple, or a :class:`NamedDimension`). The executable accepts any shape within the bounds; the
    compiler optimizes for ``opt``.

    Args:
        shape: The shape: ints for static dims; ``(min, opt, max)`` triples or NamedDimensions for
            dynamic ones.
        dtype: The data type.
        sharding: How the input is split across the devices of a mesh (static shapes only); the compiled
            program then runs on the whole mesh (see the *Sharding across devices* guide). None: not split.

    .. code-block:: python

        info = tp.InputInfo(shape=(1, (2, 4, 8), 3), dtype=tp.float32)
        assert info.shape_bounds.min == (1, 2, 3)
        assert info.shape_bounds.opt == (1, 4, 3)
        assert info.shape_bounds.max == (1, 8, 3)

    .. code-block:: python

        # Dims that must be equal
        batch = tp.NamedDimension("batch", 1, 2, 16)
        a = tp.InputInfo((batch, 3), dtype=tp.float32)
        b = tp.InputInfo((batch,), dtype=tp.int32)
        assert a.dimension_names == {0: "batch"} and b.dimension_names == {0: "batch"}
    """

    _tripy_unchecked_init = True  # validates each dim itself, with more precise messages than the generic check

    __slots__ = ("shape_bounds", "dimension_names", "dtype", "sharding", "layout")

    def __init__(
        self,
        shape: Sequence[Union[int, Tuple[int, int, int], NamedDimension]],
        dtype: dtypes.dtype,
        sharding: Optional[Sharding] = None,
    ) -> None:

        if isinstance(shape, (int, np.integer, NamedDimension)) and not isinstance(shape, bool):
            shape = (shape,)  # type: ignore[assignment]
        if not isinstance(shape, (list, tuple)):
            raise_error(
                f"tripy.InputInfo: shape must be a sequence of ints, (min, opt, max) triples or "
                f"NamedDimensions, but got {type(shape).__name__}.",
                _stack.capture(),
            )
        if not isinstance(dtype, dtypes.dtype):
            raise_error(
                f"tripy.InputInfo: dtype must be a tripy.dtype (e.g. tp.float32), but got {type(dtype).__name__}.",
                _stack.capture(),
            )
        lo, opt, hi = [], [], []
        names: Dict[int, str] = {}
        for d, elem in enumerate(shape):
            what = f"tripy.InputInfo: dim {d} of shape {_shape_text(shape)}"
            if isinstance(elem, NamedDimension):
                names[d] = elem.name
                bounds = elem.bounds
            elif isinstance(elem, (int, np.integer, DimensionSize)) and not isinstance(elem, bool):
                bounds = check_bounds((elem, elem, elem), what)
            elif isinstance(elem, (list, tuple)):
                if len(elem) != 3:
                    raise_error(
                        f"{what} must be an int or a (min, opt, max) triple, but has {len(elem)} entries.",
                        _stack.capture(),
                        ["A dynamic dim is written (min, opt, max), e.g. (1, 4, 8)."],
                    )
                bounds = check_bounds(elem, what)
            else:
                raise_error(
                    f"{what} must be an int, a (min, opt, max) triple or a tripy.NamedDimension, but got "
                    f"{type(elem).__name__}.",
                    _stack.capture(),
                )
            lo.append(bounds[0])
            opt.append(bounds[1])
            hi.append(bounds[2])
        self.shape_bounds = Bounds(tuple(lo), tuple(opt), tuple(hi))
        self.dimension_names: Dict[int, str] = names
        self.dtype: dtypes.dtype = dtype
        self.sharding: Optional[Sharding] = sharding
        self.layout: Optional[Layout] = None if sharding is None else self._layout_of(sharding)

    def _layout_of(self, sharding: Sharding) -> Layout:
        where = _stack.capture()
        if not isinstance(sharding, Sharding):
            raise_error(
                f"tripy.InputInfo: sharding must be a tripy.Sharding, but got {type(sharding).__name__}.", where
            )
        if not self.shape_bounds.is_static():
            raise_error(
                f"tripy.InputInfo: a sharded input needs a static shape, but {self} has dynamic dims.",
                where,
                ["Sharded programs are compiled for one shape; give each dim a single size."],
            )
        return sharding._layout(self.shape_bounds.min, "tripy.InputInfo", where)

    @property
    def rank(self) -> int:
        return len(self.shape_bounds.min)

    @property
    def trace_shape(self) -> Tuple[int, ...]:
        """The shape as tripy traces it: static sizes, and -1 (dynamic) where min != max."""
        b = self.shape_bounds
        return tuple(lo if lo == hi else DYNAMIC for lo, hi in zip(b.min, b.max))

    def dim_text(self, d: int) -> str:
        lo, opt, hi = self.shape_bounds.min[d], self.shape_bounds.opt[d], self.shape_bounds.max[d]
        text = str(lo) if lo == hi else f"({lo}, {opt}, {hi})"
        return f"{self.dimension_names[d]}={text}" if d in self.dimension_names else text

    def __repr__(self) -> str:
        dims = ", ".join(self.dim_text(d) for d in range(self.rank))
        split = "" if self.sharding is None else f", sharding={self.sharding}"
        return f"InputInfo(shape=({dims}{',' if self.rank == 1 else ''}), dtype={self.dtype}{split})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, InputInfo)
            and self.shape_bounds == other.shape_bounds
            and self.dtype is other.dtype
            and self.dimension_names == other.dimension_names
            and self.layout == other.layout
        )

    def __hash__(self) -> int:
        return hash((self.shape_bounds, self.dtype.name, tuple(sorted(self.dimension_names.items())), self.layout))

    # ---- serialization (used by Executable.save/load) ------------------------------------------------
    def to_json(self) -> Dict[str, Any]:
        b = self.shape_bounds
        data = {
            "min": list(b.min),
            "opt": list(b.opt),
            "max": list(b.max),
            "dtype": self.dtype.name,
            "dimension_names": {str(k): v for k, v in self.dimension_names.items()},
        }
        if self.layout is not None:
            data["sharding"] = self.layout.to_json()
        return data

    @classmethod
    def from_json(cls, data: Any) -> "InputInfo":
        """Rebuild from to_json() output; raises ValueError (not TripyException) on malformed data."""
        if not isinstance(data, dict):
            raise ValueError("an input description is not an object")
        dims: List[List[int]] = []
        for k in ("min", "opt", "max"):
            v = data.get(k)
            if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                raise ValueError("input shape bounds must be lists of ints")
            dims.append(v)
        lo, opt, hi = dims
        if not len(lo) == len(opt) == len(hi) or not all(0 <= a <= b <= c for a, b, c in zip(lo, opt, hi)):
            raise ValueError(f"invalid input shape bounds min={lo}, opt={opt}, max={hi}")
        dtype = dtype_from_name(data.get("dtype"))
        names = data.get("dimension_names", {})
        if not isinstance(names, dict) or not all(
            isinstance(k, str) and k.isdigit() and int(k) < len(lo) and isinstance(v, str) and v
            for k, v in names.items()
        ):
            raise ValueError("invalid dimension names")
        info = cls.__new__(cls)
        info.shape_bounds = Bounds(tuple(lo), tuple(opt), tuple(hi))
        info.dimension_names = {int(k): v for k, v in names.items()}
        info.dtype = dtype
        info.layout = Layout.from_json(data["sharding"]) if "sharding" in data else None
        if info.layout is not None and len(info.layout.spec) != len(lo):
            raise ValueError("an input's sharding does not match its rank")
        info.sharding = None if info.layout is None else Sharding._of(info.layout)
        return info


def dtype_from_name(name: Any) -> dtypes.dtype:
    for dt in dtypes.ALL_DTYPES:
        if dt.name == name:
            return dt
    raise ValueError(f"unknown data type {name!r}")


def _shape_text(shape: Sequence[Any]) -> str:
    parts = []
    for e in shape:
        if isinstance(e, NamedDimension):
            parts.append(repr(e))
        elif isinstance(e, (list, tuple)):
            parts.append(repr(tuple(e)) if all(isinstance(x, (int, np.integer)) for x in e) else "(...)")
        elif isinstance(e, (int, np.integer)):
            parts.append(str(int(e)))
        else:
            parts.append(type(e).__name__)
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def range_dims(
    names: Sequence[str], infos: Sequence[InputInfo]
) -> Tuple[List[Tuple[Any, ...]], Dict[str, Tuple[int, int, int]]]:
    """Each input's dims as the backend's range compilation takes them: ints for static dims, a variable
    name for dynamic ones (the NamedDimension's name, or ``input[dim]``), and each variable's range."""
    variables: Dict[str, Tuple[int, int, int]] = {}
    dims: List[Tuple[Any, ...]] = []
    for name, info in zip(names, infos):
        b = info.shape_bounds
        shape: List[Any] = []
        for d in range(info.rank):
            if b.min[d] == b.max[d]:
                shape.append(b.min[d])
                continue
            var = info.dimension_names.get(d, f"{name}[{d}]")
            variables[var] = (b.min[d], b.opt[d], b.max[d])
            shape.append(var)
        dims.append(tuple(shape))
    return dims, variables


def report_argument(name: str, info: InputInfo, arg: Any, expected: List[str]) -> None:
    """Raise an error saying how `arg`, given for the executable input `name`, does not fit `info` (its type,
    dtype, rank or a dim); `expected` are the report's hints (the executable's inputs)."""
    if not isinstance(arg, Tensor):
        raise_error(
            f"Input '{name}' must be a tripy.Tensor, but got {type(arg).__name__}.",
            _stack.capture(),
            expected + ["Convert data with tripy.Tensor(...) first."],
        )
    origin = [arg.stack_info]
    if arg.dtype is not info.dtype:
        raise_error(
            f"Input '{name}' has data type {arg.dtype}, but the executable expects {info.dtype}.",
            _stack.capture(),
            expected + [f"Convert it with tripy.cast(tensor, tp.{info.dtype})."],
            origin,
        )
    shape = list(arg.trace_tensor.shape)
    if -1 in shape:  # only known once evaluated
        arg.eval()
        shape = list(arg._buffer().shape)
    if len(shape) != info.rank:
        raise_error(
            f"Input '{name}' has rank {len(shape)} (shape {shape}), but the executable expects rank {info.rank}.",
            _stack.capture(),
            expected,
            origin,
        )
    b = info.shape_bounds
    allowed = f"Allowed shapes: min={list(b.min)}, max={list(b.max)}."
    for d, (size, lo, hi) in enumerate(zip(shape, b.min, b.max)):
        if lo == hi and size != lo:
            raise_error(
                f"Input '{name}' has shape {shape}: dim {d} is {size}, but it must be {lo} (a static dim).",
                _stack.capture(),
                expected + [allowed],
                origin,
            )
        if not lo <= size <= hi:
            raise_error(
                f"Input '{name}' has shape {shape}: dim {d} is {size}, which is outside the allowed range "
                f"[{lo}, {hi}].",
                _stack.capture(),
                expected + [allowed, "To accept other sizes, compile again with wider bounds in its tripy.InputInfo."],
                origin,
            )
