"""Pass ``independent-rows``, the first of a bounded program's passes: a program whose rows are independent along
its one size variable needs no markers at all; its bucket's program is the static program for the bucket's bounds.

Most ranges are a batch: each output row is computed from the same input row alone (a convnet's images, an MLP's
rows, a softmax over another dim). Padding the inputs to the bucket's bound then only adds rows whose results
nobody reads (the launcher pads with zeros and returns the real rows), so the program XLA compiles is the one an
exact shape at the bound gives: every optimization and kernel of a static program (``onednn-convolutions``
included), no ``set_dimension_size`` for XLA's dynamic padder, and any size from 0 to the bound runs in it.

The analysis walks the shape-polymorphic module (before ``static-shapes``) and gives each value its *row dim*: the
one dim whose size is the variable's (``?``) and along which its elements depend on the same rows of the inputs
only. Values computed from weights alone have none; a value with any other ``?`` dim, an op that mixes rows (a
reduction, window, concatenation or slice along the row dim, a product contracting it), or a size read from a
shape used as data (``x * x.shape[0]``) makes the program *dependent*: it keeps ``bounded-markers``. A dim built
from sizes (a broadcast's, a reshape's, an iota's) is a row dim only where its size is exactly the variable's.

For an independent program the pass appends the real-size arguments and the output sizes (the calling convention
of ``bounded-markers`` and ``lower-markers``, which then do not run) and sets ``Job.rows``."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func, stablehlo

from tripy_flatir import locations
from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import op_facts
from tripy_backend.passes import Job, Pass
from tripy_backend.passes.markers import main, op_name, producer, set_function_type, source_element


class _Dependent(Exception):
    """The rows are not independent (or this analysis cannot tell)."""


def run(module_bytes: bytes, job: Job) -> bytes:
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = main(module)
        try:
            out_dims, same = independent_rows(fn, job.dynamic_dims)
        except _Dependent as e:
            why = str(e)
            logger.log(
                lambda: f"[passes] {job.name}: independent-rows: the rows depend on each other ({why})", "passes"
            )
            return module_bytes
        job.rows, job.out_dims = True, out_dims
        for broadcast in same:  # (the static program need not copy them; they would also stop ``channels-last``)
            broadcast.result.replace_all_uses_with(broadcast.operands[0])
            broadcast.erase()
        _add_sizes(fn, job.dynamic_dims, out_dims)
        set_function_type(fn)
        return bytecode(module)


def one_variable(job: Job) -> bool:
    return bool(job.dynamic_dims) and len(set(job.variables)) == 1


PASS = Pass("independent-rows", run, one_variable)


def independent_rows(fn: Any, dynamic_dims: Sequence[Tuple[int, int]]) -> Tuple[List[List[int]], List[Any]]:
    """The row dim of each output of `fn` (``[d]``, or ``[]`` for an output without one) where the rows along
    `dynamic_dims` (the inputs' dims of one size variable) are independent, and the broadcasts of a value to its
    own shape (a row's size is the variable's wherever it is); raises `_Dependent` where the rows are not."""
    block = fn.regions[0].blocks[0]
    facts = _Facts()
    for i, arg in enumerate(block.arguments):
        unknown = _unknown_dims(arg)
        if len(unknown) > 1:
            raise _Dependent(f"input {i} has two dims of the variable")
        if unknown and (i, unknown[0]) in dynamic_dims:
            facts.row[arg] = unknown[0]
        elif unknown:
            raise _Dependent(f"input {i} has a dim without a declared range")
    for op in block.operations:
        name = op_name(op)
        try:
            if name == "func.return":
                return _outputs(facts, op), facts.same
            facts.visit(op, name)
        except _Dependent:
            raise _Dependent(f"{name} at {locations.describe(op.location)}") from None
    raise _Dependent("the program has no func.return")


def _outputs(facts: "_Facts", ret: Any) -> List[List[int]]:
    """Each output's row dim (see `independent_rows`). An output's real rows must come first in its buffer (see
    ``launch.Padded``): only dims of size 1 before its row dim."""
    out_dims = [[facts.row[v]] if v in facts.row else [] for v in ret.operands]
    if any(v in facts.sizes for v in ret.operands) or any(
        any(n != 1 for n in _shape(v)[: dims[0]]) for v, dims in zip(ret.operands, out_dims) if dims
    ):
        raise _Dependent()
    return out_dims


class _Facts:
    """What the walk knows of each value so far: its row dim (`row`), whether it is computed from sizes read at run
    time (`sizes`), and whether it is exactly the variable's size (`exact`)."""

    def __init__(self) -> None:
        self.row: Dict[Any, int] = {}
        self.sizes: Set[Any] = set()
        self.exact: Set[Any] = set()
        self.same: List[Any] = []  # broadcasts of a value with a row dim to its own shape

    def visit(self, op: Any, name: str) -> None:
        shape_positions = op_facts.SHAPE_OPERANDS.get(name, ())
        data = [v for k, v in enumerate(op.operands) if k not in shape_positions]
        self._check_regions(op)
        if name == "stablehlo.get_dimension_size":
            if self.row.get(op.operands[0]) == _int(op.attributes["dimension"]):
                self.sizes.add(op.result)
                self.exact.add(op.result)
            return
        if any(v in self.sizes for v in data):
            self._size_arithmetic(op, name, data)
            return
        rows = [self.row[v] for v in data if v in self.row]
        row = self._row(op, name, data) if rows or _has_unknown(op) else None
        for r in op.results:
            unknown = _unknown_dims(r)
            if unknown != ([row] if row is not None else []):
                raise _Dependent()
            if row is not None:
                self.row[r] = row

    def _check_regions(self, op: Any) -> None:
        """A region may read values from outside it (StableHLO's are not isolated): none with a row or a size."""
        for region in op.regions:
            for inner in region.blocks:
                for nested in inner.operations:
                    if any(v in self.row or v in self.sizes for v in nested.operands):
                        raise _Dependent()
                    self._check_regions(nested)

    def _size_arithmetic(self, op: Any, name: str, data: List[Any]) -> None:
        """Sizes may build shapes: arithmetic on them stays static and is never data of a row."""
        if any(_unknown_dims(r) for r in op.results) or any(v in self.row for v in data):
            raise _Dependent()
        self.sizes.update(op.results)
        same = name in ("stablehlo.convert", "stablehlo.reshape") or (
            name in ("stablehlo.maximum", "stablehlo.minimum") and len(data) == 2
        )
        if (same and all(v in self.exact for v in data)) or (
            name == "stablehlo.select" and all(v in self.exact for v in data[1:])
        ):
            self.exact.update(op.results)

    def _row(self, op: Any, name: str, data: List[Any]) -> Optional[int]:
        """The row dim of `op`'s results (all of them: ops of several results here keep the same dims)."""
        if name in op_facts.ELEMENTWISE:
            return self._same_row(data)
        rule = _RULES.get(name)
        if rule is None:
            raise _Dependent()
        return rule(self, op, name, data)

    def _same_row(self, values: List[Any]) -> int:
        """The row dim that `values` with one share (others have none)."""
        dims = {self.row[v] for v in values if v in self.row}
        if len(dims) != 1:
            raise _Dependent()
        return dims.pop()

    def _all_rows(self, values: List[Any]) -> int:
        """The row dim that all `values` share."""
        if any(v not in self.row for v in values):
            raise _Dependent()
        return self._same_row(values)

    def _broadcast(self, op: Any, name: str, data: List[Any]) -> int:
        dims = _ints(op.attributes["broadcast_dimensions"])
        if data[0] in self.row:
            out = dims[self.row[data[0]]]
        else:
            unknown = _unknown_dims(op.result)
            out = unknown[0] if len(unknown) == 1 else -1
        if name == "stablehlo.dynamic_broadcast_in_dim":
            self._exact_element(op.operands[1], out)
            if data[0] in self.row and op.result.type == data[0].type and dims == list(range(len(dims))):
                self.same.append(op)
        return _valid(out)

    def _transpose(self, op: Any, name: str, data: List[Any]) -> int:
        return list(_ints(op.attributes["permutation"])).index(self._source_row(data[0]))

    def _reshape(self, op: Any, name: str, data: List[Any]) -> int:
        out = _reshaped_row(_shape(data[0]), _shape(op.result), self._source_row(data[0]))
        if name == "stablehlo.dynamic_reshape":
            self._exact_element(op.operands[1], out)
        return out

    def _iota(self, op: Any, name: str, data: List[Any]) -> int:
        unknown = _unknown_dims(op.result)
        if len(unknown) != 1:
            raise _Dependent()
        self._exact_element(op.operands[0], unknown[0])
        return unknown[0]

    def _concatenate(self, op: Any, name: str, data: List[Any]) -> int:
        k = self._all_rows(data)
        if _int(op.attributes["dimension"]) == k:
            raise _Dependent()
        return k

    def _pad(self, op: Any, name: str, data: List[Any]) -> int:
        k = self._source_row(data[0])
        if data[1] in self.row or any(
            _ints(op.attributes[a])[k] != 0 for a in ("edge_padding_low", "edge_padding_high", "interior_padding")
        ):
            raise _Dependent()
        return k

    def _reverse(self, op: Any, name: str, data: List[Any]) -> int:
        k = self._source_row(data[0])
        if k in _ints(op.attributes["dimensions"]):
            raise _Dependent()
        return k

    def _slice(self, op: Any, name: str, data: List[Any]) -> int:
        """A slice that keeps every row (``real_dynamic_slice`` from 0 to the size, step 1, along the row dim)."""
        k = self._source_row(data[0])
        start, limit, strides = op.operands[1:4]
        if _constant_element(start, k) != 0 or _constant_element(strides, k) != 1:
            raise _Dependent()
        self._exact_element(limit, k)
        return k

    def _source_row(self, value: Any) -> int:
        if value not in self.row:
            raise _Dependent()
        return self.row[value]

    def _exact_element(self, vector: Any, dim: int) -> None:
        """Element `dim` of a shape vector is exactly the variable's size (raises `_Dependent` where not)."""
        if dim < 0 or not any(value in self.exact for value, _ in _copies(vector, dim)):
            raise _Dependent()

    def _convolution(self, op: Any, name: str, data: List[Any]) -> int:
        dims = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
        lhs, rhs = op.operands[:2]
        if (
            rhs in self.row
            or self.row.get(lhs) != dims.input_batch_dimension
            or ("batch_group_count" in op.attributes and _int(op.attributes["batch_group_count"]) != 1)
        ):
            raise _Dependent()
        return int(dims.output_batch_dimension)

    def _dot(self, op: Any, name: str, data: List[Any]) -> int:
        numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
        batch = [list(numbers.lhs_batching_dimensions), list(numbers.rhs_batching_dimensions)]
        contracting = [list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)]
        rows = [self.row.get(v) for v in op.operands[:2]]
        if rows[0] is not None and rows[1] is not None:  # (a product per row: the row is a batch dim of both)
            if rows[0] not in batch[0] or batch[1][batch[0].index(rows[0])] != rows[1]:
                raise _Dependent()
            return batch[0].index(rows[0])
        side = 0 if rows[0] is not None else 1
        k = rows[side]
        if k is None or k in batch[side] or k in contracting[side]:
            raise _Dependent()
        free = [
            [d for d in range(len(_shape(v))) if d not in batch[s] + contracting[s]]
            for s, v in enumerate(op.operands[:2])
        ]
        return len(batch[0]) + (0 if side == 0 else len(free[0])) + free[side].index(k)

    def _reduce(self, op: Any, name: str, data: List[Any]) -> int:
        n = len(op.operands) // 2
        inputs, inits = op.operands[:n], op.operands[n:]
        k = self._all_rows(inputs)
        reduced = _ints(op.attributes["dimensions"])
        if any(v in self.row for v in inits) or k in reduced:
            raise _Dependent()
        return k - sum(1 for d in reduced if d < k)

    def _window(self, op: Any, name: str, data: List[Any]) -> int:
        n = len(op.operands) // 2
        k = self._all_rows(op.operands[:n])
        if any(v in self.row for v in op.operands[n:]):
            raise _Dependent()
        a = op.attributes
        for attr, identity in (
            ("window_dimensions", 1),
            ("window_strides", 1),
            ("base_dilations", 1),
            ("window_dilations", 1),
        ):
            if attr in a and _ints(a[attr])[k] != identity:
                raise _Dependent()
        if "padding" in a and any(
            int(p) != 0 for p in np.asarray(list(ir.DenseIntElementsAttr(a["padding"]))).reshape(-1, 2)[k]
        ):
            raise _Dependent()
        return k

    def _gather(self, op: Any, name: str, data: List[Any]) -> int:
        """A lookup of rows of a table (an embedding): the table has no row dim, the indices' row becomes a batch
        dim of the result."""
        operand, indices = op.operands[:2]
        if operand in self.row:
            raise _Dependent()
        k = self._source_row(indices)
        numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
        vector_dim = numbers.index_vector_dim
        if k == vector_dim:
            raise _Dependent()
        index_dims = [d for d in range(len(_shape(indices))) if d != vector_dim]
        result_batch = [d for d in range(len(_shape(op.result))) if d not in list(numbers.offset_dims)]
        return result_batch[index_dims.index(k)]


