"""Pass ``channels-last`` (XLA:CPU): a StableHLO rewrite that keeps a convnet's activations ``[N, *spatial, C]``
between its convolutions, so that XLA:CPU, whose convolution kernels read and write channels-last, transposes
the activations once on the way in and once on the way out instead of around every convolution.

tripy's convolutions follow nvtripy's (and PyTorch's) ``[N, C, *spatial]`` layout, and XLA:CPU makes every
``[b, f, 0, 1]`` convolution channels-last with a transpose of its input and one of its output; the
elementwise ops, pools and sums between two convolutions keep it from cancelling them (ResNet-18 at batch 1:
29 transposes in the optimized program). Here each convolution instead

* reads a transposed input as stored, by naming the input's dims in its dimension numbers, and
* produces its result channels-last, followed by one transpose back to the layout the program expects.

Each such transpose then sinks, in one walk in program order, through the ops that do not care about the
layout (elementwise ops, broadcasts of per-channel values, pools, reductions, concatenations, reshapes that
split or merge whole dims, other transposes), to the next convolution, which absorbs it, or to the program's
end. An op sinks a transpose only when all its (non-scalar) operands are the same transpose or broadcasts, so
no op gets more transposes than it had. The values are computed exactly as before (the same ops on the same
elements), only stored in another order.

It applies on XLA:CPU unless ``TRIPY_XLA_CPU_CHANNELS_LAST=0`` (``cpu_plan.keeps_channels_last``).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan
from tripy_backend.op_facts import ELEMENTWISE
from tripy_backend.passes import Job, Pass

Perm = Tuple[int, ...]


def rewrite(module_bytes: bytes, job: Job) -> bytes:
    """The module with its convolutions channels-last and the transposes sunk and cancelled (see the module
    docstring); `module_bytes` itself if it has no convolution."""
    if b"convolution" not in module_bytes:
        return module_bytes
    with context(), ir.Location.unknown():  # (the location types are made at: none; every new op gets its own)
        module = ir.Module.parse(module_bytes)
        for func in module.body.operations:
            for block in func.regions[0].blocks if func.regions else []:
                for op in list(block.operations):
                    _visit(op.operation)
                _erase_dead(block)
        logger.log(
            lambda: "[compile] channels-last: {} convolution(s), {} transpose(s) of their results left".format(
                *_convolutions_and_transposes(module)
            ),
            "compile",
        )
        return bytecode(module)


def on_cpu(job: Job) -> bool:
    return job.platform == "cpu" and cpu_plan.keeps_channels_last()


PASS = Pass("channels-last", rewrite, on_cpu)


def count_transposes(module_bytes: bytes) -> int:
    """The transposes in a StableHLO module."""
    with context():
        return sum(1 for op in _ops(ir.Module.parse(module_bytes)) if op.name == "stablehlo.transpose")


def count_activation_transposes(module_bytes: bytes) -> int:
    """The transposes of values computed from a convolution's result (not those of weights or inputs)."""
    with context():
        return _convolutions_and_transposes(ir.Module.parse(module_bytes))[1]


def _convolutions_and_transposes(module: Any) -> Tuple[int, int]:
    """(the convolutions, the transposes of values computed from a convolution's result) in `module`."""
    after: set = set()  # the ops whose results are computed from a convolution's result
    convolutions = transposes = 0
    for op in _ops(module):
        if op.name == "stablehlo.convolution" or any(_owner(v) in after for v in op.operands):
            after.add(op)
            convolutions += op.name == "stablehlo.convolution"
            transposes += op.name == "stablehlo.transpose"
    return convolutions, transposes


def _ops(module: Any) -> Any:
    for func in module.body.operations:
        for region in func.regions:
            for block in region.blocks:
                for op in block.operations:
                    yield op.operation


def _owner(value: Any) -> Any:
    owner = value.owner
    return owner.operation if isinstance(owner, (ir.Operation, ir.OpView)) else None


def _visit(op: Any) -> None:
    name = op.name
    if not all(_static(v) for v in [*op.operands, *op.results]):
        return
    if name == "stablehlo.convolution":
        _convolution(op)
    elif name == "stablehlo.transpose":
        _compose(op)
    elif name in ELEMENTWISE or name == "stablehlo.concatenate":
        _sink_same_shape(op)
    elif name in ("stablehlo.reduce_window", "stablehlo.reduce") and len(op.operands) == 2:
        _sink_window_or_reduce(op)
    elif name == "stablehlo.reshape":
        _sink_reshape(op)


