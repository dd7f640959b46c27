from typing import Any, List, Optional, Tuple

import numpy as np

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.slice import Bound, DynamicBound, Slice
from tripy_frontend.export import RETURN, dtype_rules
from tripy_frontend.ops.common import ALL_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import DimensionSize, Tensor, static_value
from tripy_frontend.ops.gather import gather

_WHAT = "tripy.Tensor.__getitem__"


@TENSOR_METHOD_REGISTRY("__getitem__")
@dtype_rules({"self": "T1", RETURN: "T1"}, {"T1": ALL_TYPES}, name=_WHAT)
def __getitem__(self: Tensor, index: Any) -> Tensor:
    """Basic indexing with NumPy/Python semantics: ``t[1]``, ``t[-1]``, ``t[1:3]``, ``t[::-2]``,
    ``t[None]`` (a new dim of size 1), ``t[..., 0]``, and any combination.

    Slice bounds may be ints or ``DimensionSize`` values (e.g. ``t[: t.shape[0] - 1]``, also when the
    size is only known at run time: the program computes the bounds); out-of-range slice bounds are
    clamped as in Python. Steps must be ints. A rank-0 integer tensor holding data may also be a slice
    bound, but since the output shape depends on its value it is read when the index is applied, so it
    cannot be computed from the inputs of a function being compiled.

    An int index must be in range (negative ints count from the end). An integer tensor used as an
    index selects like :func:`tripy.gather` along its dim (negative values count from the end; values out
    of range are clamped at run time): a rank-0 one removes the dim, one of rank k replaces it by the k
    dims of the index (``t[tp.Tensor([2, 0])]``), as NumPy does with one index array. Several tensor
    indices of rank above 0 in one index (NumPy broadcasts those together) are not supported.

    .. code-block:: python

        t = tp.reshape(tp.arange(12, dtype=tp.int32), (3, 4))
        assert t[1].tolist() == [4, 5, 6, 7]
        assert t[-1, ::-2].tolist() == [11, 9]
        assert t[:, 1:3].tolist() == [[1, 2], [5, 6], [9, 10]]
        assert t[None, ..., 0].tolist() == [[0, 4, 8]]
        assert t[: t.shape[0] - 1, -1].tolist() == [3, 7]
        assert t[tp.Tensor([2, 0])].tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
        assert t[1:, tp.Tensor([[3], [0]])].tolist() == [[[7], [4]], [[11], [8]]]
    """

    items = _full_index(self, list(index) if isinstance(index, tuple) else [index])
    parts = _Index()
    for item in items:
        parts.add(item)
    out = self
    if parts.squeeze or parts.new_axes or any(spec != (None, None, 1) for spec in parts.specs):
        out = Tensor._from_op(
            Slice,
            [self] + parts.bounds,
            index=tuple(parts.specs),
            squeeze=tuple(parts.squeeze),
            new_axes=tuple(parts.new_axes),
        )
    _check_tensor_indices(self, items, parts.tensor_indices)
    for pos, t in reversed(parts.tensor_indices):
        out = gather(out, pos, t)
    return out


def _full_index(self: Tensor, items: List[Any]) -> List[Any]:
    """The index's items checked, with the ellipsis (or the end) filled by full slices up to the rank."""
    for item in items:
        _check_item(item)
    if sum(item is Ellipsis for item in items) > 1:
        raise_error(f"{_WHAT}: an index can only have a single ellipsis ('...').", _stack.capture())
    consuming = [item for item in items if item is not None and item is not Ellipsis]
    rank = self.rank
    if len(consuming) > rank:
        raise_error(
            f"{_WHAT}: too many indices for a tensor of rank {rank}: got {len(consuming)} ({_index_text(items)}).",
            _stack.capture(),
            [],
            [self.stack_info],
        )
    fill: List[Any] = [slice(None)] * (rank - len(consuming))
    at = next((i for i, item in enumerate(items) if item is Ellipsis), None)
    if at is not None:  # (identity checks: == on a tensor builds a comparison)
        return items[:at] + fill + items[at + 1 :]
    return items + fill


