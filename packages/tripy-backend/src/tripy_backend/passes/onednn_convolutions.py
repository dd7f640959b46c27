"""Pass ``onednn-convolutions`` (XLA:CPU, where tripy's native kernels are installed: ``tripy_backend.kernels``):
each convolution that oneDNN can run becomes a ``stablehlo.custom_call`` to the kernels' typed FFI handler
(``api_version = 4``), which runs it with oneDNN on its own threads; XLA:CPU runs a batch-1 convolution on one
core. The rest stay XLA's.

It serves static programs' float32 convolutions with 1 to 3 spatial dims, any strides, non-negative padding,
kernel dilation and feature groups (grouped, depthwise) for which oneDNN has an optimized kernel (its reference
kernels are many times slower than XLA's: ``kernels.slow``), and transposed convolutions as ``tp.ConvTranspose`` lowers
them (input dilation, the kernel reversed: oneDNN's deconvolution); not batch groups. The operands are passed as the program stores them: the custom call's attributes name
their dims (the convolution's dimension numbers), so the pass adds no transpose. It runs after ``channels-last``,
which leaves the activations channels-last between convolutions: the layout oneDNN's kernels read fastest.
A batch of `XLA_IMAGES_PER_CORE` images per core or more stays XLA's, whose one image per core then keeps every core
busy.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan, kernels
from tripy_backend.passes import Job, Pass


# Images per core from which a convolution stays XLA's (ResNet-18, 2-core VM, 0.1 s between calls: batch 8 155-166
# ms with XLA's convolutions against 173-184 with oneDNN's; batch 4 87.5 against 84; batch 2 59 against 46).
XLA_IMAGES_PER_CORE = 4


def cores() -> int:
    """The cores this process may run on (XLA:CPU's threads, and oneDNN's)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def rewrite(module_bytes: bytes, job: Job) -> bytes:
    """The module with each convolution the kernels serve as a custom call to them; `module_bytes` itself if it
    has none."""
    if b"convolution" not in module_bytes:  # (op names are text in bytecode too)
        return module_bytes
    if b"set_dimension_size" in module_bytes:  # (a bounded program: ``lower_markers``)
        # XLA:CPU refuses a custom call on a padded dim ("not supported to have a dynamic dimension"): the range
        # would fall back to a static program per shape (32 compiles for a batch of 1..32) after a failed compile.
        logger.log("[compile] onednn-convolutions: a bounded program's convolutions stay XLA's", "compile")
        return module_bytes
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        served, batched = 0, 0
        convolutions = [op for op in cpu_plan.walk(module.operation) if op.name == "stablehlo.convolution"]
        for op in convolutions:
            attributes = _attributes(op)
            if attributes is None:
                continue
            shapes = _shapes(op)
            if shapes[0][attributes["lhs"][0]] >= XLA_IMAGES_PER_CORE * cores():
                batched += 1
                continue
            if kernels.slow(*shapes, attributes):
                continue
            with ir.InsertionPoint(op), op.location:
                call = ir.Operation.create(
                    "stablehlo.custom_call",
                    results=[op.result.type],
                    operands=list(op.operands),
                    attributes={
                        "call_target_name": ir.StringAttr.get(kernels.CONVOLUTION),
                        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
                        "backend_config": ir.DictAttr.get(
                            {k: _array(v) if isinstance(v, list) else _i64(v) for k, v in attributes.items()}
                        ),
                    },
                )
            op.result.replace_all_uses_with(call.result)
            op.erase()
            served += 1
        logger.log(
            lambda: (
                f"[compile] onednn-convolutions: {served} of {len(convolutions)} to oneDNN"
                + (
                    f" ({batched} of a batch of {XLA_IMAGES_PER_CORE} images per core or more stay XLA's)"
                    if batched
                    else ""
                )
            ),
            "compile",
        )
        return bytecode(module) if served else module_bytes


def _shapes(op: Any) -> Tuple[List[int], List[int], List[int]]:
    """The convolution's input, kernel and result shapes."""
    x, w, y = (list(ir.RankedTensorType(v.type).shape) for v in [*op.operands, op.result])
    return x, w, y


