"""ATen operators that move data without computing: views, permutations, slices, concatenation, indexing, and the
arithmetic of sizes (``sym_size`` and Python's operators on it)."""

from __future__ import annotations

import operator
from typing import Any, List, Optional, Sequence

import tripy_frontend.ops.arange as _arange
import tripy_frontend.ops.cast as _cast
import tripy_frontend.ops.concatenate as _concatenate
import tripy_frontend.ops.expand as _expand
import tripy_frontend.ops.flip as _flip
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
from tripy_importers.torch.ops.registry import aten

# torch.export writes an open slice end as the largest int64.
_OPEN_END = 2**62


@aten("view.default", "reshape.default", "_unsafe_view.default", "view_copy.default")
def view(a: Tensor, shape: Sequence[Any]) -> Tensor:
    return _reshape.reshape(a, list(shape))


@aten("permute.default", "permute_copy.default")
def permute(a: Tensor, dims: Sequence[int]) -> Tensor:
    return _permute.permute(a, [d % a.rank for d in dims])


@aten("transpose.int")
def transpose(a: Tensor, dim0: int, dim1: int) -> Tensor:
    perm = list(range(a.rank))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return _permute.permute(a, perm)


@aten("t.default")
def t(a: Tensor) -> Tensor:
    return a if a.rank < 2 else _permute.permute(a, [1, 0])


@aten("expand.default", "expand_copy.default")
def expand(a: Tensor, sizes: Sequence[Any], implicit: bool = False) -> Tensor:
    return _expand.expand(a, list(sizes))


@aten("unsqueeze.default", "unsqueeze_copy.default")
def unsqueeze(a: Tensor, dim: int) -> Tensor:
    return _unsqueeze.unsqueeze(a, dim % (a.rank + 1))


@aten("squeeze.dims", "squeeze.dim", "squeeze.default", "squeeze_copy.dims")
def squeeze(a: Tensor, dims: Any = None) -> Tensor:
    """As PyTorch's: only dims of size 1 go (others named in `dims` stay)."""
    if dims is None:
        dims = range(a.rank)
    elif isinstance(dims, int):
        dims = [dims]
    ones = [d % a.rank for d in dims if a.trace_tensor.shape[d % a.rank] == 1]
    return _squeeze.squeeze(a, ones) if ones else a


@aten("cat.default", "concat.default")
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = [t for t in tensors if not (t.rank == 1 and t.trace_tensor.shape[0] == 0)]  # legacy empty inputs
    if len(tensors) == 1:
        return tensors[0]
    return _concatenate.concatenate(list(tensors), dim % tensors[0].rank)


def _bound(value: Any) -> Any:
    return None if value is None or (isinstance(value, int) and value >= _OPEN_END) else value