class _Index:
    """The Slice op's attributes for an index, built item by item."""

    def __init__(self) -> None:
        self.specs: List[Tuple[Bound, Bound, int]] = []
        self.squeeze: List[int] = []
        self.new_axes: List[int] = []
        self.bounds: List[Tensor] = []
        self.tensor_indices: List[Tuple[int, Tensor]] = []  # (position in the slice's output, index tensor)
        self.out_pos = 0

    def add(self, item: Any) -> None:
        if item is None:
            self.new_axes.append(self.out_pos)
            self.out_pos += 1
        elif isinstance(item, slice):
            step = 1 if item.step is None else item.step
            if isinstance(step, DimensionSize) and static_value(step) is not None:
                step = static_value(step)
            if isinstance(step, Tensor):
                raise_error(
                    f"{_WHAT}: a slice step must be an int, but got a tensor.",
                    _stack.capture(),
                    ["Steps decide the output shape, so they must be known when the program is built."],
                )
            if step == 0:
                raise_error(f"{_WHAT}: slice step cannot be zero.", _stack.capture())
            self.specs.append((self.bound(item.start), self.bound(item.stop), int(step)))
            self.out_pos += 1
        elif isinstance(item, Tensor) and static_value(item) is None:
            self.tensor_indices.append((self.out_pos, item))
            self.specs.append((None, None, 1))
            self.out_pos += 1
        else:
            i = int(static_value(item) if isinstance(item, DimensionSize) else item)  # type: ignore[arg-type]
            self.squeeze.append(len(self.specs))
            self.specs.append((i, i + 1 if i != -1 else None, 1))

    def bound(self, value: Any) -> Bound:
        if value is None:
            return None
        if isinstance(value, DimensionSize) and static_value(value) is not None:
            return static_value(value)
        if isinstance(value, DimensionSize):
            # A size known at run time: the program computes the bound from the input shapes.
            self.bounds.append(value)
            return DynamicBound(len(self.bounds))  # inputs[0] is the sliced tensor
        if isinstance(value, Tensor) and _depends_on_runtime_inputs(value):
            # A data tensor: the output shape depends on its value, so it is read now (below), if it can be.
            raise_error(
                f"{_WHAT}: a slice bound given as a tensor computed from a compiled function's "
                "inputs makes the output shape depend on data, which the compiler cannot support.",
                _stack.capture(),
                [
                    "Use ints or sizes from `t.shape` (DimensionSize) as slice bounds, or index with a "
                    "rank-0 tensor (t[i]) / tripy.gather, whose output shape does not depend on data."
                ],
                [value.stack_info],
            )
        return int(value)


def _check_tensor_indices(self: Tensor, items: List[Any], tensor_indices: List[Tuple[int, Tensor]]) -> None:
    """Index tensors of rank above 0: one at most, not separated from integer indices by a slice or None."""
    advanced = [i for i, item in enumerate(items) if item is not None and not isinstance(item, slice)]
    if any(t.rank > 0 for _, t in tensor_indices) and advanced[-1] - advanced[0] + 1 != len(advanced):
        raise_error(
            f"{_WHAT}: an index tensor of rank above 0 cannot be combined with integer indices that a "
            "slice or None separates from it (NumPy would move the indexed dims to the front).",
            _stack.capture(),
            ["Index in steps, e.g. t[i][:, index]."],
            [self.stack_info],
        )
    if sum(t.rank > 0 for _, t in tensor_indices) > 1:
        raise_error(
            f"{_WHAT}: only one index tensor of rank above 0 is supported in one index (NumPy would "
            "broadcast several together).",
            _stack.capture(),
            ["Index in steps (t[i][:, j]) or use tripy.gather once per dim."],
            [self.stack_info],
        )


def _depends_on_runtime_inputs(t: Tensor) -> bool:
    """Whether `t` is computed from inputs that have no data yet (a function being compiled)."""
    seen = set()
    stack = [t.trace_tensor.producer]
    while stack:
        op = stack.pop()
        if op is None or id(op) in seen:
            continue
        seen.add(id(op))
        if op.is_input and getattr(op, "data", None) is None:
            return True
        stack.extend(i.producer for i in op.inputs)
    return False


def _check_item(item: Any) -> None:

    if item is None or item is Ellipsis:
        return
    if isinstance(item, slice):
        for name in ("start", "stop", "step"):
            v = getattr(item, name)
            if v is None or isinstance(v, DimensionSize):
                continue
            if isinstance(v, Tensor):
                _check_index_tensor(v, f"slice {name}")
            elif not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise_error(
                    f"{_WHAT}: slice {name} must be an int, a DimensionSize or a rank-0 integer tensor, "
                    f"but got {type(v).__name__}.",
                    _stack.capture(),
                )
        return
    if isinstance(item, DimensionSize):
        return
    if isinstance(item, Tensor):
        if not item.dtype.is_integer:
            raise_error(
                f"{_WHAT}: a tensor used as an index must have an integer dtype, but has {item.dtype}.",
                _stack.capture(),
                ["Convert it with tripy.cast(index, tp.int32)."],
                [item.stack_info],
            )
        return
    if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
        return
    hint = (
        "Use tripy.gather(t, dim, index) to index with a list or tensor of indices."
        if isinstance(item, (list, tuple, np.ndarray))
        else "Index with ints, slices, None, '...', DimensionSizes or rank-0 integer tensors."
    )
    raise_error(f"{_WHAT}: unsupported index of type {type(item).__name__}: {item!r}.", _stack.capture(), [hint])


def _check_index_tensor(t: Tensor, what: str) -> None:
    if not t.dtype.is_integer or t.rank != 0:
        raise_error(
            f"{_WHAT}: a tensor used as {what} must be a rank-0 integer tensor, but got one of shape "
            f"{list(t.trace_tensor.shape)} and dtype {t.dtype}.",
            _stack.capture(),
            ["Use tripy.gather(t, dim, index) to index with a tensor of indices."],
            [t.stack_info],
        )


def _index_text(items: List[Any]) -> str:
    def one(item: Any) -> str:
        if item is Ellipsis:
            return "..."
        if isinstance(item, slice):
            parts = ["" if v is None else _value_text(v) for v in (item.start, item.stop, item.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if item.step is not None else "")
        return _value_text(item)

    return "[" + ", ".join(one(i) for i in items) + "]"


def _value_text(v: Optional[Any]) -> str:
    if isinstance(v, Tensor):
        return "<tensor>"
    return repr(v)