# How each op (other than elementwise ones) places its results' row dim: `_Facts` method(op, name, data operands).
_RULES: Dict[str, Callable[[_Facts, Any, str, List[Any]], int]] = {
    "stablehlo.broadcast_in_dim": _Facts._broadcast,
    "stablehlo.dynamic_broadcast_in_dim": _Facts._broadcast,
    "stablehlo.transpose": _Facts._transpose,
    "stablehlo.reshape": _Facts._reshape,
    "stablehlo.dynamic_reshape": _Facts._reshape,
    "stablehlo.dynamic_iota": _Facts._iota,
    "stablehlo.convolution": _Facts._convolution,
    "stablehlo.dot_general": _Facts._dot,
    "stablehlo.reduce": _Facts._reduce,
    "stablehlo.reduce_window": _Facts._window,
    "stablehlo.concatenate": _Facts._concatenate,
    "stablehlo.pad": _Facts._pad,
    "stablehlo.reverse": _Facts._reverse,
    "stablehlo.real_dynamic_slice": _Facts._slice,
    "stablehlo.gather": _Facts._gather,
    "stablehlo.dynamic_gather": _Facts._gather,
}


def _add_sizes(fn: Any, dynamic_dims: Sequence[Tuple[int, int]], out_dims: List[List[int]]) -> None:
    """Append the real-size arguments (an ``i32`` per dynamic input dim, in order) and return the size of each
    output's row dim (the variable's: the first size argument) as one more output, an ``i32`` vector."""
    block = fn.regions[0].blocks[0]
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    sizes = [block.add_argument(i32, ir.Location.unknown()) for _ in dynamic_dims]
    ret = block.operations[len(block.operations) - 1]
    outputs = list(ret.operands)
    count = sum(len(dims) for dims in out_dims)
    if count:
        with ir.InsertionPoint(ret):
            one = stablehlo.ReshapeOp(ir.RankedTensorType.get([1], i32.element_type), sizes[0]).result
            outputs.append(one if count == 1 else stablehlo.ConcatenateOp([one] * count, 0).result)
            func.ReturnOp(outputs)
        ret.operation.erase()


