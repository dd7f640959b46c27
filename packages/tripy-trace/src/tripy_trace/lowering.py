"""Helpers that trace ops use in to_flat_ir(): shape tensors, broadcasting, scalar constants.

Static dims lower to static StableHLO; dims only known at run time (``-1``) lower to shape arithmetic
(get_dimension_size, dynamic_broadcast_in_dim, ...) that the backend specializes per input shape.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Set

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.compare import CompareOp
from tripy_flatir.ops.concatenate import ConcatenateOp
from tripy_flatir.ops.constant import ConstantOp
from tripy_flatir.ops.convert import ConvertOp
from tripy_flatir.ops.dynamic_broadcast import DynamicBroadcastOp
from tripy_flatir.ops.dynamic_reshape import DynamicReshapeOp
from tripy_flatir.ops.get_dimension_size import GetDimensionSizeOp
from tripy_flatir.ops.reshape import ReshapeOp
from tripy_flatir.ops.select import SelectOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor


class _Built:
    """The shape arithmetic one function's lowering has built (see `shared_shapes`): what computes it -> its result,
    and the ids of those results."""

    def __init__(self) -> None:
        self.by_key: Dict[Any, FlatIRTensor] = {}
        self.ids: Set[int] = set()


_built: contextvars.ContextVar[Optional[_Built]] = contextvars.ContextVar("built", default=None)
SMALL_CONSTANT = 16  # elements: constants up to this size (shape arithmetic's) are built once per function


@contextlib.contextmanager
def shared_shapes() -> Iterator[None]:
    """Within it (the lowering of one function, ``Trace.to_flat_ir``), each size read from a function input, small
    constant and shape vector of them is built once and given to every op that asks for it: a dynamic program's
    ops ask for the same ones again and again (GPT-2 small over a range of lengths: ~3000 of the ~4800 ops its
    lowering built were such repeats, which the function then dropped, see ``FlatIRFunction._shared``)."""
    token = _built.set(_Built())
    try:
        yield
    finally:
        _built.reset(token)


def _shared(key: Any, build: Callable[[], FlatIRTensor]) -> FlatIRTensor:
    """`build()`'s tensor, built once per key within `shared_shapes` (every time outside it)."""
    built = _built.get()
    if built is None:
        return build()
    out = built.by_key.get(key)
    if out is None:
        out = built.by_key[key] = build()
        built.ids.add(id(out))
    return out


def constant(
    value: Any, dtype: Any, device: Any, shape: Sequence[int] = (), reason: Optional[str] = None
) -> FlatIRTensor:
    data = np.asarray(value, dtype=dtype.numpy_dtype)

    def build() -> FlatIRTensor:
        out = FlatIRTensor.build(shape, dtype, device, reason)
        ConstantOp.build([], [out], data=data)
        return out

    if reason is not None or data.size > SMALL_CONSTANT or len(shape) > 1:
        return build()
    return _shared(("constant", dtype, device, tuple(shape), data.tobytes()), build)


def dim_size(x: FlatIRTensor, dim: int) -> FlatIRTensor:
    """Size of dim `dim` of x as a 1-element int32 tensor (a constant when static; read from the function's input
    of the same size where the trace knows one, ``FlatIRTensor.size_sources``: once per function, see
    `shared_shapes`)."""
    if x.shape[dim] != DYNAMIC:
        return constant([x.shape[dim]], dtypes.int32, x.device, (1,))
    source = x.size_sources[dim] if x.size_sources is not None else None

    def build() -> FlatIRTensor:
        scalar = FlatIRTensor.build((), dtypes.int32, x.device)
        GetDimensionSizeOp.build([x], [scalar], dim=dim)
        return reshape(scalar, (1,))

    if source is None:  # (`x` may be an op's own input here, which the function renames when it takes the op in)
        return build()
    x, dim = source
    return _shared(("size", id(x), dim), build)


def concat_dims(parts: Sequence[FlatIRTensor], device: Any) -> FlatIRTensor:
    """Concatenate 1-D int32 tensors into one shape tensor (once per function for parts built once, see
    `shared_shapes`)."""
    if not parts:
        return constant(np.zeros((0,), np.int32), dtypes.int32, device, (0,))
    if len(parts) == 1:
        return parts[0]

    def build() -> FlatIRTensor:
        out = FlatIRTensor.build((sum(p.shape[0] for p in parts),), dtypes.int32, device)
        ConcatenateOp.build(list(parts), [out], dim=0)
        return out

    built = _built.get()
    if built is None or not all(id(p) in built.ids for p in parts):
        return build()
    return _shared(("concatenate", tuple(map(id, parts))), build)


def shape_of(x: FlatIRTensor) -> FlatIRTensor:
    """The run-time shape of x as a 1-D int32 tensor."""
    if x.is_static:
        return constant(list(x.shape), dtypes.int32, x.device, (x.rank,))
    return concat_dims([dim_size(x, d) for d in range(x.rank)], x.device)


def reshape(
    x: FlatIRTensor,
    shape: Sequence[int],
    shape_tensor: Optional[FlatIRTensor] = None,
    reason: Optional[str] = None,
    out: Optional[FlatIRTensor] = None,
) -> FlatIRTensor:
    """Reshape x to `shape` (static), or to `shape_tensor` when `shape` has dynamic dims; binds `out` if given."""
    out = out or FlatIRTensor.build(shape, x.dtype, x.device, reason)
    if DYNAMIC not in shape:
        ReshapeOp.build([x], [out])
    else:
        assert shape_tensor is not None, "a dynamic reshape needs the output shape as a tensor"
        DynamicReshapeOp.build([x, shape_tensor], [out])
    return out


