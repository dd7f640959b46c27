"""ONNX operators that move data or compute shapes: Shape, Reshape, Transpose, (Un)Squeeze, Concat, Slice, Gather,
Split, Expand, Tile, Pad. Each folds on shape values (:class:`Dims`) and calls tripy's ops on tensors."""

from __future__ import annotations

from typing import Any, List, Optional

import tripy_frontend.ops.arange as _arange
import tripy_frontend.ops.concatenate as _concatenate
import tripy_frontend.ops.expand as _expand
import tripy_frontend.ops.gather as _gather
import tripy_frontend.ops.iota as _iota
import tripy_frontend.ops.pad as _pad
import tripy_frontend.ops.permute as _permute
import tripy_frontend.ops.reshape as _reshape
import tripy_frontend.ops.split as _split
import tripy_frontend.ops.squeeze as _squeeze
import tripy_frontend.ops.sum as _sum
import tripy_frontend.ops.unsqueeze as _unsqueeze
import tripy_frontend.ops.where as _where
from tripy_flatir import dtypes
from tripy_frontend.tensor import Tensor
from tripy_importers.onnx.ops.registry import Dims, axes, dims_of, onnx_op, size, tensor

# ONNX writes an open slice bound as the largest (or smallest) int64.
_OPEN = 2**62


def _shape(x: Any) -> List[Any]:
    if isinstance(x, Dims):
        return [] if x.scalar else [len(x.values)]
    return [size(s) for s in x.shape]


@onnx_op("Shape")
def shape(x: Any, start: int = 0, end: Optional[int] = None) -> Dims:
    return dims_of(_shape(x)[start:end])


@onnx_op("Size")
def size_(x: Any) -> Dims:
    total: Any = 1
    for s in _shape(x):
        total = total * s
    return Dims((total,), True)


@onnx_op("Reshape")
def reshape(x: Any, shape: Dims, allowzero: int = 0) -> Any:
    sizes = list(shape.values)
    if not allowzero:
        old = _shape(x)
        sizes = [old[i] if isinstance(s, int) and s == 0 else s for i, s in enumerate(sizes)]
    if isinstance(x, Dims):
        return x.with_values(x.values, scalar=not sizes)
    return _reshape.reshape(x, sizes)


@onnx_op("Flatten")
def flatten(x: Tensor, axis: int = 1) -> Tensor:
    sizes = _shape(x)
    axis = axis % (len(sizes) or 1) if axis < 0 else axis
    lead: Any = 1
    for s in sizes[:axis]:
        lead = lead * s
    return _reshape.reshape(x, [lead, -1])


@onnx_op("Transpose")
def transpose(x: Tensor, perm: Optional[List[int]] = None) -> Tensor:
    return _permute.permute(x, list(perm) if perm is not None else list(range(x.rank))[::-1])


@onnx_op("Squeeze")
def squeeze(x: Any, dims: Any = None) -> Any:
    if isinstance(x, Dims):
        return x.with_values(x.values, scalar=True)
    sizes = _shape(x)
    chosen = [d % x.rank for d in axes(dims)] or [d for d, s in enumerate(sizes) if isinstance(s, int) and s == 1]
    return _squeeze.squeeze(x, chosen) if chosen else x


@onnx_op("Unsqueeze")
def unsqueeze(x: Any, dims: Dims) -> Any:
    chosen = axes(dims)
    if isinstance(x, Dims) and x.scalar and len(chosen) == 1:
        return x.with_values(x.values)
    x = tensor(x)
    out_rank = x.rank + len(chosen)
    for d in sorted(a % out_rank for a in chosen):
        x = _unsqueeze.unsqueeze(x, d)
    return x


@onnx_op("Concat")
def concat(*inputs: Any, axis: int) -> Any:
    if all(isinstance(v, Dims) for v in inputs):
        return inputs[0].with_values([v for d in inputs for v in d.values])
    tensors = [tensor(v) for v in inputs]
    tensors = [t for t in tensors if not (t.rank == 1 and t.trace_tensor.shape[0] == 0)]
    return tensors[0] if len(tensors) == 1 else _concatenate.concatenate(tensors, axis % tensors[0].rank)


def _bound(value: Any) -> Any:
    return None if isinstance(value, int) and abs(value) >= _OPEN else value


@onnx_op("Slice")
def slice_(x: Any, starts: Dims, ends: Dims, dims: Any = None, steps: Any = None) -> Any:
    chosen = axes(dims) or tuple(range(len(starts.values)))
    step_values = steps.ints() if steps is not None else (1,) * len(chosen)
    if isinstance(x, Dims):
        s = slice(_bound(starts.values[0]), _bound(ends.values[0]), step_values[0])
        return x.with_values(x.values[s])
    index: List[Any] = [slice(None)] * x.rank
    for a, start, end, step in zip(chosen, starts.values, ends.values, step_values):
        start, end, a = _bound(start), _bound(end), a % x.rank
        if (
            x.trace_tensor.shape[a] < 0
            and step > 0
            and not (isinstance(start, (int, type(None))) and isinstance(end, (int, type(None))))
        ):
            x = _take_range(x, a, start, end, step)
        else:
            index[a] = slice(start, end, step)
    return x[tuple(index)] if any(i != slice(None) for i in index) else x