def _convolution(op: Any) -> None:
    """Absorb a transposed input into the dimension numbers; make the result channels-last."""
    dims = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    ib, if_, isp = dims.input_batch_dimension, dims.input_feature_dimension, list(dims.input_spatial_dimensions)
    source = _transposed(op.operands[0])
    if source is not None:
        value, perm = source
        op.operands[0] = value
        ib, if_, isp = perm[ib], perm[if_], [perm[s] for s in isp]
    ob, of, osp = dims.output_batch_dimension, dims.output_feature_dimension, list(dims.output_spatial_dimensions)
    n = len(osp)
    to_last = [0] * (n + 2)  # logical output dim -> its position channels-last
    to_last[ob], to_last[of] = 0, n + 1
    for k, s in enumerate(osp):
        to_last[s] = 1 + k
    op.attributes["dimension_numbers"] = stablehlo.ConvDimensionNumbers.get(
        input_batch_dimension=ib,
        input_feature_dimension=if_,
        input_spatial_dimensions=isp,
        kernel_output_feature_dimension=dims.kernel_output_feature_dimension,
        kernel_input_feature_dimension=dims.kernel_input_feature_dimension,
        kernel_spatial_dimensions=list(dims.kernel_spatial_dimensions),
        output_batch_dimension=0,
        output_feature_dimension=n + 1,
        output_spatial_dimensions=list(range(1, n + 1)),
    )
    if to_last != list(range(n + 2)):
        _transpose_result(op, tuple(to_last), _permuted_type(op.result.type, tuple(to_last)))


def _compose(op: Any) -> None:
    """``transpose(transpose(x, p1), p2)`` -> ``transpose(x, p1[p2])``, or ``x`` where that is the identity."""
    source = _transposed(op.operands[0])
    if source is None:
        return
    value, inner = source
    perm = tuple(inner[p] for p in _perm(op))
    if perm == tuple(range(len(perm))):
        op.result.replace_all_uses_with(value)
        return
    op.operands[0] = value
    op.attributes["permutation"] = _i64_array(perm)


def _sink_same_shape(op: Any) -> None:
    """An elementwise op or a concatenation of transposes -> the op on the untransposed values, transposed."""
    perm = _common_perm(op.operands)
    if perm is None:
        return
    _untranspose_operands(op, perm)
    if op.name == "stablehlo.concatenate":
        op.attributes["dimension"] = _i64(perm[_int(op.attributes["dimension"])])
    _transpose_result(op, perm, _permuted_type(op.result.type, perm))


def _sink_window_or_reduce(op: Any) -> None:
    """A pool or a reduction of a transpose -> the op on the untransposed value (its window or dims permuted)."""
    source = _transposed(op.operands[0])
    if source is None:
        return
    value, perm = source
    op.operands[0] = value
    if op.name == "stablehlo.reduce":
        reduced = [perm[d] for d in _ints(op.attributes["dimensions"])]
        op.attributes["dimensions"] = _i64_array(sorted(reduced))
        kept = [perm[d] for d in range(len(perm)) if perm[d] not in reduced]  # physical dims, in logical order
        order = tuple(sorted(kept).index(k) for k in kept)
        shape = [ir.RankedTensorType(value.type).shape[k] for k in sorted(kept)]
        new_type = ir.RankedTensorType.get(shape, ir.RankedTensorType(op.result.type).element_type)
        _transpose_result(op, order, new_type)
        return
    for name in ("window_dimensions", "window_strides", "base_dilations", "window_dilations"):
        if name in op.attributes:
            op.attributes[name] = _i64_array(_scatter(_ints(op.attributes[name]), perm))
    if "padding" in op.attributes:
        pads = [tuple(p) for p in _pairs(op.attributes["padding"])]
        op.attributes["padding"] = _pad_attr(_scatter(pads, perm))
    _transpose_result(op, perm, _permuted_type(op.result.type, perm))


def _sink_reshape(op: Any) -> None:
    """A reshape of a transpose that splits or merges whole dims, each group of dims in order in the
    untransposed value -> the reshape of that value, transposed."""
    source = _transposed(op.operands[0])
    if source is None:
        return
    value, perm = source
    groups = _reshape_groups(_shape(op.operands[0]), _shape(op.result))
    if groups is None:
        return
    order = []  # the groups in the order of the untransposed value's dims
    for ins, outs in groups:
        physical = [perm[i] for i in ins]
        if physical != list(range(physical[0], physical[0] + len(physical))):
            return
        order.append((physical[0], outs))
    order.sort()
    out_dims = [d for _, outs in order for d in outs]  # logical output dims, in physical order
    new_perm = tuple(out_dims.index(d) for d in range(len(out_dims)))
    out_shape = _shape(op.result)
    new_type = ir.RankedTensorType.get(
        [out_shape[d] for d in out_dims], ir.RankedTensorType(op.result.type).element_type
    )
    op.operands[0] = value
    _transpose_result(op, new_perm, new_type)


