"""Small helpers over the MLIR Python bindings (jax.extend.mlir) shared by FlatIR ops."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.dtypes import dtype as DType
from tripy_flatir import dtypes

_local = threading.local()


# An MLIR context keeps every type, attribute and location it ever made (a tensor<1234x3xf32> for each new
# shape) until it is destroyed: each thread's context is replaced after this many entries made while no context
# was active (so nothing being built still uses the old one, which lives on while any object refers to it).
CONTEXT_USES = 256


def context() -> ir.Context:
    """This thread's MLIR context, with the func, StableHLO and CHLO dialects loaded."""
    ctx = getattr(_local, "context", None)
    if ctx is not None:
        _local.uses += 1
        if _local.uses > CONTEXT_USES and not _building():
            ctx = None
    if ctx is None:
        _local.uses = 0
        registry = ir.DialectRegistry()
        _upstream_dialects().register_dialects(registry)
        ctx = ir.Context()
        ctx.append_dialect_registry(registry)
        ctx.load_all_available_dialects()
        stablehlo.register_dialect(ctx)
        from jax.extend.mlir.dialects import chlo

        chlo.register_dialect(ctx)
        _local.context = ctx
    return ctx


def _upstream_dialects() -> Any:
    """jaxlib's registry of the upstream MLIR dialects (func, arith, ...). This is the one place FlatIR reaches
    past ``jax.extend.mlir``, and its module moved: jaxlib 0.6 calls it ``register_jax_dialects``, newer
    jaxlibs fold it into ``_jax_mlir_ext``."""
    try:
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext as upstream  # jaxlib >= 0.7
    except ImportError:
        from jaxlib.mlir._mlir_libs import register_jax_dialects as upstream  # type: ignore[no-redef]  # jaxlib 0.6
    return upstream


def _building() -> bool:
    """Whether an MLIR context is active in this thread (something is being built with it)."""
    try:
        return ir.Context.current is not None
    except ValueError:
        return False


def bytecode(module: Any) -> bytes:
    """The module (an ``ir.Module``) as MLIR bytecode."""
    import io

    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    return buf.getvalue()


def main_function(module: Any) -> Any:
    """The module's ``main`` ``func.func`` op, or None if it has none."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            return op
    return None


def tensor_type(shape: Any, dtype: DType) -> ir.RankedTensorType:
    dims = [ir.ShapedType.get_dynamic_size() if d < 0 else int(d) for d in shape]
    return ir.RankedTensorType.get(dims, dtype.mlir_type())


def dense_attr(value: Any, dtype: DType, shape: Any = None) -> ir.DenseElementsAttr:
    """A dense elements attribute holding `value` (a scalar or array) as `dtype`."""
    array = np.asarray(value, dtype=dtype.numpy_dtype)
    shape = array.shape if shape is None else tuple(shape)
    ttype = tensor_type(shape, dtype)
    if array.size == 1 and array.shape != shape:
        array = np.broadcast_to(array, shape)
    array = np.ascontiguousarray(array)
    if dtype is dtypes.bool:
        packed = np.packbits(array.astype(np.uint8), bitorder="little")
        return ir.DenseElementsAttr.get(packed, type=ttype.element_type, shape=list(shape))
    if dtype in (dtypes.bfloat16, dtypes.float8, dtypes.int4):
        bits = array.view(np.uint16 if array.dtype.itemsize == 2 else np.uint8)
        if dtype is dtypes.int4:
            raise NotImplementedError("int4 constants are not supported")
        return ir.DenseElementsAttr.get(bits, type=ttype.element_type, shape=list(shape))
    return ir.DenseElementsAttr.get(array, type=ttype.element_type, shape=list(shape))


def i64_attr_array(values: Any) -> Any:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])