def _take_range(x: Tensor, axis: int, start: Any, end: Any, step: int) -> Tensor:
    """``x[start:end:step]`` along a run-time-sized `axis` with a run-time bound, as a gather of an arange: XLA
    cannot give a slice of a bounded dim with a run-time size a bounded program, but it can such a gather. (A
    run-time bound is a size, so it is taken as non-negative and within the dim.)"""
    extent = x.shape[axis]
    start = 0 if start is None else extent + start if isinstance(start, int) and start < 0 else start
    end = extent if end is None else extent + end if isinstance(end, int) and end < 0 else end
    return _gather.gather(x, axis, _arange.arange(start, end, step, dtypes.int32))


@onnx_op("Gather")
def gather(data: Any, indices: Any, axis: int = 0) -> Any:
    if isinstance(data, Dims) and isinstance(indices, Dims) and indices.static:
        picked = [data.values[i] for i in indices.ints()]
        return data.with_values(picked, indices.scalar)
    data = tensor(data)
    axis = axis % data.rank
    if isinstance(indices, Dims) and indices.scalar and indices.static:
        return data[tuple([slice(None)] * axis + [indices.ints()[0]])]
    if isinstance(indices, Dims) and indices.static:
        extent = data.trace_tensor.shape[axis]
        indices = Dims(tuple(i % extent if i < 0 and extent >= 0 else i for i in indices.ints()), False)
    return _gather.gather(data, axis, tensor(indices))


@onnx_op("GatherElements")
def gather_elements(data: Tensor, indices: Any, axis: int = 0) -> Tensor:
    """Take along `axis`: `indices` compared with every position of `axis` (a one-hot mask over a new last dim),
    the matching values of `data` (its `axis` moved to that last dim) kept and summed."""
    indices = tensor(indices)
    dim = axis % data.rank
    positions = _iota.iota((data.shape[dim],), 0, indices.dtype)
    hits = _unsqueeze.unsqueeze(indices, data.rank) == _reshape.reshape(positions, [1] * data.rank + [-1])
    moved = _permute.permute(data, [d for d in range(data.rank) if d != dim] + [dim])
    return _sum.sum(_where.where(hits, _unsqueeze.unsqueeze(moved, dim), 0), dim=data.rank)


@onnx_op("GatherND")
def gather_nd(data: Tensor, indices: Any, batch_dims: int = 0) -> Tensor:
    """``data[i0, i1, ...]`` for each index tuple in the last dim of `indices`: the tuple is turned into one
    position in `data` with its leading dims merged, and gathered there."""
    if batch_dims:
        raise ValueError("GatherND with batch_dims")
    indices = tensor(indices)
    depth = indices.trace_tensor.shape[-1]
    sizes = list(data.shape)
    flat: Any = None
    for k in range(depth):
        stride: Any = 1
        for s in sizes[k + 1 : depth]:
            stride = stride * s
        idx = indices[tuple([slice(None)] * (indices.rank - 1) + [k])]
        term = idx if isinstance(size(stride), int) and size(stride) == 1 else idx * tensor(dims_of([stride], True))
        flat = term if flat is None else flat + term
    merged = _reshape.reshape(data, [-1] + sizes[depth:])
    return _gather.gather(merged, 0, flat)


@onnx_op("Split")
def split(x: Tensor, sizes: Any = None, axis: int = 0, num_outputs: Optional[int] = None) -> Any:
    axis = axis % x.rank
    if sizes is not None:
        pieces = list(sizes.values)
        return (x,) if len(pieces) == 1 else tuple(_split.split(x, pieces, axis))
    return tuple(_split.split(x, int(num_outputs or 1), axis))


@onnx_op("Expand")
def expand(x: Any, shape: Dims) -> Tensor:
    """ONNX's Expand broadcasts both ways: a 1 in `shape` keeps the input's size."""
    x = tensor(x)
    old = _shape(x)
    wanted = list(shape.values)
    n = max(len(old), len(wanted))
    old = [1] * (n - len(old)) + old
    wanted = [1] * (n - len(wanted)) + wanted
    sizes = []
    for d, w in zip(old, wanted):
        if isinstance(w, int) and w == 1:
            sizes.append(d)
        elif isinstance(d, int) and isinstance(w, int):
            sizes.append(max(d, w))
        else:
            sizes.append(w if isinstance(d, int) and d == 1 else d if not isinstance(w, int) or w < 0 else w)
    return _expand.expand(x, sizes)


@onnx_op("Tile")
def tile(x: Tensor, repeats: Dims) -> Tensor:
    """Each dim interleaved with a new dim of its repeat count, expanded, then merged."""
    counts = list(repeats.values)
    sizes = _shape(x)
    interleaved = _reshape.reshape(x, [s for d in sizes for s in (1, d)])
    expanded = _expand.expand(interleaved, [s for r, d in zip(counts, sizes) for s in (r, d)])
    return _reshape.reshape(expanded, [r * d for r, d in zip(counts, sizes)])


@onnx_op("Pad")
def pad(x: Tensor, pads: Dims, value: Any = None, dims: Any = None, mode: str = "constant") -> Tensor:
    chosen = axes(dims) or tuple(range(x.rank))
    amounts = list(pads.values)
    pairs: List[Any] = [(0, 0)] * x.rank
    for i, a in enumerate(chosen):
        pairs[a % x.rank] = (amounts[i], amounts[i + len(chosen)])
    fill = 0 if value is None else value
    if isinstance(fill, Dims):
        fill = fill.values[0]
    elif isinstance(fill, Tensor):
        fill = fill.tolist()
    return _pad.pad(x, pairs, mode="constant" if mode == "constant" else mode, value=fill)
