"""The ``group-norms`` pass (tripy_backend.passes.group_norms) as a rewrite: which GroupNorms become one custom call
to tripy-kernels' GroupNorm handler, with which attributes, and what stays XLA's. These need no kernels installed
(the numbers, with them: tests/kernels/test_group_norms.py)."""

import math

import pytest

from tripy_backend import kernels, pipeline
from tripy_backend.passes import Job, group_norms


def group_norm(shape=(1, 8, 8, 16), groups=4, silu=True, count=None, dtype="f32", nchw=False) -> bytes:
    """A module computing what tp.GroupNorm lowers to on channels-last activations `shape` (as the channels-last pass
    leaves it; `nchw`: on ``[N, C, *spatial]``, as tripy writes it) with its scale and shift arguments, then
    ``y * logistic(y)`` where `silu`; `count` divides the sums (default: how many values each adds)."""
    n, *spatial, c = (shape[0], *shape[2:], shape[1]) if nchw else shape
    cg, rank = c // groups, len(shape)
    at = 1 if nchw else rank - 1  # (the groups' dim in the grouped shape)
    g = [n, groups, cg, *spatial] if nchw else [n, *spatial, groups, cg]
    summed = [d for d in range(1, rank + 1) if d != at]
    per_channel = list(range(rank)) if nchw else [0, rank - 1, *range(1, rank - 1)]
    count = cg * math.prod(spatial) if count is None else count
    t, grouped, ones = f"tensor<{_x(shape)}x{dtype}>", f"tensor<{_x(g)}x{dtype}>", _x([n, groups] + [1] * (rank - 1))
    stats, scalar = f"tensor<{ones}x{dtype}>", f"tensor<{dtype}>"
    vector, channels = f"tensor<{c}x{dtype}>", f"tensor<{_x([1, c] + [1] * (rank - 2))}x{dtype}>"
    spread = [0, at] + [d for d in range(1, rank + 1) if d != at]
    sum_op = (
        f"applies stablehlo.add across dimensions = {summed} : ({grouped}, {scalar}) -> tensor<{n}x{groups}x{dtype}>"
    )
    end = (
        f"%24 = stablehlo.logistic %23 : {t}\n  %25 = stablehlo.multiply %23, %24 : {t}\n  return %25"
        if silu
        else "return %23"
    )
    return f"""func.func @main(%x: {t}, %w: {vector}, %b: {vector}) -> {t} {{
  %0 = stablehlo.reshape %x : ({t}) -> {grouped}
  %zero = stablehlo.constant dense<0.0> : {scalar}
  %1 = stablehlo.reduce(%0 init: %zero) {sum_op}
  %2 = stablehlo.reshape %1 : (tensor<{n}x{groups}x{dtype}>) -> {stats}
  %n = stablehlo.constant dense<{float(count)}> : {scalar}
  %3 = stablehlo.broadcast_in_dim %n, dims = [] : ({scalar}) -> {stats}
  %4 = stablehlo.divide %2, %3 : {stats}
  %5 = stablehlo.broadcast_in_dim %4, dims = {spread} : ({stats}) -> {grouped}
  %6 = stablehlo.subtract %0, %5 : {grouped}
  %7 = stablehlo.multiply %6, %6 : {grouped}
  %8 = stablehlo.reduce(%7 init: %zero) {sum_op}
  %9 = stablehlo.reshape %8 : (tensor<{n}x{groups}x{dtype}>) -> {stats}
  %10 = stablehlo.divide %9, %3 : {stats}
  %eps = stablehlo.constant dense<1.0e-05> : {scalar}
  %11 = stablehlo.broadcast_in_dim %eps, dims = [] : ({scalar}) -> {stats}
  %12 = stablehlo.add %10, %11 : {stats}
  %13 = stablehlo.rsqrt %12 : {stats}
  %14 = stablehlo.broadcast_in_dim %13, dims = {spread} : ({stats}) -> {grouped}
  %15 = stablehlo.multiply %6, %14 : {grouped}
  %16 = stablehlo.reshape %15 : ({grouped}) -> {t}
  %17 = stablehlo.reshape %w : ({vector}) -> {channels}
  %18 = stablehlo.reshape %b : ({vector}) -> {channels}
  %19 = stablehlo.broadcast_in_dim %17, dims = {per_channel} : ({channels}) -> {t}
  %20 = stablehlo.multiply %16, %19 : {t}
  %21 = stablehlo.broadcast_in_dim %18, dims = {per_channel} : ({channels}) -> {t}
  %23 = stablehlo.add %20, %21 : {t}
  {end} : {t}
}}""".encode()