def convert(x: FlatIRTensor, dtype: Any, out: Optional[FlatIRTensor] = None) -> FlatIRTensor:
    if x.dtype is dtype and out is None:
        return x
    out = out if out is not None else FlatIRTensor.build(x.shape, dtype, x.device)
    ConvertOp.build([x], [out])
    return out


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> Optional[tuple[int, ...]]:
    """NumPy broadcasting of two shapes with DYNAMIC dims; None if they are incompatible.

    A dynamic dim against a static 1 gives the dynamic dim; against a static n > 1 gives n (the
    run-time size must then be n or 1). Two dynamic dims are taken to be equal.
    """
    if a == b:  # the common case, on the path of every elementwise op the user calls
        return tuple(a)
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x == DYNAMIC:
            out.append(y)
        elif y == DYNAMIC or x == y:
            out.append(x)
        else:
            return None
    return tuple(out)


def broadcast_to(
    x: FlatIRTensor,
    shape: Sequence[int],
    shape_tensor_fn: Any = None,
    reason: Optional[str] = None,
    force: bool = False,
) -> FlatIRTensor:
    """Broadcast x (NumPy rules, aligned right) to `shape`. Returns x itself when nothing is needed (unless
    `force`: a dynamic dim of x may be 1 at run time where the target's is not).

    `shape_tensor_fn()` must give the run-time target shape when `shape` has dynamic dims.
    """
    shape = tuple(shape)
    offset = len(shape) - x.rank
    if (
        offset == 0
        and not (force and DYNAMIC in x.shape)
        and all(xd == sd or (xd == DYNAMIC and sd == DYNAMIC) for xd, sd in zip(x.shape, shape))
    ):
        return x
    dims = list(range(offset, len(shape)))
    out = FlatIRTensor.build(shape, x.dtype, x.device, reason)
    if DYNAMIC not in shape:
        BroadcastOp.build([x], [out], broadcast_dim=dims)
    else:
        DynamicBroadcastOp.build([x, shape_tensor_fn()], [out], broadcast_dim=dims)
    return out


def broadcast_operands(operands: Sequence[FlatIRTensor], out_shape: Sequence[int], op_name: str) -> list[FlatIRTensor]:
    """Broadcast each operand to `out_shape` (the NumPy-broadcast shape of all of them)."""
    device = operands[0].device
    rank = len(out_shape)

    def sizes_at(d: int) -> list[tuple[FlatIRTensor, int]]:
        """The operands whose dim aligned with `d` is dynamic, each once per run-time size (operands whose size
        there the trace knows equal to an earlier one's are left out), with that dim."""
        found: list[tuple[FlatIRTensor, int]] = []
        keys: list[Any] = []
        for o in operands:
            od = d - (rank - o.rank)
            if od < 0 or o.shape[od] != DYNAMIC:
                continue
            key = o.sizes[od] if o.sizes is not None else object()
            if key not in keys:
                keys.append(key)
                found.append((o, od))
        return found

    dynamic = [sizes_at(d) for d in range(rank)]

    def shape_tensor() -> FlatIRTensor:
        parts = []
        for d, size in enumerate(out_shape):
            if size != DYNAMIC:
                parts.append(constant([size], dtypes.int32, device, (1,)))
                continue
            # The run-time size: of the operands' sizes here (all dynamic: a static one would be the output's),
            # the one that is not 1 at run time (sizes that differ and are not 1 make the program invalid).
            run_size: Optional[FlatIRTensor] = None
            for o, od in dynamic[d]:
                run_size = dim_size(o, od) if run_size is None else _broadcast_dim(run_size, dim_size(o, od))
            assert run_size is not None, "a dynamic output dim comes from a dynamic operand dim"
            parts.append(run_size)
        return concat_dims(parts, device)

    cache: dict[str, FlatIRTensor] = {}

    def cached_shape_tensor() -> FlatIRTensor:
        if "s" not in cache:
            cache["s"] = shape_tensor()
        return cache["s"]

    # Dims that are dynamic in two operands are taken to be equal at trace time, but either may be 1 at run
    # time: such operands are broadcast to the run-time shape, unless the trace knows the two sizes are equal.
    force = any(len(found) > 1 for found in dynamic)
    side = {0: "left operand", 1: "right operand"} if len(operands) == 2 else {}
    result = []
    for i, o in enumerate(operands):
        which = side.get(i, f"operand {i}")
        reason = (
            f"to broadcast the {which} ({o.name}: shape={list(o.shape)}) of {op_name} to the shape "
            f"{list(out_shape)}, to make it compatible with the other input(s)"
        )
        result.append(broadcast_to(o, out_shape, cached_shape_tensor, reason, force))
    return result


def _broadcast_dim(a: FlatIRTensor, b: FlatIRTensor) -> FlatIRTensor:
    """b where a is 1, else a (1-element int32 tensors)."""
    one = constant([1], dtypes.int32, a.device, (1,))
    a_is_one, out = FlatIRTensor.build((1,), dtypes.bool, a.device), FlatIRTensor.build((1,), dtypes.int32, a.device)
    CompareOp.build([a, one], [a_is_one], direction="EQ")
    SelectOp.build([a_is_one, b, a], [out])
    return out
