"""Pass ``onednn-convolutions`` (XLA:CPU, where tripy's native kernels are installed: ``tripy_backend.kernels``):
each convolution that oneDNN can run becomes a ``stablehlo.custom_call`` to the kernels' typed FFI handler
(``api_version = 4``), which runs it with oneDNN on its own threads; XLA:CPU runs a batch-1 convolution on one
core. The rest stay XLA's.

It serves static programs' float32 convolutions (a range's buckets too, where its rows are independent:
``independent_rows``) with 1 to 3 spatial dims, any strides, non-negative padding,
kernel dilation and feature groups (grouped, depthwise) for which oneDNN has an optimized kernel (its reference
kernels are many times slower than XLA's: ``kernels.slow``), and transposed convolutions as ``tp.ConvTranspose`` lowers
them (input dilation, the kernel reversed: oneDNN's deconvolution); not batch groups. The operands are passed as the program stores them: the custom call's attributes name
their dims (the convolution's dimension numbers), so the pass adds no transpose. It runs after ``channels-last``,
which leaves the activations channels-last between convolutions: the layout oneDNN's kernels read fastest.
Batches too: XLA runs one image per core, which kept the cores busier than oneDNN's convolutions did until their
threads were kept apart and their epilogues fused (ResNet-18 at batch 8: now 146-161 ms against XLA's 154-182).

The elementwise ops that follow a served convolution, where each one's input is the previous one's only use, go
into the same call (the kernels' fused handler, ``post``): a per-channel add (a bias or a BatchNorm's shift,
broadcast along the feature dim), the add of a tensor of the result's shape (a residual connection) and a ReLU
(``maximum`` with zero), in any order and number. oneDNN then applies them as it writes each block of the result,
instead of XLA reading and writing the whole result once more. Per-channel adds alone stay XLA's where all that
reads them are ops XLA fuses them into (a concatenation, a GroupNorm's normalization): there they cost nothing,
and as post-ops they cost the U-Net 3-5%. Where one reader makes XLA store them first (a convolution, a product:
a GroupNorm's mean, see ``sums_as_products``), they are post-ops.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo

from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan, kernels
from tripy_backend.passes import Job, Pass


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
        served, fused = 0, 0
        convolutions = [op for op in cpu_plan.walk(module.operation) if op.name == "stablehlo.convolution"]
        for op in convolutions:
            attributes = _attributes(op)
            if attributes is None:
                continue
            shapes = _shapes(op)
            if kernels.slow(*shapes, attributes):
                continue
            chain, post, extra = (
                _epilogue(op.result, attributes["out"][1]) if kernels.has(kernels.CONVOLUTION_POST) else ([], [], [])
            )
            if chain and kernels.slow(*shapes, {**attributes, "post": post}):
                chain, post, extra = [], [], []
            last = chain[-1] if chain else op
            with ir.InsertionPoint(last), op.location:
                extra = [cpu_plan.channel_vector(v) if code == kernels.ADD_CHANNELS else v for code, v in extra]
                call = cpu_plan.kernel_call(
                    kernels.CONVOLUTION_POST if chain else kernels.CONVOLUTION,
                    op.result.type,
                    [*op.operands, *extra],
                    {**attributes, **({"post": post} if chain else {})},
                )
            last.result.replace_all_uses_with(call.result)
            for dead in [*reversed(chain), op]:
                dead.erase()
            served += 1
            fused += len(post)
        logger.log(
            lambda: (
                f"[compile] onednn-convolutions: {served} of {len(convolutions)} to oneDNN"
                + (f", {fused} elementwise ops fused into them" if fused else "")
            ),
            "compile",
        )
        return bytecode(module) if served else module_bytes


def _epilogue(result: Any, feature: int) -> Tuple[List[Any], List[int], List[Tuple[int, Any]]]:
    """The elementwise ops after a convolution's `result` (whose feature dim is `feature`) that its call can apply as
    oneDNN writes it: (the ops, in order; their codes, ``kernels.ADD_CHANNELS`` and the like; the extra operands,
    each with its code). Each op's input is the previous one's result and nothing else reads that."""
    chain: List[Any] = []
    post: List[int] = []
    extra: List[Tuple[int, Any]] = []
    value = result
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            break
        user = uses[0].owner.operation
        if user.name not in ("stablehlo.add", "stablehlo.maximum") or len(user.operands) != 2:
            break
        a, b = user.operands
        other = b if a == value else a
        if other == value or other.type != value.type:
            break
        if user.name == "stablehlo.maximum":
            if cpu_plan.splat(other) != 0.0:
                break
            post.append(kernels.RELU)
        elif cpu_plan.per_channel(other, feature) is not None:
            post.append(kernels.ADD_CHANNELS)
            extra.append((kernels.ADD_CHANNELS, cpu_plan.per_channel(other, feature)))
        else:
            post.append(kernels.ADD_TENSOR)
            extra.append((kernels.ADD_TENSOR, other))
        chain.append(user)
        value = user.result
    if all(code == kernels.ADD_CHANNELS for code in post) and not any(_opaque(use.owner) for use in value.uses):
        # (a bias alone: XLA fuses it into what reads it, at no cost, unless one of those stores it first)
        return [], [], []
    return chain, post, extra


def _opaque(op: Any) -> bool:
    """Whether XLA computes `op` without fusing the elementwise ops that make its operands: a convolution, a custom
    call (a oneDNN one, once this pass has made it) or a product (``sums-as-products`` makes them of a GroupNorm's
    sums), through reshapes."""
    name = op.operation.name
    if name == "stablehlo.reshape":
        return any(_opaque(use.owner) for use in op.result.uses)
    return name in cpu_plan.UNFUSED


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
    lhs_dilation, dilation = cpu_plan.ints(a, "lhs_dilation", spatial, 1), cpu_plan.ints(a, "rhs_dilation", spatial, 1)
    reversal = cpu_plan.ints(a, "window_reversal", spatial, 0)
    if all(s == 1 for s in lhs_dilation):
        if any(reversal) or (padding < 0).any():
            return None
        return cpu_plan.ints(a, "window_strides", spatial, 1), list(padding[:, 0]), list(padding[:, 1]), dilation, False
    if not all(reversal) or any(s != 1 for s in cpu_plan.ints(a, "window_strides", spatial, 1)):
        return None
    span = [d * (k - 1) for d, k in zip(dilation, kernel)]
    pad_lo, pad_hi = [s - p for s, p in zip(span, padding[:, 0])], [s - p for s, p in zip(span, padding[:, 1])]
    if min(pad_lo + pad_hi) < 0:
        return None
    return lhs_dilation, pad_lo, pad_hi, dilation, True


def _int(attributes: Any, name: str) -> int:
    return int(ir.IntegerAttr(attributes[name]).value) if name in attributes else 1


def on_cpu_with_kernels(job: Job) -> bool:
    return job.platform == "cpu" and kernels.enabled()


PASS = Pass("onednn-convolutions", rewrite, on_cpu_with_kernels)
