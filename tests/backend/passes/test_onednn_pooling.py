"""The ``onednn-pooling`` pass (tripy_backend.passes.onednn_pooling) as a rewrite: which reduce_windows become custom
calls to tripy-kernels' max pool handler, with which attributes. These need no kernels installed (the numbers, with
them: tests/kernels/test_pooling.py)."""

import pytest

from tripy_backend import kernels, pipeline
from tripy_backend.passes import Job, onednn_pooling


def pool(x, y, window, strides, padding, op="maximum", init="0xFF800000", dtype="f32", extra="") -> bytes:
    """A module with one reduce_window of `x` into `y` (shapes as ``1x8x8x4``) combining with `op` from `init`."""
    tx, ty = f"tensor<{x}x{dtype}>", f"tensor<{y}x{dtype}>"
    attributes = f"padding = dense<{padding}> : tensor<{len(window)}x2xi64>, window_dimensions = array<i64: {', '.join(map(str, window))}>, window_strides = array<i64: {', '.join(map(str, strides))}>{extra}"
    return f"""func.func @main(%x: {tx}) -> {ty} {{
  %init = stablehlo.constant dense<{init}> : tensor<{dtype}>
  %0 = "stablehlo.reduce_window"(%x, %init) <{{{attributes}}}> ({{
  ^bb0(%a: tensor<{dtype}>, %b: tensor<{dtype}>):
    %1 = stablehlo.{op} %a, %b : tensor<{dtype}>
    stablehlo.return %1 : tensor<{dtype}>
  }}) : ({tx}, tensor<{dtype}>) -> {ty}
  return %0 : {ty}
}}""".encode()


# ResNet's max pool, channels-last (as the channels-last pass leaves it)
NHWC = pool("1x112x112x64", "1x56x56x64", [1, 3, 3, 1], [1, 2, 2, 1], "[[0, 0], [1, 1], [1, 1], [0, 0]]")

CALL = """func.func @main(%x: tensor<1x112x112x64xf32>) -> tensor<1x56x56x64xf32> {
  %0 = stablehlo.custom_call @tripy_onednn_max_pool_f32(%x) {api_version = 4 : i32, backend_config = {dilation = array<i64: 1, 1>, layout = array<i64: 0, 3, 1, 2>, pad_hi = array<i64: 1, 1>, pad_lo = array<i64: 1, 1>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>}} : (tensor<1x112x112x64xf32>) -> tensor<1x56x56x64xf32>
  return %0 : tensor<1x56x56x64xf32>
}"""


def test_a_max_pool_becomes_a_call(same_module, logged):
    out, log = logged(lambda: onednn_pooling.rewrite(NHWC, Job()))
    same_module(out, CALL)
    assert "onednn-pooling: 1 max pool(s) to oneDNN" in log


def test_channels_first_and_3d_pools_name_their_layout(printed):
    nchw = pool("2x4x9x9", "2x4x4x4", [1, 1, 3, 3], [1, 1, 2, 2], "[[0, 0], [0, 0], [0, 0], [0, 0]]")
    assert "layout = array<i64: 0, 1, 2, 3>" in printed(onednn_pooling.rewrite(nchw, Job()))
    ncdhw = pool("1x2x6x6x6", "1x2x3x3x3", [1, 1, 2, 2, 2], [1, 1, 2, 2, 2], "[[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]]")
    text = printed(onednn_pooling.rewrite(ncdhw, Job()))
    assert "layout = array<i64: 0, 1, 2, 3, 4>" in text and "window = array<i64: 2, 2, 2>" in text


@pytest.mark.parametrize(
    "module",
    [
        pytest.param(
            pool(
                "1x8x8x4",
                "1x8x8x4",
                [1, 3, 3, 1],
                [1, 1, 1, 1],
                "[[0, 0], [1, 1], [1, 1], [0, 0]]",
                op="add",
                init="0.0",
            ),
            id="a-sum",
        ),
        pytest.param(
            pool("1x8x8x4", "1x8x8x4", [1, 3, 3, 1], [1, 1, 1, 1], "[[0, 0], [1, 1], [1, 1], [0, 0]]", init="0.0"),
            id="max-from-zero",
        ),
        pytest.param(
            pool(
                "1x8x8x4",
                "1x6x6x4",
                [1, 3, 3, 1],
                [1, 1, 1, 1],
                "[[0, 0], [0, 0], [0, 0], [0, 0]]",
                dtype="f16",
                init="0xFC00",
            ),
            id="float16",
        ),
        pytest.param(
            pool("2x8x8x4", "1x6x6x4", [2, 3, 3, 1], [1, 1, 1, 1], "[[0, 0], [0, 0], [0, 0], [0, 0]]"),
            id="across-the-batch",
        ),
        pytest.param(
            pool("1x8x8x4", "1x6x6x2", [1, 3, 3, 3], [1, 1, 1, 1], "[[0, 0], [0, 0], [0, 0], [0, 0]]"),
            id="across-channels",
        ),
        pytest.param(
            pool(
                "1x8x8x4",
                "1x13x13x4",
                [1, 3, 3, 1],
                [1, 1, 1, 1],
                "[[0, 0], [0, 0], [0, 0], [0, 0]]",
                extra=", base_dilations = array<i64: 1, 2, 2, 1>",
            ),
            id="base-dilation",
        ),
    ],
)
def test_left_alone(module):
    assert onednn_pooling.rewrite(module, Job()) is module


def test_it_runs_before_onednn_convolutions_and_only_with_kernels(monkeypatch):
    names = [p.name for p in pipeline.XLA]
    assert names.index("channels-last") < names.index("onednn-pooling") < names.index("onednn-convolutions")
    monkeypatch.setattr(kernels, "_kernels", None)
    assert not onednn_pooling.PASS.applies(Job(platform="cpu"))
