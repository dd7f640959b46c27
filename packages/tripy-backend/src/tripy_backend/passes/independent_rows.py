"""Pass ``independent-rows``, the first of a bounded program's passes: a program whose real rows are independent of
the padding along its one size variable needs no markers at all; its bucket's program is the static program for the
bucket's bounds.

Most ranges are a batch or a sequence. In a batch each output row is computed from the same input row alone (a
convnet's images, an MLP's rows, a softmax over another dim); in a sequence each token also reads the others (the
attention of a transformer), through reductions and products over the tokens. Padding the inputs to the bucket's
bound then only adds rows whose results nobody reads (the launcher pads with zeros and returns the real rows), as
long as each reduction or product over the rows adds nothing for the padded ones: there the pass *masks* the
operand beyond the real size (an argument) with what adds nothing (the reduction's initial value, 0 for both
operands of a product). The program XLA compiles is then the one an exact shape at the bound gives, plus those
masks: every optimization and kernel of a static program (``onednn-convolutions`` included), no
``set_dimension_size`` for XLA's dynamic padder, and any size from 0 to the bound runs in it.

The analysis walks the shape-polymorphic module (before ``static-shapes``) and gives each value its *row dims*: the
dims whose size is the variable's (``?``), along which its real elements (those at indices below the real size)
are the exact-shape program's. Values computed from weights alone have none; a value with a ``?`` dim that is not a
row dim, an op that moves rows (a concatenation, a slice, a window or a reverse along a row dim), a reduction of
several results or one whose initial value adds something over a row dim, or a size read from a shape used as data
(``x * x.shape[0]``) makes the program *dependent*: it keeps ``bounded-markers``. A dim built from sizes (a
broadcast's, a reshape's, an iota's) is a row dim only where its size is exactly the variable's at every size of
the bucket (``constant_sizes.is_variable``: the ``-1`` of a reshape included).

For an independent program the pass masks what the reductions and products over rows read, appends the real-size
arguments and the output sizes (the calling convention of ``bounded-markers`` and ``lower-markers``, which then do
not run) and sets ``Job.rows``."""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import func, stablehlo

from tripy_flatir import locations
from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import op_facts
from tripy_backend.passes import Job, Pass
from tripy_backend.passes.constant_sizes import ANY_DYNAMIC, constant_of, is_variable
from tripy_backend.passes.markers import main, op_name, producer, set_function_type
from tripy_backend.passes.masked_reads import zero_attr

Dims = Tuple[int, ...]  # a value's row dims, in order
Mask = Tuple[Any, int, Dims, Any]  # (an op, which operand, its row dims read across, the fill: a scalar value)


class _Dependent(Exception):
    """The real rows depend on the padding (or this analysis cannot tell that they do not)."""


def run(module_bytes: bytes, job: Job) -> bytes:
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = main(module)
        try:
            out_dims, facts = independent_rows(fn, job.dynamic_dims, _bound(job))
        except _Dependent as e:
            why = str(e)
            logger.log(
                lambda: f"[passes] {job.name}: independent-rows: the rows depend on each other ({why})", "passes"
            )
            return module_bytes
        job.rows, job.out_dims = True, out_dims
        for broadcast in facts.same:  # (the static program need not copy them; they would also stop ``channels-last``)
            broadcast.result.replace_all_uses_with(broadcast.operands[0])
            broadcast.erase()
        size = _add_sizes(fn, job.dynamic_dims, out_dims)
        _add_masks(facts.masks, size)
        set_function_type(fn)
        return bytecode(module)


def one_variable(job: Job) -> bool:
    """A bounded program of one size variable, not yet found independent (``pipeline.bound``'s `rows`)."""
    return bool(job.dynamic_dims) and len(set(job.variables)) == 1 and not job.rows


PASS = Pass("independent-rows", run, one_variable)


def _bound(job: Job) -> int:
    """The variable's bound in this bucket (the largest, should its dims have different ones)."""
    return max((job.shapes[i][d] for i, d in job.dynamic_dims), default=0) if job.shapes else 0


