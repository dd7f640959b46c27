"""Pass ``group-norms`` (XLA:CPU, where tripy's native kernels are installed: ``tripy_backend.kernels``): each
float32 GroupNorm of channels-last activations, with its per-channel scale and shift and the SiLU after it where
there is one, becomes one ``stablehlo.custom_call`` to the kernels' GroupNorm handler (``api_version = 4``), which
reads the activations twice (the moments, then the normalization) on TBB's threads. XLA:CPU runs the same ops as
about ten loops on one core and stores the squared deviations first: in the U-Net of ``benchmarks/peers/convnet.py``
its GroupNorms and SiLUs took ~3-7 ms of a ~25 ms call; the kernel takes ~0.23 ms for a 128x128x32 image.

What it recognizes is what ``tp.GroupNorm`` lowers to once ``channels-last`` has run (activations ``x`` of shape
``[N, *spatial, C]``)::

    g = reshape(x) : [N, *spatial, G, C/G]       mean = sum(g) / k1    (each sum over all dims but N and G)
    d = g - broadcast(mean)                       var = sum(d * d) / k2
    y = reshape(d * broadcast(rsqrt(var + eps))) * broadcast(gamma) + broadcast(beta)   [then y * logistic(y)]

``k1``, ``k2`` and ``eps`` are scalars (constants; an eager program passes them as arguments), which the call takes
as operands: it divides by what the program divides by. From the product by ``rsqrt`` on, each op must be the only
reader of the one before (else the call would not replace them, only add to them). Anything else (``[N, C, ...]``
activations: a GroupNorm that no convolution precedes, another dtype, a bounded program's padded dims) stays XLA's.
It runs before ``sums-as-products``, whose products would replace the sums it looks for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan, kernels, op_facts
from tripy_backend.passes import Job, Pass, markers
from tripy_backend.passes.markers import op_name, producer

# Ops with no effect but their results, erased once nothing reads them
_PURE = op_facts.ELEMENTWISE | {
    "stablehlo.reshape",
    "stablehlo.broadcast_in_dim",
    "stablehlo.reduce",
    "stablehlo.constant",
}


@dataclass
class _Norm:
    x: Any  # the activations, [N, *spatial, C]
    groups: int
    scalars: List[Any]  # what divides the sums (the mean's, the variance's) and eps: float32 scalars or floats
    gamma: Any  # the per-channel scale, broadcast from it (one dim of C elements, the rest 1)
    beta: Any  # the per-channel shift, likewise
    last: Any  # the last op the call replaces (the shift, or the SiLU's product)
    silu: bool


def rewrite(module_bytes: bytes, job: Job) -> bytes:
    """The module with each GroupNorm it recognizes (see the module docstring) as a call to the kernels; unchanged
    (the same bytes) if it has none."""
    if b"rsqrt" not in module_bytes or b"set_dimension_size" in module_bytes:  # (op names are text in bytecode too)
        return module_bytes
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        norms = [n for op in cpu_plan.walk(module.operation) if op.name == "stablehlo.rsqrt" for n in [_match(op)] if n]
        if not norms:
            return module_bytes
        for norm in norms:
            _replace(norm)
        _erase_unread(module)
        logger.log(f"[compile] group-norms: {len(norms)} GroupNorm(s) as calls to tripy-kernels", "compile")
        return bytecode(module)


def _match(rsqrt: Any) -> Optional[_Norm]:
    """The GroupNorm whose reciprocal standard deviation `rsqrt` computes; None if it is not one this pass takes."""
    eps_add = _made_by(rsqrt.operands[0], "stablehlo.add")
    split = _scalar_operand(eps_add) if eps_add is not None else None
    variance = _mean_of(split[0]) if split is not None else None
    squares = _made_by(variance[0].operands[0], "stablehlo.multiply") if variance is not None else None
    if split is None or variance is None or squares is None or squares.operands[0] != squares.operands[1]:
        return None
    deviations = _made_by(squares.operands[0], "stablehlo.subtract")
    if deviations is None:
        return None
    grouped, centre = deviations.operands
    centre_op = _made_by(centre, "stablehlo.broadcast_in_dim")
    mean = _mean_of(centre_op.operands[0]) if centre_op is not None else None
    reshape = _made_by(grouped, "stablehlo.reshape")
    if (
        mean is None
        or reshape is None
        or mean[0].operands[0] != grouped
        or not _grouping(reshape, [mean[0], variance[0]])
    ):
        return None
    x = reshape.operands[0]
    tail = _tail(rsqrt, deviations.result, x.type)
    if tail is None:
        return None
    gamma, beta, last, silu = tail
    scalars = [mean[1], variance[1], split[1]]
    return _Norm(x, ir.RankedTensorType(grouped.type).shape[-2], scalars, gamma, beta, last, silu)


def _grouping(reshape: Any, sums: List[Any]) -> bool:
    """Whether `reshape` splits the last dim of float32 ``[N, *spatial, C]`` into ``[G, C/G]`` and `sums` each add
    up its result over all dims but N and G."""
    x, grouped = ir.RankedTensorType(reshape.operands[0].type), ir.RankedTensorType(reshape.result.type)
    if str(x.element_type) != "f32" or not (x.has_static_shape and grouped.has_static_shape) or x.rank < 3:
        return False
    if list(grouped.shape[:-2]) != list(x.shape[:-1]) or grouped.shape[-2] * grouped.shape[-1] != x.shape[-1]:
        return False
    summed = [d for d in range(grouped.rank) if d not in (0, grouped.rank - 2)]
    return all(
        sorted(ir.DenseI64ArrayAttr(total.attributes["dimensions"])) == summed and cpu_plan.is_sum(total)
        for total in sums
    )


def _mean_of(value: Any) -> Optional[Tuple[Any, Any]]:
    """(the sum, the scalar) where `value` is a sum divided by a scalar (``divide(reshape(reduce),
    broadcast(scalar))``: a mean, where the scalar is how many values it adds; eager programs pass it as an
    argument); None if it is not. The scalar is a float32 scalar value, or a float where it is a constant."""
    divide = _made_by(value, "stablehlo.divide")
    divisor = _scalar(divide.operands[1]) if divide is not None else None
    shaped = _made_by(divide.operands[0], "stablehlo.reshape") if divide is not None else None
    total = _made_by(shaped.operands[0], "stablehlo.reduce") if shaped is not None else None
    if total is None or divisor is None or len(total.operands) != 2:
        return None
    return total, divisor


def _tail(rsqrt: Any, deviations: Any, xtype: Any) -> Optional[Tuple[Any, Any, Any, bool]]:
    """(gamma, beta, the last op, whether it is a SiLU) where the deviations times `rsqrt` (broadcast) go back to the
    activations' shape `xtype`, times a per-channel scale, plus a per-channel shift, each step the only reader of
    the one before; then the SiLU (``y * logistic(y)``) if one follows. None if they do not."""
    bcast = _only_user(rsqrt.result, "stablehlo.broadcast_in_dim")
    scaled = _only_user(bcast.result, "stablehlo.multiply") if bcast is not None else None
    if scaled is None or _other(scaled, bcast.result) != deviations:
        return None
    flat = _only_user(scaled.result, "stablehlo.reshape")
    if flat is None or flat.result.type != xtype:
        return None
    times = _only_user(flat.result, "stablehlo.multiply")
    plus = _only_user(times.result, "stablehlo.add") if times is not None else None
    if plus is None:
        return None
    channel = ir.RankedTensorType(xtype).rank - 1
    gamma = cpu_plan.per_channel(_other(times, flat.result), channel)
    beta = cpu_plan.per_channel(_other(plus, times.result), channel)
    if gamma is None or beta is None:
        return None
    silu = _silu(plus.result)
    return gamma, beta, plus if silu is None else silu, silu is not None


def _silu(y: Any) -> Optional[Any]:
    """The product ``y * logistic(y)`` if that is all that reads `y` (and the logistic only feeds it)."""
    readers = [use.owner for use in y.uses]
    logistic: Any = next((op for op in readers if op_name(op) == "stablehlo.logistic"), None)
    if logistic is None or len(readers) != 2:
        return None
    product = _only_user(logistic.result, "stablehlo.multiply")
    return product if product is not None and _other(product, logistic.result) == y else None


def _replace(norm: _Norm) -> None:
    """Make the GroupNorm's call (just before its last op) and give its readers the call's result instead."""
    with ir.InsertionPoint(norm.last), norm.last.location:
        call = cpu_plan.kernel_call(
            kernels.GROUP_NORM,
            norm.x.type,
            [
                norm.x,
                cpu_plan.channel_vector(norm.gamma),
                cpu_plan.channel_vector(norm.beta),
                *(_scalar_value(s) for s in norm.scalars),
            ],
            {"groups": norm.groups, "silu": int(norm.silu)},
        )
    norm.last.result.replace_all_uses_with(call.results[0])


def _scalar_value(scalar: Any) -> Any:
    """`scalar` (a ``_scalar``) as a value: a constant made at the insertion point where it is a float."""
    if not isinstance(scalar, float):
        return scalar
    f32 = ir.F32Type.get()
    dense = ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], f32), ir.FloatAttr.get(f32, scalar))
    return stablehlo.ConstantOp(dense).result


def _erase_unread(module: Any) -> None:
    """Erase the ops of the module's main function that nothing reads any more and that have no effect but their
    results (the replaced GroupNorms'), last first, so that each op's readers are gone before it is looked at."""
    for op in reversed(list(markers.main(module).regions[0].blocks[0].operations)):
        results = list(op.results)
        if op_name(op) in _PURE and results and not any(list(r.uses) for r in results):
            op.operation.erase()


def _made_by(value: Any, name: str) -> Any:  # (an op, or None)
    """The op that makes `value` if it is a `name`, else None."""
    op = producer(value)
    return op if op is not None and op_name(op) == name else None


def _only_user(value: Any, name: str) -> Any:  # (an op, or None)
    """The one op that reads `value` if it is a `name` (and reads it once), else None."""
    uses = list(value.uses)
    return uses[0].owner if len(uses) == 1 and op_name(uses[0].owner) == name else None


def _other(op: Any, value: Any) -> Optional[Any]:
    """The operand of two-operand `op` that is not `value`; None if `value` is neither."""
    a, b = op.operands
    return b if a == value else a if b == value else None


def _scalar_operand(op: Any) -> Optional[Tuple[Any, Any]]:
    """(the other operand, the scalar) where one operand of `op` is a scalar broadcast (``_scalar``), else None."""
    for value, other in zip(op.operands, reversed(list(op.operands))):
        scalar = _scalar(value)
        if scalar is not None:
            return other, scalar
    return None


def _scalar(value: Any) -> Optional[Any]:
    """The float32 scalar that `value` holds everywhere: the rank-0 value it broadcasts (a constant, or an argument
    in an eager program), or a float where it is a constant of its own shape; None if it is neither."""
    bcast = _made_by(value, "stablehlo.broadcast_in_dim")
    source = ir.RankedTensorType(bcast.operands[0].type) if bcast is not None else None
    if source is not None and source.rank == 0 and str(source.element_type) == "f32":
        return bcast.operands[0]
    return cpu_plan.splat(value)


def on_cpu_with_kernels(job: Job) -> bool:
    return job.platform == "cpu" and kernels.enabled() and kernels.has(kernels.GROUP_NORM)


PASS = Pass("group-norms", rewrite, on_cpu_with_kernels)
