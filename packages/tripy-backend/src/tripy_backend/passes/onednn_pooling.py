"""Pass ``onednn-pooling`` (XLA:CPU, where tripy's native kernels are installed: ``tripy_backend.kernels``): each
float32 max pool (a ``reduce_window`` taking the maximum from -inf, as ``tp.maxpool`` lowers) becomes a
``stablehlo.custom_call`` to the kernels' pooling handler (``api_version = 4``), which runs it with oneDNN on its
threads. XLA:CPU runs a reduce_window as one loop on one core, at ~2 GFLOP/s: ResNet-18's max pool took 0.86 ms
of an 18 ms call at batch 1 and 6.2 ms of 138 at batch 8 (``tp.profile``).

Which: static shapes (a range's buckets too, where its rows are independent; not a bounded program: XLA:CPU refuses a
custom call on a padded dim), 1 to 3 pooled dims, the batch (dim 0) and the channels (the last dim, as
``channels-last`` leaves them, or dim 1) with a window of 1, no base dilation. The operand is passed as stored: the
``layout`` attribute names its dims in oneDNN's order ``[N, C, *spatial]``."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from jax.extend.mlir import ir

from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import cpu_plan, kernels
from tripy_backend.passes import Job, Pass


def rewrite(module_bytes: bytes, job: Job) -> bytes:
    """The module with each max pool the kernels serve as a custom call to them; `module_bytes` itself if none."""
    if b"reduce_window" not in module_bytes or b"set_dimension_size" in module_bytes:  # (see the module docstring)
        return module_bytes
    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        pools = [(op, a) for op in cpu_plan.walk(module.operation) for a in [_attributes(op)] if a is not None]
        for op, attributes in pools:
            with ir.InsertionPoint(op), op.location:
                call = cpu_plan.kernel_call(kernels.MAX_POOL, op.results[0].type, [op.operands[0]], attributes)
            op.results[0].replace_all_uses_with(call.results[0])
            init = op.operands[1].owner
            op.erase()
            if not list(init.results[0].uses):  # (the -inf it started from)
                init.operation.erase()
        if not pools:
            return module_bytes
        logger.log(f"[compile] onednn-pooling: {len(pools)} max pool(s) to oneDNN", "compile")
        return bytecode(module)


def _attributes(op: Any) -> Optional[Dict[str, List[int]]]:
    """The handler's attributes for the reduce_window `op` if it is a max pool the kernels serve (see the module
    docstring), else None."""
    if (
        op.name != "stablehlo.reduce_window"
        or len(op.operands) != 2
        or not cpu_plan.combines_with(op, "stablehlo.maximum")
    ):
        return None
    x = ir.RankedTensorType(op.operands[0].type)
    if str(x.element_type) != "f32" or not x.has_static_shape or cpu_plan.splat(op.operands[1]) != -math.inf:
        return None
    rank, a = x.rank, op.attributes
    window = cpu_plan.ints(a, "window_dimensions", rank, 1)
    strides, dilation = cpu_plan.ints(a, "window_strides", rank, 1), cpu_plan.ints(a, "window_dilations", rank, 1)
    pads = [int(p) for p in ir.DenseIntElementsAttr(a["padding"])] if "padding" in a else [0] * (2 * rank)
    if cpu_plan.ints(a, "base_dilations", rank, 1) != [1] * rank or min(pads) < 0:
        return None
    kept = [
        d for d in range(rank) if (window[d], strides[d], dilation[d], pads[2 * d], pads[2 * d + 1]) == (1, 1, 1, 0, 0)
    ]
    channels = rank - 1 if rank - 1 in kept else 1
    if 0 not in kept or channels not in kept or not 3 <= rank <= 5:
        return None
    spatial = [d for d in range(1, rank) if d != channels]
    return {
        "layout": [0, channels, *spatial],
        "window": [window[d] for d in spatial],
        "strides": [strides[d] for d in spatial],
        "pad_lo": [pads[2 * d] for d in spatial],
        "pad_hi": [pads[2 * d + 1] for d in spatial],
        "dilation": [dilation[d] for d in spatial],
    }


def on_cpu_with_kernels(job: Job) -> bool:
    return job.platform == "cpu" and kernels.enabled() and kernels.has(kernels.MAX_POOL)


PASS = Pass("onednn-pooling", rewrite, on_cpu_with_kernels)