def _valid(dim: int) -> int:
    if dim < 0:
        raise _Dependent()
    return dim


def _reshaped_row(source: List[int], result: List[int], k: int) -> int:
    """Where a reshape puts the row dim `k` of `source`: the dim of `result` with as many elements before and after
    it (the rows stay whole and in order); raises `_Dependent` where the reshape splits or merges them."""
    before, after = int(np.prod(source[:k])), int(np.prod(source[k + 1 :]))
    for j, size in enumerate(result):
        if size < 0 and int(np.prod(result[:j])) == before and int(np.prod(result[j + 1 :])) == after:
            return j
    raise _Dependent()


def _copies(vector: Any, i: int) -> Iterator[Tuple[Any, int]]:
    """(vector, index) for element `i` of a shape vector and each element it is a copy of, back to where it is
    computed (``markers.source_element``)."""
    step: Optional[Tuple[Any, int]] = (vector, i)
    while step is not None:
        yield step
        step = source_element(*step)


def _constant_element(vector: Any, i: int) -> Optional[int]:
    for value, k in _copies(vector, i):
        owner = producer(value)
        if owner is not None and op_name(owner) == "stablehlo.constant":
            values = ir.DenseIntElementsAttr(owner.attributes["value"])
            return int(values[0] if values.is_splat else values[k])
    return None


def _unknown_dims(value: Any) -> List[int]:
    try:
        return [d for d, n in enumerate(ir.RankedTensorType(value.type).shape) if n < 0]
    except ValueError:  # (not a ranked tensor)
        return []


def _has_unknown(op: Any) -> bool:
    return any(_unknown_dims(r) for r in op.results)


def _shape(value: Any) -> List[int]:
    return list(ir.RankedTensorType(value.type).shape)


def _ints(attr: Any) -> List[int]:
    return [int(v) for v in attr]


def _int(attr: Any) -> int:
    return int(ir.IntegerAttr(attr).value)