def _x(dims) -> str:
    return "x".join(str(d) for d in dims)


def call(shape=(1, 8, 8, 16), groups=4, silu=True) -> str:
    t, c, n = f"tensor<{_x(shape)}xf32>", shape[-1], float(shape[-1] // groups * math.prod(shape[1:-1]))
    eps = "%eps = stablehlo.constant dense<1.0e-05> : tensor<f32>"
    scalars = f"%n = stablehlo.constant dense<{n}> : tensor<f32>\n  {eps}"
    config = f"groups = {groups} : i64, silu = {int(silu)} : i64"
    return f"""func.func @main(%x: {t}, %w: tensor<{c}xf32>, %b: tensor<{c}xf32>) -> {t} {{
  {scalars}
  %0 = stablehlo.custom_call @tripy_group_norm_f32(%x, %w, %b, %n, %n, %eps) {{api_version = 4 : i32, backend_config = {{{config}}}}} : ({t}, tensor<{c}xf32>, tensor<{c}xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> {t}
  return %0 : {t}
}}"""


@pytest.mark.parametrize(
    "shape, groups, silu",
    [((1, 8, 8, 16), 4, True), ((2, 8, 8, 16), 4, False), ((3, 10, 12), 3, True), ((1, 2, 3, 4, 8), 8, True)],
)
def test_a_group_norm_becomes_one_call(same_module, logged, shape, groups, silu):
    # (the reduces, the scale's and shift's reshapes and broadcasts: erased once nothing reads them)
    out, log = logged(lambda: group_norms.rewrite(group_norm(shape, groups, silu), Job()))
    same_module(out, call(shape, groups, silu))
    assert "group-norms: 1 GroupNorm(s) as calls to tripy-kernels" in log


@pytest.mark.parametrize(
    "module",
    [
        pytest.param(group_norm(nchw=True, shape=(1, 16, 8, 8)), id="channels-first"),
        pytest.param(group_norm(dtype="f16"), id="float16"),
    ],
)
def test_left_alone(module):
    assert group_norms.rewrite(module, Job()) is module


def test_a_normalization_read_elsewhere_too_stays_xlas():
    # the normalized values before the scale, returned too: the norm's chain is not its own, XLA computes it all
    module = group_norm().replace(b"-> tensor<1x8x8x16xf32> {", b"-> (tensor<1x8x8x16xf32>, tensor<1x8x8x4x4xf32>) {")
    module = module.replace(
        b"return %25 : tensor<1x8x8x16xf32>", b"return %25, %15 : tensor<1x8x8x16xf32>, tensor<1x8x8x4x4xf32>"
    )
    assert group_norms.rewrite(module, Job()) is module


def test_a_bounded_programs_group_norms_stay_xlas():
    bounded = group_norm().replace(b"%x: tensor<1x8x8x16xf32>,", b"%x0: tensor<1x8x8x16xf32>, %n0: tensor<i32>,")
    bounded = bounded.replace(
        b"  %0 = stablehlo.reshape %x :",
        b"  %x = stablehlo.set_dimension_size %x0, %n0, dim = 0 : (tensor<1x8x8x16xf32>, tensor<i32>) -> "
        b"tensor<1x8x8x16xf32>\n  %0 = stablehlo.reshape %x :",
    )
    assert group_norms.rewrite(bounded, Job()) is bounded


def test_it_runs_before_sums_as_products_and_only_with_kernels(monkeypatch):
    names = [p.name for p in pipeline.XLA]
    assert names.index("channels-last") < names.index("group-norms") < names.index("sums-as-products")
    monkeypatch.setattr(kernels, "_kernels", None)
    assert not group_norms.PASS.applies(Job(platform="cpu"))