def independent_rows(fn: Any, dynamic_dims: Sequence[Tuple[int, int]], bound: int) -> Tuple[List[List[int]], "_Facts"]:
    """The row dim of each output of `fn` (``[d]``, or ``[]`` for an output without one) where its real rows along
    `dynamic_dims` (the inputs' dims of one size variable, of sizes up to `bound`) are independent of the padding,
    and what the walk found (`_Facts`: the masks to add, the broadcasts of a value to its own shape); raises
    `_Dependent` where they are not."""
    block = fn.regions[0].blocks[0]
    facts = _Facts(bound)
    for i, arg in enumerate(block.arguments):
        unknown = _unknown_dims(arg)
        if any((i, d) not in dynamic_dims for d in unknown):
            raise _Dependent(f"input {i} has a dim without a declared range")
        if unknown:
            facts.rows[arg] = tuple(unknown)
    for op in block.operations:
        name = op_name(op)
        try:
            if name == "func.return":
                return _outputs(facts, op), facts
            facts.visit(op, name)
        except _Dependent:
            raise _Dependent(f"{name} at {locations.describe(op.location)}") from None
    raise _Dependent("the program has no func.return")


def _outputs(facts: "_Facts", ret: Any) -> List[List[int]]:
    """Each output's row dim (see `independent_rows`). An output has one at most, and its real rows must come first
    in its buffer (see ``launch.Padded``): only dims of size 1 before its row dim."""
    out_dims = [list(facts.rows.get(v, ())) for v in ret.operands]
    if any(v in facts.sizes for v in ret.operands) or any(
        len(dims) > 1 or any(n != 1 for n in _shape(v)[: dims[0]]) for v, dims in zip(ret.operands, out_dims) if dims
    ):
        raise _Dependent()
    return out_dims