def _reshape_groups(shape_in: Sequence[int], shape_out: Sequence[int]) -> Optional[List[Tuple[List[int], List[int]]]]:
    """Consecutive dims of the input and output with equal products, each group with at least one input dim
    (output dims of size 1 join the group before them); None if a reshape mixes elements across dims."""
    groups: List[Tuple[List[int], List[int]]] = []
    i = j = 0
    while i < len(shape_in):
        ins, outs, a, b = [i], [], shape_in[i], 1  # type: List[int], List[int], int, int
        i += 1
        while j < len(shape_out) and (b < a or (b == a and not outs)):
            b *= shape_out[j]
            outs.append(j)
            j += 1
            while b > a and i < len(shape_in):
                a *= shape_in[i]
                ins.append(i)
                i += 1
        if a != b:
            return None
        groups.append((ins, outs))
    if j < len(shape_out):
        if not groups or any(shape_out[k] != 1 for k in range(j, len(shape_out))):
            return None
        groups[-1][1].extend(range(j, len(shape_out)))
    return groups


def _common_perm(operands: Sequence[Any]) -> Optional[Perm]:
    """The permutation of the transposes among `operands`, if they all have the same one and every other
    operand is a scalar or a broadcast (which can be made in the other layout)."""
    perms = set()
    for v in operands:
        source = _transposed(v)
        if source is not None:
            perms.add(source[1])
        elif _rank(v) and _producer(v) != "stablehlo.broadcast_in_dim":
            return None
    return perms.pop() if len(perms) == 1 else None


def _untranspose_operands(op: Any, perm: Perm) -> None:
    for k, v in enumerate(list(op.operands)):
        source = _transposed(v)
        if source is not None:
            op.operands[k] = source[0]
        elif _rank(v):
            broadcast = v.owner
            dims = [perm[d] for d in _ints(broadcast.attributes["broadcast_dimensions"])]
            with ir.InsertionPoint(op), broadcast.location:
                op.operands[k] = stablehlo.BroadcastInDimOp(
                    _permuted_type(v.type, perm), broadcast.operands[0], _i64_array(dims)
                ).result


def _transpose_result(op: Any, perm: Perm, physical_type: Any) -> None:
    """Give `op` the result type `physical_type` and read its result through ``transpose(result, perm)``."""
    op.result.set_type(physical_type)
    if perm == tuple(range(len(perm))):
        return
    with ir.InsertionPoint(op), op.location:
        transpose = stablehlo.TransposeOp(op.result, _i64_array(perm))
    transpose.operation.move_after(op)
    op.result.replace_all_uses_except(transpose.result, transpose.operation)


def _transposed(value: Any) -> Optional[Tuple[Any, Perm]]:
    """(x, perm) if `value` is ``transpose(x, perm)`` of static shape."""
    if _producer(value) != "stablehlo.transpose" or not _static(value.owner.operands[0]):
        return None
    return value.owner.operands[0], _perm(value.owner)


def _erase_dead(block: Any) -> None:
    """Erase the transposes, broadcasts and reshapes left without uses, last first."""
    for op in reversed(list(block.operations)):
        op = op.operation
        if op.name in ("stablehlo.transpose", "stablehlo.broadcast_in_dim", "stablehlo.reshape") and not any(
            True for _ in op.result.uses
        ):
            op.erase()


def _producer(value: Any) -> Optional[str]:
    owner = value.owner
    return owner.name if isinstance(owner, (ir.Operation, ir.OpView)) else None


def _permuted_type(logical_type: Any, perm: Perm) -> Any:
    """The type of the value that ``transpose(value, perm)`` makes a `logical_type` of."""
    t = ir.RankedTensorType(logical_type)
    return ir.RankedTensorType.get(_scatter(list(t.shape), perm), t.element_type)


def _scatter(values: Sequence[Any], perm: Perm) -> List[Any]:
    """``out[perm[i]] = values[i]``: per-dim values of a transposed value, for the value before the transpose."""
    out: List[Any] = [None] * len(values)
    for i, v in enumerate(values):
        out[perm[i]] = v
    return out


def _perm(transpose: Any) -> Perm:
    return tuple(_ints(transpose.attributes["permutation"]))


def _static(value: Any) -> bool:
    try:
        return ir.RankedTensorType(value.type).has_static_shape
    except ValueError:  # (not a ranked tensor: a token, a tuple)
        return False


def _shape(value: Any) -> List[int]:
    return list(ir.RankedTensorType(value.type).shape)


def _rank(value: Any) -> int:
    return len(_shape(value))


def _ints(attr: Any) -> List[int]:
    try:
        return list(ir.DenseI64ArrayAttr(attr))
    except ValueError:  # (older StableHLO attributes are dense elements)
        return [int(v) for v in ir.DenseIntElementsAttr(attr)]


def _int(attr: Any) -> int:
    return int(ir.IntegerAttr(attr).value)


def _pairs(attr: Any) -> List[List[int]]:
    flat = [int(v) for v in ir.DenseIntElementsAttr(attr)]
    return [flat[k : k + 2] for k in range(0, len(flat), 2)]


def _i64_array(values: Sequence[int]) -> Any:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _i64(value: int) -> Any:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def _pad_attr(pairs: Sequence[Tuple[int, int]]) -> Any:
    data = np.asarray(pairs, dtype=np.int64).reshape(len(pairs), 2)
    return ir.DenseElementsAttr.get(data, type=ir.IntegerType.get_signless(64), shape=[len(pairs), 2])
