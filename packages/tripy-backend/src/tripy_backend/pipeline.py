"""The backend's StableHLO passes, by name, in the order they run (``passes``: one module each):

1. ``independent-rows``: a bounded program whose rows are independent gets its real sizes as arguments and
   returns them, and needs no markers (bounded, one size variable only);
2. ``bounded-markers``: a bounded program's run-time twins of its shape arithmetic, and markers (bounded only);
3. ``static-shapes``: the inputs' static shapes (exact ones, or a bucket's bounds), shape refinement;
4. ``lower-markers``: the markers as ops, the inputs' real sizes as arguments (bounded only);
5. ``cse``: repeated size arithmetic merged (bounded only);
6. ``transposed-weights``: a range bucket's products of few rows read copies of their transposed baked-in weights,
   passed as arguments of their own (run by ``ranges`` for each bucket: `weight_copies`);
7. ``channels-last``: convolutions channels-last, transposes sunk and cancelled (XLA:CPU);
8. ``matrix-vector-isolation``: big matrix-vector products kept out of fusions (XLA:CPU's thunk runtime);
9. ``group-norms``: GroupNorms (and the SiLU after one) as custom calls (XLA:CPU, where ``tripy-kernels`` is installed);
10. ``sums-as-products``: sums over dims that kept dims separate (a GroupNorm's) as products with ones (XLA:CPU);
11. ``onednn-pooling``: max pools as custom calls to oneDNN (XLA:CPU, where ``tripy-kernels`` is installed);
12. ``onednn-convolutions``: convolutions as custom calls to oneDNN (XLA:CPU, where ``tripy-kernels`` is installed).

``SHAPES`` (1-5) make a module static: for one input-shape signature, or for one bucket of a declared range. Their
errors mean the program is not valid for those shapes, or has no bounded form, and are the callers' to report.
``XLA`` (7-12) prepare a static module for the compiler, together with its XLA options (``cpu_plan``); the disk
cache keys what they give. Each pass's time is logged on the ``passes`` topic (``TRIPY_LOG=passes``), and with
``TRIPY_DUMP_PASSES=<folder>`` each pass's result is written there as text, one folder per pipeline run.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any, List, Optional, Sequence, Tuple

from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import context
from tripy_backend import cpu_plan
from tripy_backend.passes import (
    Job,
    Pass,
    bounded_markers,
    channels_last,
    cse,
    group_norms,
    independent_rows,
    lower_markers,
    matrix_vector,
    onednn_convolutions,
    onednn_pooling,
    static_shapes,
    sums_as_products,
    transposed_weights,
)

SHAPES: Tuple[Pass, ...] = (
    independent_rows.PASS,
    bounded_markers.PASS,
    static_shapes.PASS,
    lower_markers.PASS,
    cse.PASS,
)
# (onednn-convolutions after channels-last: the convolutions it serves then read and write channels-last activations,
# oneDNN's fastest layout, and channels-last's transposes have cancelled between them; after sums-as-products: a
# bias that a product reads goes into the convolution's call. matrix-vector-isolation before sums-as-products: it
# leaves their products with ones alone. group-norms before sums-as-products: it looks for a GroupNorm's sums. onednn-pooling before
# onednn-convolutions: a convolution's epilogue goes into its call where a pool reads it)
XLA: Tuple[Pass, ...] = (
    channels_last.PASS,
    matrix_vector.PASS,
    group_norms.PASS,
    sums_as_products.PASS,
    onednn_pooling.PASS,
    onednn_convolutions.PASS,
)
PIPELINE: Tuple[Pass, ...] = SHAPES + XLA

DUMP_ENV_VAR = "TRIPY_DUMP_PASSES"
_runs = itertools.count(1)


def run(passes: Sequence[Pass], module_bytes: bytes, job: Job) -> bytes:
    """`module_bytes` through each of `passes` that applies to `job`, in order (logged, dumped if asked)."""
    dump = _dump_folder(job)
    if dump is not None:
        _dump(dump, 0, "input", module_bytes)
    for k, step in enumerate(passes, 1):
        if not step.applies(job):
            continue
        start = time.perf_counter()
        module_bytes = step.run(module_bytes, job)
        logger.log(
            lambda: f"[passes] {job.name}: {step.name} in {(time.perf_counter() - start) * 1e3:.1f} ms", "passes"
        )
        if dump is not None:
            _dump(dump, k, step.name, module_bytes)
    return module_bytes


def specialize(module_bytes: bytes, shapes: Sequence[Tuple[int, ...]], name: str = "program") -> bytes:
    """The module for exactly the input shapes `shapes` (raises ``range_check.Rejected``)."""
    return run(SHAPES, module_bytes, Job(name, shapes=[tuple(s) for s in shapes]))


def bound(
    module_bytes: bytes,
    bounds: Sequence[Tuple[int, ...]],
    dynamic_dims: Sequence[Tuple[int, int]],
    lows: Optional[Sequence[Tuple[int, ...]]] = None,
    name: str = "program",
    variables: Sequence[str] = (),
    rows: Optional[List[List[int]]] = None,
) -> Tuple[bytes, List[List[int]], bool]:
    """The bounded program for one bucket (`bounds`: its static shape per input; `dynamic_dims`: the (input, dim)
    pairs padded to their bound, in the order their real sizes are passed, as ``i32`` scalars after the inputs;
    `lows`: its smallest shapes; `variables`: each dynamic dim's size variable, if known), the padded dims of each
    output, and whether its rows are independent (``independent-rows``: then any size up to the bounds, 0 and 1
    included, runs in it). `rows`: the outputs' row dims, where `module_bytes` is what `rows_module` gave for
    bounds at or above these (the pass then does not run again). Raises ``markers.Unsupported`` (its subclass
    ``SmallSize`` for this bucket only) where bounded dims cannot express the program."""
    job = Job(name, shapes=[tuple(s) for s in bounds], dynamic_dims=list(dynamic_dims), lows=lows, variables=variables)
    if rows is not None:
        job.rows, job.out_dims = True, rows
    return run(SHAPES, module_bytes, job), job.out_dims, job.rows


def rows_module(
    module_bytes: bytes,
    bounds: Sequence[Tuple[int, ...]],
    dynamic_dims: Sequence[Tuple[int, int]],
    variables: Sequence[str],
    name: str = "program",
) -> Optional[Tuple[bytes, List[List[int]]]]:
    """``independent-rows`` alone, for the bounds of one bucket (as in `bound`): (the rewritten module, each output's
    row dims) where the rows are independent, else None. The module holds for every size up to the bounds (the
    analysis asks of each size up to them), so that `bound` can make any bucket at or below them from it."""
    job = Job(name, shapes=[tuple(s) for s in bounds], dynamic_dims=list(dynamic_dims), variables=variables)
    module_bytes = run((independent_rows.PASS,), module_bytes, job)
    return (module_bytes, job.out_dims) if job.rows else None


def weight_copies(
    module_bytes: bytes,
    shapes: Sequence[Tuple[int, ...]],
    lows: Sequence[Tuple[int, ...]],
    fixed: int,
    name: str = "program",
    platform: str = "cpu",
) -> Tuple[bytes, List[int]]:
    """``transposed-weights`` alone, for a range bucket's static module (`shapes`: its input shapes, the bucket's
    bounds; `lows`: its smallest; `fixed`: its first baked-in argument, -1 if not known): (the module, the arguments it
    now also takes transposed copies of, after its other arguments)."""
    job = Job(name, shapes=[tuple(s) for s in shapes], lows=[tuple(s) for s in lows], platform=platform, fixed=fixed)
    module_bytes = run((transposed_weights.PASS,), module_bytes, job)
    return module_bytes, job.transposed


def for_xla(
    module_bytes: bytes, platform: str, optimization_level: int, name: str = "program"
) -> Tuple[bytes, List[Tuple[str, Any]]]:
    """(the static module prepared for `platform`'s compiler, its XLA options)."""
    if platform != "cpu":
        return module_bytes, []
    products, kernels = cpu_plan.products_and_kernels(module_bytes)
    job = Job(name, platform=platform, runtime=cpu_plan.runtime(products, kernels))
    module_bytes = run(XLA, module_bytes, job)
    return module_bytes, cpu_plan.compile_options(platform, optimization_level, job.runtime, kernels > 0)


def _dump_folder(job: Job) -> Optional[str]:
    root = os.environ.get(DUMP_ENV_VAR)
    if not root:
        return None
    folder = os.path.join(root, f"{next(_runs):04d}-{''.join(c if c.isalnum() else '_' for c in job.name)}")
    os.makedirs(folder, exist_ok=True)
    return folder


def _dump(folder: str, k: int, name: str, module_bytes: bytes) -> None:
    from jax.extend.mlir import ir

    with context():
        text = str(ir.Module.parse(module_bytes))
    with open(os.path.join(folder, f"{k:02d}-{name}.mlir"), "w") as f:
        f.write(text)