class _Facts:
    """What the walk knows of each value so far: its row dims (`rows`), whether it is computed from sizes read at
    run time (`sizes`); and what the pass is to change: the operands to mask (`masks`), the broadcasts of a value
    to its own shape (`same`)."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.rows: Dict[Any, Dims] = {}
        self.sizes: Set[Any] = set()
        self.masks: List[Mask] = []
        self.same: List[Any] = []
        self._evaluated: Dict[Any, Dict[Any, Any]] = {}  # (``constant_sizes``' memos)
        self._exact: Dict[Tuple[Any, int], bool] = {}  # (shape vectors are shared: GPT-2 asks ~800 times for ~50)

    def visit(self, op: Any, name: str) -> None:
        shape_positions = op_facts.SHAPE_OPERANDS.get(name, ())
        data = [v for k, v in enumerate(op.operands) if k not in shape_positions]
        self._check_regions(op)
        if name == "stablehlo.get_dimension_size":
            if _int(op.attributes["dimension"]) in self.rows.get(op.operands[0], ()):
                self.sizes.add(op.result)
            return
        if any(v in self.sizes for v in data):
            if any(_unknown_dims(r) for r in op.results) or any(v in self.rows for v in data):
                raise _Dependent()  # (sizes may build shapes: arithmetic on them stays static, never a row's data)
            self.sizes.update(op.results)
            return
        has_rows = any(v in self.rows for v in data)
        dims = self._dims(op, name, data) if has_rows or _has_unknown(op) else ()
        for r in op.results:
            if tuple(_unknown_dims(r)) != dims:
                raise _Dependent()
            if dims:
                self.rows[r] = dims

    def _check_regions(self, op: Any) -> None:
        """A region may read values from outside it (StableHLO's are not isolated): none with a row or a size."""
        for region in op.regions:
            for inner in region.blocks:
                for nested in inner.operations:
                    if any(v in self.rows or v in self.sizes for v in nested.operands):
                        raise _Dependent()
                    self._check_regions(nested)

    def _dims(self, op: Any, name: str, data: List[Any]) -> Dims:
        """The row dims of `op`'s results (all of them: ops of several results here keep the same dims)."""
        if name in op_facts.ELEMENTWISE:
            return self._same_rows(data)
        rule = _RULES.get(name)
        if rule is None:
            raise _Dependent()
        return rule(self, op, name, data)

    def _same_rows(self, values: List[Any]) -> Dims:
        """The row dims that `values` with any share (others have none)."""
        dims = {self.rows[v] for v in values if v in self.rows}
        if len(dims) != 1:
            raise _Dependent()
        return dims.pop()

    def _all_rows(self, values: List[Any]) -> Dims:
        """The row dims that all `values` share."""
        if any(v not in self.rows for v in values):
            raise _Dependent()
        return self._same_rows(values)

    def _source_rows(self, value: Any) -> Dims:
        if value not in self.rows:
            raise _Dependent()
        return self.rows[value]

    def _exact_element(self, vector: Any, dim: int) -> None:
        """Element `dim` of a shape vector is the variable's size at every size (raises `_Dependent` where not)."""
        exact = self._exact.get((vector, dim))
        if exact is None:
            exact = self._exact[(vector, dim)] = is_variable((vector, dim), self.bound, self._evaluated)
        if not exact:
            raise _Dependent()

    def _constant_element(self, vector: Any, dim: int) -> Optional[int]:
        """Element `dim` of an integer vector where it is the same at every size, else None."""
        return constant_of([(vector, dim)], lambda x: x, {ANY_DYNAMIC: self.bound}, self._evaluated)

    def _mask(self, op: Any, operand: int, dims: Sequence[int], fill: Any) -> None:
        """Before `op`, operand `operand` is to hold `fill` (a constant, or a value with no rows and no sizes: a
        reduction's initial value, checked by `_reduce`) beyond the real size along its row dims `dims`."""
        self.masks.append((op, operand, tuple(dims), fill))

    def _broadcast(self, op: Any, name: str, data: List[Any]) -> Dims:
        mapping = _ints(op.attributes["broadcast_dimensions"])
        carried = {mapping[d] for d in self.rows.get(data[0], ())}
        out = tuple(_unknown_dims(op.result))
        for d in out:
            if name == "stablehlo.dynamic_broadcast_in_dim":
                self._exact_element(op.operands[1], d)
            elif d not in carried:
                raise _Dependent()
        if not carried <= set(out):
            raise _Dependent()
        if data[0] in self.rows and op.result.type == data[0].type and mapping == list(range(len(mapping))):
            self.same.append(op)
        return out

    def _transpose(self, op: Any, name: str, data: List[Any]) -> Dims:
        permutation = _ints(op.attributes["permutation"])
        return tuple(sorted(permutation.index(d) for d in self._source_rows(data[0])))

    def _reshape(self, op: Any, name: str, data: List[Any]) -> Dims:
        out = _reshaped_rows(_shape(data[0]), _shape(op.result), self._source_rows(data[0]))
        if name == "stablehlo.dynamic_reshape":
            for d in out:
                self._exact_element(op.operands[1], d)
        return out

    def _iota(self, op: Any, name: str, data: List[Any]) -> Dims:
        out = tuple(_unknown_dims(op.result))
        for d in out:
            self._exact_element(op.operands[0], d)
        return out

    def _concatenate(self, op: Any, name: str, data: List[Any]) -> Dims:
        dims = self._all_rows(data)
        if _int(op.attributes["dimension"]) in dims:
            raise _Dependent()
        return dims

    def _pad(self, op: Any, name: str, data: List[Any]) -> Dims:
        dims = self._source_rows(data[0])
        if data[1] in self.rows or any(
            _ints(op.attributes[a])[k] != 0
            for a in ("edge_padding_low", "edge_padding_high", "interior_padding")
            for k in dims
        ):
            raise _Dependent()
        return dims

    def _reverse(self, op: Any, name: str, data: List[Any]) -> Dims:
        dims = self._source_rows(data[0])
        if set(dims) & set(_ints(op.attributes["dimensions"])):
            raise _Dependent()
        return dims

    def _slice(self, op: Any, name: str, data: List[Any]) -> Dims:
        """A slice that keeps every row (``real_dynamic_slice`` from 0 to the size, step 1, along each row dim), or
        takes as many rows of a weight (``wpe[:n]``)."""
        dims = tuple(_unknown_dims(op.result))
        if not set(self.rows.get(data[0], ())) <= set(dims):
            raise _Dependent()
        start, limit, strides = op.operands[1:4]
        for k in dims:
            if self._constant_element(start, k) != 0 or self._constant_element(strides, k) != 1:
                raise _Dependent()
            self._exact_element(limit, k)
        return dims

    def _convolution(self, op: Any, name: str, data: List[Any]) -> Dims:
        numbers = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
        lhs, rhs = op.operands[:2]
        if (
            rhs in self.rows
            or self.rows.get(lhs) != (numbers.input_batch_dimension,)
            or ("batch_group_count" in op.attributes and _int(op.attributes["batch_group_count"]) != 1)
        ):
            raise _Dependent()
        return (int(numbers.output_batch_dimension),)

    def _dot(self, op: Any, name: str, data: List[Any]) -> Dims:
        """A product: a row dim that is a batch dim of both operands stays one, a free one of either becomes the
        result's, and one contracted on both is masked with 0 on both (a padded row adds nothing)."""
        numbers = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
        batch = [list(numbers.lhs_batching_dimensions), list(numbers.rhs_batching_dimensions)]
        contracting = [list(numbers.lhs_contracting_dimensions), list(numbers.rhs_contracting_dimensions)]
        rows = [set(self.rows.get(v, ())) for v in op.operands[:2]]
        for paired in (batch, contracting):
            if any((a in rows[0]) != (b in rows[1]) for a, b in zip(*paired)):
                raise _Dependent()  # (a row dim paired with a static one)
        free = [
            [d for d in range(len(_shape(v))) if d not in batch[s] + contracting[s]]
            for s, v in enumerate(op.operands[:2])
        ]
        out = [k for k, d in enumerate(batch[0]) if d in rows[0]]
        out += [len(batch[0]) + k for k, d in enumerate(free[0]) if d in rows[0]]
        out += [len(batch[0]) + len(free[0]) + k for k, d in enumerate(free[1]) if d in rows[1]]
        for side in (0, 1):
            across = [d for d in contracting[side] if d in rows[side]]
            if across:
                zero = ir.DenseElementsAttr.get_splat(
                    _scalar(op.operands[side]), zero_attr(_element(op.operands[side]))
                )
                self._mask(op, side, across, zero)
        return tuple(out)

    def _reduce(self, op: Any, name: str, data: List[Any]) -> Dims:
        """A reduction: over other dims it keeps the row dims; over a row dim its operand is masked with its
        initial value, where that adds nothing to what it reduces (one operand; a sum's 0, a product's 1, any
        maximum's or minimum's)."""
        n = len(op.operands) // 2
        inputs, inits = op.operands[:n], op.operands[n:]
        dims = self._all_rows(inputs)
        reduced = _ints(op.attributes["dimensions"])
        if any(v in self.rows or v in self.sizes for v in inits):
            raise _Dependent()
        across = [d for d in dims if d in reduced]
        if across:
            if n != 1 or not _adds_nothing(op, inits[0]):
                raise _Dependent()
            self._mask(op, 0, across, inits[0])
        return tuple(d - sum(1 for r in reduced if r < d) for d in dims if d not in reduced)

    def _window(self, op: Any, name: str, data: List[Any]) -> Dims:
        n = len(op.operands) // 2
        dims = self._all_rows(op.operands[:n])
        if any(v in self.rows for v in op.operands[n:]):
            raise _Dependent()
        a = op.attributes
        for attr in ("window_dimensions", "window_strides", "base_dilations", "window_dilations"):
            if attr in a and any(_ints(a[attr])[k] != 1 for k in dims):
                raise _Dependent()
        if "padding" in a:
            padding = np.asarray(list(ir.DenseIntElementsAttr(a["padding"]))).reshape(-1, 2)
            if any(int(p) != 0 for k in dims for p in padding[k]):
                raise _Dependent()
        return dims

    def _gather(self, op: Any, name: str, data: List[Any]) -> Dims:
        """A lookup of rows of a table (an embedding): the table has no row dim, the indices' row dims become batch
        dims of the result."""
        operand, indices = op.operands[:2]
        if operand in self.rows:
            raise _Dependent()
        dims = self._source_rows(indices)
        numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
        vector_dim = numbers.index_vector_dim
        if vector_dim in dims:
            raise _Dependent()
        index_dims = [d for d in range(len(_shape(indices))) if d != vector_dim]
        result_batch = [d for d in range(len(_shape(op.result))) if d not in list(numbers.offset_dims)]
        return tuple(sorted(result_batch[index_dims.index(k)] for k in dims))


# How each op (other than elementwise ones) places its results' row dims: `_Facts` method(op, name, data operands).
_RULES: Dict[str, Callable[[_Facts, Any, str, List[Any]], Dims]] = {
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

# The reductions whose operand can be filled with their initial value and give the same result: the op of the body,
# and the initial value it needs (None: any, as the result already holds it).
_IDENTITIES: Dict[str, Optional[float]] = {
    "stablehlo.add": 0.0,
    "stablehlo.multiply": 1.0,
    "stablehlo.maximum": None,
    "stablehlo.minimum": None,
    "stablehlo.and": None,
    "stablehlo.or": None,
}


def _adds_nothing(op: Any, init: Any) -> bool:
    """Whether elements equal to `init` add nothing to what `op` (a reduction of one operand) gives: its body is one
    op of `_IDENTITIES` on its two arguments, and its initial value is that op's identity where it needs one."""
    body = op.regions[0].blocks[0]
    inner = list(body.operations)
    if len(inner) != 2 or op_name(inner[0]) not in _IDENTITIES or op_name(inner[1]) != "stablehlo.return":
        return False
    if list(inner[0].operands) != list(body.arguments) or list(inner[1].operands) != [inner[0].result]:
        return False
    identity = _IDENTITIES[op_name(inner[0])]
    if identity is None:
        return True
    owner = producer(init)
    if owner is None or op_name(owner) != "stablehlo.constant":
        return False
    value = owner.attributes["value"]
    for kind in (ir.DenseFPElementsAttr, ir.DenseIntElementsAttr):
        try:
            return bool(kind(value)[0] == identity)
        except ValueError:
            continue
    return False


def _add_sizes(fn: Any, dynamic_dims: Sequence[Tuple[int, int]], out_dims: List[List[int]]) -> Any:
    """Append the real-size arguments (an ``i32`` per dynamic input dim, in order) and return the size of each
    output's row dim (the variable's: the first size argument) as one more output, an ``i32`` vector. Returns
    that argument."""
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
    return sizes[0]


def _add_masks(masks: List[Mask], size: Any) -> None:
    """Each of `masks`: before its op, its operand with the fill beyond `size` (the real size) along its dims.
    Built from the operand's own (shape-polymorphic) shape: ``static-shapes`` makes it static."""
    made: Dict[Tuple[Any, Dims, Any], Any] = {}
    for op, k, dims, fill in masks:
        operand = op.operands[k]
        key = (operand, dims, fill if isinstance(fill, ir.Value) else str(fill))
        if key not in made:
            with ir.InsertionPoint(op), op.location:
                made[key] = _masked(operand, dims, fill, size)
        op.operands[k] = made[key]


def _masked(value: Any, dims: Dims, fill: Any, size: Any) -> Any:
    """`value` where each of `dims` is below `size`, `fill` (a scalar value or attribute) elsewhere."""
    t = ir.RankedTensorType(value.type)
    i32 = ir.IntegerType.get_signless(32)
    parts = []
    for d, n in enumerate(t.shape):
        if n < 0:
            read = stablehlo.GetDimensionSizeOp(value, d).result
            parts.append(stablehlo.ReshapeOp(ir.RankedTensorType.get([1], i32), read).result)
        else:
            parts.append(stablehlo.ConstantOp(ir.DenseElementsAttr.get(np.array([n], np.int32))).result)
    shape = parts[0] if len(parts) == 1 else stablehlo.ConcatenateOp(parts, 0).result
    index = ir.RankedTensorType.get(list(t.shape), i32)
    limit = stablehlo.DynamicBroadcastInDimOp(index, size, shape, ir.DenseI64ArrayAttr.get([])).result
    keep = None
    for d in dims:
        below = stablehlo.CompareOp(
            stablehlo.DynamicIotaOp(index, shape, d).result, limit, stablehlo.ComparisonDirectionAttr.get("LT")
        ).result
        keep = below if keep is None else stablehlo.AndOp(keep, below).result
    if not isinstance(fill, ir.Value):
        fill = stablehlo.ConstantOp(fill).result
    filler = stablehlo.DynamicBroadcastInDimOp(t, fill, shape, ir.DenseI64ArrayAttr.get([])).result
    return stablehlo.SelectOp(keep, value, filler).result


def _reshaped_rows(source: List[int], result: List[int], dims: Dims) -> Dims:
    """Where a reshape puts the row dims `dims` of `source` (its only ``?`` dims): the ``?`` dims of `result`, where
    as many elements lie between each and the next (the rows stay whole and in order); raises `_Dependent` where
    the reshape splits or merges them."""
    out = tuple(d for d, n in enumerate(result) if n < 0)
    if len(out) != len(dims):
        raise _Dependent()
    bounds_in, bounds_out = [-1, *dims, len(source)], [-1, *out, len(result)]
    for k in range(len(dims) + 1):
        between = source[bounds_in[k] + 1 : bounds_in[k + 1]]
        if math.prod(between) != math.prod(result[bounds_out[k] + 1 : bounds_out[k + 1]]):
            raise _Dependent()
    return out


def _scalar(value: Any) -> Any:
    return ir.RankedTensorType.get([], _element(value))


def _element(value: Any) -> Any:
    return ir.RankedTensorType(value.type).element_type


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
