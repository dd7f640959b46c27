"""Slice sizes that are the same for every real size in one bucket.

A slice of a dynamic dim clamps its bounds to the dim's size: ``t[1]`` keeps ``min(2, n) - min(1, n)`` rows,
one for every ``n >= 2`` and none for ``n = 1``; ``t[::2]`` of a bucket of 3 and 4 rows keeps 2. Such a size is
not a number in the trace (``tripy_trace.symbolic`` folds what holds for every size: a reshape's ``-1``), only
within a bucket, and a bounded program that kept it dynamic would slice a padded dim into a padded result (an
empty slice of a padded source crashes XLA on jaxlib 0.6). `constant_of` finds these sizes by evaluating the
program's scalar shape arithmetic for every combination of the inputs' real sizes in the bucket (the bucket's
smallest size up to each bound): a size that is the same for each is static. `is_variable` asks the same
evaluation whether a size is, at every real size, that size (``independent-rows``: a shape built from a read
dim, the ``-1`` of a reshape included).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_backend.passes.markers import DIM_MARKER, op_name, producer

MAX_COMBINATIONS = 4096  # input sizes evaluated at most; beyond that a computed size stays dynamic
MAX_ELEMENTS = 64  # elements of a value followed at most (shape vectors, not data)
# A key of `input_bounds` (see `constant_of`): the real size that every run-time read of a dynamic dim
# (``get_dimension_size``) gives, in a program of one size variable.
ANY_DYNAMIC = (-1, -1)

_BINARY = {
    "stablehlo.multiply": np.multiply,
    "stablehlo.add": np.add,
    "stablehlo.subtract": np.subtract,
    "stablehlo.maximum": np.maximum,
    "stablehlo.minimum": np.minimum,
    "stablehlo.and": np.bitwise_and,
    "stablehlo.or": np.bitwise_or,
}
_COMPARE = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


def constant_of(
    elements: Sequence[Tuple[Any, int]],
    combine: Callable[..., Any],
    input_bounds: Dict[Tuple[int, int], int],
    memos: Dict[Any, Dict[Any, Any]],
    lows: Optional[Dict[Tuple[int, int], int]] = None,
) -> Optional[int]:
    """``combine`` of the `elements` (a rank-1 integer vector and an index each; NumPy arrays of their values
    for every combination of real sizes) if it is the same for all of them, else None. The real sizes: each
    dynamic input dim's (by (argument, dim); a run-time read of one is a ``DIM_MARKER`` custom_call) from its
    smallest in `lows` (1 if not given) to its bound in `input_bounds`. `memos` keeps the values evaluated so
    far, for each set of real sizes (one dict per program and bucket, shared by its calls)."""
    dims = tuple(sorted((k, max(1, (lows or {}).get(k, 1)), b) for k, b in input_bounds.items()))
    grid = _grid(dims)
    if grid is None:
        return None
    env, count = grid
    memo = memos.setdefault(dims, _Memo())  # (values hold for one set of real sizes: a memo per set)
    try:
        values = combine(*(_evaluate(vector, env, memo, count)[i] for vector, i in map(_narrow, elements)))
    except _NOT_FOLLOWED:  # (not followed: the size stays dynamic)
        return None
    return int(values[0]) if np.all(values == values[0]) else None


def is_variable(element: Tuple[Any, int], bound: int, memos: Dict[Any, Dict[Any, Any]]) -> bool:
    """Whether `element` (a rank-1 integer vector and an index) is, for every real size from 1 to `bound`, that
    size, where every dynamic dim the program reads is of that size (see `ANY_DYNAMIC`); `memos` as in
    `constant_of`."""
    dims = ((ANY_DYNAMIC, 1, bound),)
    grid = _grid(dims)
    if grid is None:
        return False
    env, count = grid
    vector, i = _narrow(element)
    try:
        values = _evaluate(vector, env, memos.setdefault(dims, _Memo()), count)[i]
    except _NOT_FOLLOWED:
        return False
    return bool(np.array_equal(values, env[ANY_DYNAMIC]))


def _narrow(element: Tuple[Any, int]) -> Tuple[Any, int]:
    """The vector that holds element `i` of `vector` and its index there, through concatenations and markers: a
    shape built of several sizes is evaluated for the one asked for only (the others may read sizes that are
    not in the grid)."""
    vector, i = element
    while True:
        op = producer(vector)
        name = op_name(op) if op is not None else None
        if name == "stablehlo.optimization_barrier":
            vector = op.operands[list(op.results).index(vector)]
        elif name == "stablehlo.concatenate":
            for operand in op.operands:
                n = ir.RankedTensorType(operand.type).shape[0]
                if n < 0:  # (not a shape vector)
                    return vector, i
                if i < n:
                    vector = operand
                    break
                i -= n
        else:
            return vector, i


@functools.lru_cache(maxsize=64)
def _grid(dims: Tuple[Tuple[Tuple[int, int], int, int], ...]) -> Optional[Tuple[Dict[Tuple[int, int], Any], int]]:
    """Every combination of real sizes of `dims` ((argument, dim), smallest, bound): each dim's column of
    sizes, and how many combinations; None past ``MAX_COMBINATIONS`` or for an empty range. (Cached: a
    bucket asks for the same grid for every computed size.)"""
    sizes = [range(low, bound + 1) for _, low, bound in dims]
    count = math.prod(len(r) for r in sizes)
    if count > MAX_COMBINATIONS or count < 1:
        return None
    grid = np.array(list(itertools.product(*sizes)), np.int64).reshape(count, len(dims))
    return {k: grid[:, n] for n, (k, _, _) in enumerate(dims)}, count


class _Opaque(Exception):
    """A value the evaluation does not follow (an op without a rule here, a division by zero)."""


_OPAQUE = object()  # (in a memo: a value not followed)


class _Memo(dict):  # type: ignore[type-arg]
    """The values evaluated for one set of real sizes, by MLIR value; `constants`: each constant's, by its
    attribute and shape (a model repeats the same few constants thousands of times)."""

    def __init__(self) -> None:
        super().__init__()
        self.constants: Dict[Any, Any] = {}


_NOT_FOLLOWED = (_Opaque, TypeError, ValueError, KeyError, IndexError)  # (evaluating an op: the size stays dynamic)


_LEAVES = ("stablehlo.constant", "stablehlo.custom_call", "stablehlo.get_dimension_size")
_FOLLOWED = (
    set(_LEAVES)
    | set(_BINARY)
    | {
        "stablehlo.divide",
        "stablehlo.remainder",
        "stablehlo.compare",
        "stablehlo.select",
        "stablehlo.convert",
        "stablehlo.reshape",
        "stablehlo.concatenate",
        "stablehlo.slice",
        "stablehlo.optimization_barrier",
    }
)


def _evaluate(root: Any, env: Dict[Tuple[int, int], Any], memo: Dict[Any, Any], count: int) -> Any:
    """`root` (an integer or boolean tensor of rank 0 or 1) for each combination: its shape + (count,).
    Walks the operands with a stack, not recursion: shape arithmetic chains through a whole model. A value not
    followed is kept in `memo` as `_OPAQUE` (and raises `_Opaque`): later walks stop at it."""
    stack = [root]
    found: Dict[Any, _Facts] = {}
    while stack:
        value = stack[-1]
        if value in memo:
            if memo[value] is _OPAQUE:
                raise _Opaque()
            stack.pop()
            continue
        facts = found.get(value)
        if facts is None:
            facts = found[value] = _facts(value, memo)
        missing = [v for v in facts[3] if v not in memo]
        if missing:
            stack.extend(missing)
            continue
        if any(memo[v] is _OPAQUE for v in facts[3]):
            memo[value] = _OPAQUE
            raise _Opaque()
        try:
            memo[value] = _evaluate_op(value, facts, env, memo, count)
        except _NOT_FOLLOWED:
            memo[value] = _OPAQUE
            raise _Opaque() from None
        stack.pop()
    return memo[root]


_Facts = Tuple[Any, str, List[int], List[Any]]  # a value's op, the op's name, the value's shape, the values needed


def _facts(value: Any, memo: Dict[Any, Any]) -> _Facts:
    """(the op that makes `value`, its name, `value`'s shape, the values it is computed from); marks `value`
    `_OPAQUE` in `memo` and raises `_Opaque` if it is not followed."""
    op = producer(value)
    if op is None:
        memo[value] = _OPAQUE
        raise _Opaque()
    name = op_name(op)
    shape = list(ir.RankedTensorType(value.type).shape) if name in _FOLLOWED else []
    if name not in _FOLLOWED or math.prod(shape) > MAX_ELEMENTS:
        memo[value] = _OPAQUE
        raise _Opaque()
    if name in _LEAVES:
        needed: List[Any] = []
    elif name == "stablehlo.optimization_barrier":
        needed = [op.operands[list(op.results).index(value)]]
    else:
        needed = list(op.operands)
    return op, name, shape, needed


def _evaluate_op(value: Any, facts: _Facts, env: Dict[Tuple[int, int], Any], memo: Dict[Any, Any], count: int) -> Any:
    """`value` (see `_facts`) from the values it needs, in `memo`."""
    op, name, shape, needed = facts
    arg = lambda k: memo[needed[k]]  # noqa: E731
    if name == "stablehlo.constant":
        return _constant(op.attributes["value"], shape, memo, count)
    if name == "stablehlo.custom_call" and ir.StringAttr(op.attributes["call_target_name"]).value == DIM_MARKER:
        try:
            argument = ir.BlockArgument(op.operands[0]).arg_number
        except (TypeError, ValueError):
            raise _Opaque() from None
        key = (argument, int(ir.StringAttr(op.attributes["backend_config"]).value))
        if key not in env:
            raise _Opaque()
        return env[key]
    if name == "stablehlo.optimization_barrier":
        return arg(0)
    if name in _BINARY:
        return _BINARY[name](arg(0), arg(1))
    if name in ("stablehlo.divide", "stablehlo.remainder"):
        a, b = arg(0), arg(1)
        if np.any(b == 0):
            raise _Opaque()
        q = np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))  # integer division rounds toward zero
        return q if name == "stablehlo.divide" else a - q * b
    if name == "stablehlo.compare":
        direction = stablehlo.ComparisonDirectionAttr(op.attributes["comparison_direction"]).value
        return _COMPARE[direction](arg(0), arg(1))
    if name == "stablehlo.select":
        return np.where(arg(0), arg(1), arg(2))
    if name in ("stablehlo.convert", "stablehlo.reshape") and math.prod(shape) == math.prod(
        ir.RankedTensorType(needed[0].type).shape
    ):
        return arg(0).reshape(shape + [count]).astype(np.int64, copy=False)
    if name == "stablehlo.concatenate":
        return np.concatenate([memo[v] for v in needed], axis=0)
    if name == "stablehlo.slice" and len(shape) == 1:
        start = int(ir.DenseI64ArrayAttr(op.attributes["start_indices"])[0])
        step = int(ir.DenseI64ArrayAttr(op.attributes["strides"])[0])
        return arg(0)[start : start + shape[0] * step : step]
    if name == "stablehlo.get_dimension_size":
        size = ir.RankedTensorType(op.operands[0].type).shape[int(ir.IntegerAttr(op.attributes["dimension"]).value)]
        if size >= 0:
            return np.full((count,), size, np.int64)
        if ANY_DYNAMIC in env:
            return env[ANY_DYNAMIC]
    raise _Opaque()


def _constant(value: Any, shape: List[int], memo: Dict[Any, Any], count: int) -> Any:
    """A constant's elements (its ``value`` attribute), the same for each combination (shared by the constants
    with this attribute: no evaluation writes into its operands' arrays)."""
    constants = getattr(memo, "constants", {})
    key = (value, tuple(shape))
    array = constants.get(key)
    if array is None:
        attr = ir.DenseIntElementsAttr(value)
        data = [int(attr[0])] * max(1, math.prod(shape)) if attr.is_splat else [int(attr[k]) for k in range(len(attr))]
        array = constants[key] = np.repeat(np.array(data, np.int64).reshape(shape + [1]), count, axis=-1)
    return array