@aten("slice.Tensor", "slice_copy.Tensor")
def slice_(a: Tensor, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Tensor:
    dim, start, end = dim % a.rank, _bound(start), _bound(end)
    if start in (None, 0) and end is None and step == 1:
        return a
    if a.trace_tensor.shape[dim] < 0 and step == 1 and start not in (None, 0):
        return _offset_slice(a, dim, start, end)
    index: List[Any] = [slice(None)] * dim + [slice(start, end, step)]
    return a[tuple(index)]


def _offset_slice(a: Tensor, dim: int, start: Any, end: Any) -> Tensor:
    """``a[..., start:end]`` on a dim whose size is known only at run time, as a gather of the positions: XLA cannot
    bound a slice that starts inside such a dim (its dynamic padder: "Dynamic dimension propagation on
    DynamicSlice where a partial dimension is selected"), so tp.compile would fall back to a program per shape."""
    size = a.shape[dim]
    start = size + start if isinstance(start, int) and start < 0 else start
    end = size if end is None else (size + end if isinstance(end, int) and end < 0 else end)
    return _gather.gather(a, dim, _arange.arange(start, end, 1, dtypes.int32))


@aten("select.int", "select_copy.int")
def select(a: Tensor, dim: int, index: Any) -> Tensor:
    return a[tuple([slice(None)] * (dim % a.rank) + [index])]


@aten("split_with_sizes.default", "split_with_sizes_copy.default")
def split_with_sizes(a: Tensor, sizes: Sequence[Any], dim: int = 0) -> Any:
    if len(sizes) == 1:
        return (a,)
    return tuple(_split.split(a, list(sizes), dim % a.rank))


@aten("split.Tensor")
def split(a: Tensor, size: int, dim: int = 0) -> Any:
    total = a.trace_tensor.shape[dim % a.rank]
    sizes = [min(size, total - start) for start in range(0, total, size)]
    return split_with_sizes(a, sizes, dim)


@aten("flip.default")
def flip(a: Tensor, dims: Sequence[int]) -> Tensor:
    return _flip.flip(a, [d % a.rank for d in dims])


@aten("constant_pad_nd.default")
def constant_pad_nd(a: Tensor, pad: Sequence[Any], value: Any = 0) -> Tensor:
    pairs: List[Any] = [(0, 0)] * a.rank
    for i in range(len(pad) // 2):
        pairs[a.rank - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return _pad.pad(a, pairs, value=value)


@aten("repeat.default")
def repeat(a: Tensor, repeats: Sequence[Any]) -> Tensor:
    """Tiles `a`: dims are interleaved with new dims of the repeat counts, expanded, then merged."""
    lead = len(repeats) - a.rank
    a = _reshape.reshape(a, [1] * lead + list(a.shape)) if lead else a
    shape = list(a.shape)
    interleaved = _reshape.reshape(a, [s for d in shape for s in (1, d)])
    expanded = _expand.expand(interleaved, [s for r, d in zip(repeats, shape) for s in (r, d)])
    return _reshape.reshape(expanded, [r * d for r, d in zip(repeats, shape)])


@aten("embedding.default")
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, *args: Any) -> Tensor:
    return _gather.gather(weight, 0, indices)


@aten("index_select.default")
def index_select(a: Tensor, dim: int, index: Tensor) -> Tensor:
    return _gather.gather(a, dim % a.rank, index)


@aten("index.Tensor")
def index(a: Tensor, indices: Sequence[Optional[Tensor]]) -> Tensor:
    """``a[..., i0, i1, ...]`` with index tensors (broadcast together) at some dims, as NumPy's advanced indexing:
    the indexed dims are moved together, merged into one, and gathered at the merged position."""
    given = [d for d, i in enumerate(indices) if i is not None]
    tensors = [i for i in indices if i is not None]
    if len(given) == 1:
        return _gather.gather(a, given[0], tensors[0])
    adjacent = given == list(range(given[0], given[0] + len(given)))
    first = given[0] if adjacent else 0
    if not adjacent:  # (NumPy puts the broadcast dims first)
        a = _permute.permute(a, given + [d for d in range(a.rank) if d not in given])
    sizes = [a.shape[first + k] for k in range(len(given))]
    flat: Any = None
    for k, idx in enumerate(tensors):
        stride: Any = 1
        for size in sizes[k + 1 :]:
            stride = stride * size
        term = idx if isinstance(stride, int) and stride == 1 else idx * _cast.cast(stride, idx.dtype)
        flat = term if flat is None else flat + term
    merged = _reshape.reshape(a, list(a.shape[:first]) + [-1] + list(a.shape[first + len(given) :]))
    return _gather.gather(merged, first, flat)


@aten("gather.default")
def gather(a: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Tensor:
    """``torch.gather`` (take along `dim`): `index` compared with every position of `dim` (a one-hot mask over a new
    last dim), the matching values of `a` (its `dim` moved to that last dim) kept and summed."""
    dim = dim % a.rank
    positions = _iota.iota((a.shape[dim],), 0, index.dtype)
    hits = _unsqueeze.unsqueeze(index, a.rank) == _reshape.reshape(positions, [1] * a.rank + [-1])
    moved = _permute.permute(a, [d for d in range(a.rank) if d != dim] + [dim])
    values = _unsqueeze.unsqueeze(moved, dim)
    return _sum.sum(_where.where(hits, values, 0), dim=a.rank)


@aten("sym_size.int")
def sym_size(a: Tensor, dim: int) -> Any:
    return a.shape[dim]


@aten("sym_numel.default")
def sym_numel(a: Tensor) -> Any:
    total: Any = 1
    for size in a.shape:
        total = total * size
    return total


@aten("operator.getitem")
def getitem(values: Any, i: int) -> Any:
    return values[i]


for _name in ("add", "sub", "mul", "floordiv", "mod", "neg", "eq", "ne", "lt", "le", "gt", "ge", "truediv"):
    aten(f"operator.{_name}")(getattr(operator, _name))