def _attributes(op: Any) -> Optional[Dict[str, Any]]:
    """The custom call's attributes for the convolution `op` (see ``tripy_kernels``' handler: lists of ints and
    ints, by name); None where the kernels do not serve it."""
    types = [ir.RankedTensorType(v.type) for v in [*op.operands, op.result]]
    if not all(t.has_static_shape and str(t.element_type) == "f32" for t in types):
        return None
    a = op.attributes
    spatial = len(types[0].shape) - 2
    if not 1 <= spatial <= 3 or _int(a, "batch_group_count") != 1:
        return None
    padding = np.asarray(a["padding"], dtype=np.int64).reshape(spatial, 2) if "padding" in a else np.zeros((spatial, 2))
    dims = stablehlo.ConvDimensionNumbers(a["dimension_numbers"])
    window = _window(a, spatial, padding, [types[1].shape[d] for d in dims.kernel_spatial_dimensions])
    if window is None:
        return None
    strides, pad_lo, pad_hi, dilation, transposed = window
    return {
        "lhs": [dims.input_batch_dimension, dims.input_feature_dimension, *dims.input_spatial_dimensions],
        "rhs": [
            dims.kernel_output_feature_dimension,
            dims.kernel_input_feature_dimension,
            *dims.kernel_spatial_dimensions,
        ],
        "out": [dims.output_batch_dimension, dims.output_feature_dimension, *dims.output_spatial_dimensions],
        "strides": [int(v) for v in strides],
        "pad_lo": [int(v) for v in pad_lo],
        "pad_hi": [int(v) for v in pad_hi],
        "dilation": [int(v) for v in dilation],
        "groups": _int(a, "feature_group_count"),
        "transposed": int(transposed),
    }


def _window(a: Any, spatial: int, padding: Any, kernel: List[int]) -> Optional[tuple]:
    """(strides, padding before, padding after, kernel dilation, transposed) as oneDNN takes them; None where it
    has no such convolution. A convolution of an input dilated by ``s`` with its kernel reversed and padded by
    ``d * (k - 1) - p`` (how ``tp.ConvTranspose`` lowers) is oneDNN's deconvolution of stride ``s``, padding ``p``,
    with the kernel as stored; an unreversed one would need the kernel reversed, and is left to XLA."""
    lhs_dilation, dilation = _ints(a, "lhs_dilation", spatial, 1), _ints(a, "rhs_dilation", spatial, 1)
    reversal = _ints(a, "window_reversal", spatial, 0)
    if all(s == 1 for s in lhs_dilation):
        if any(reversal) or (padding < 0).any():
            return None
        return _ints(a, "window_strides", spatial, 1), list(padding[:, 0]), list(padding[:, 1]), dilation, False
    if not all(reversal) or any(s != 1 for s in _ints(a, "window_strides", spatial, 1)):
        return None
    span = [d * (k - 1) for d, k in zip(dilation, kernel)]
    pad_lo, pad_hi = [s - p for s, p in zip(span, padding[:, 0])], [s - p for s, p in zip(span, padding[:, 1])]
    if min(pad_lo + pad_hi) < 0:
        return None
    return lhs_dilation, pad_lo, pad_hi, dilation, True


def _i64(value: int) -> Any:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _int(attributes: Any, name: str) -> int:
    return int(ir.IntegerAttr(attributes[name]).value) if name in attributes else 1


def _ints(attributes: Any, name: str, n: int, default: int) -> List[int]:
    """An array attribute (``array<i64: ...>``, ``array<i1: ...>`` or dense elements) as ints; `n` times `default`
    if the op does not have it."""
    if name not in attributes:
        return [default] * n
    return [int(v) for v in attributes[name]]


def _array(values: List[int]) -> Any:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def on_cpu_with_kernels(job: Job) -> bool:
    return job.platform == "cpu" and kernels.enabled()


PASS = Pass("onednn-convolutions", rewrite, on_cpu_with_kernels)
