"""The ``onednn-convolutions`` pass (tripy_backend.passes.onednn_convolutions) as a rewrite: which convolutions
become custom calls to tripy-kernels' handler and with which attributes. These need no kernels installed (the
numbers, with them: tests/kernels); the saved-code check for missing kernels is here too."""

import pytest

from tripy_backend import cpu_plan, kernels, pipeline
from tripy_backend.passes import Job, onednn_convolutions


def conv(dims: str, x: str, k: str, y: str, window: str, groups: int = 1, dtype: str = "f32") -> bytes:
    return f"""func.func @main(%x: tensor<{x}x{dtype}>, %k: tensor<{k}x{dtype}>) -> tensor<{y}x{dtype}> {{
  %0 = stablehlo.convolution(%x, %k) dim_numbers = {dims}, window = {{{window}}} {{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : (tensor<{x}x{dtype}>, tensor<{k}x{dtype}>) -> tensor<{y}x{dtype}>
  return %0 : tensor<{y}x{dtype}>
}}""".encode()


# channels-last activations (as the channels-last pass leaves them), OIHW weights; strided, padded, dilated, grouped
GROUPED = conv(
    "[b, 0, 1, f]x[o, i, 0, 1]->[b, 0, 1, f]",
    "2x9x11x8",
    "16x2x3x3",
    "2x5x5x16",
    "stride = [2, 2], pad = [[1, 1], [2, 0]], rhs_dilate = [1, 2]",
    groups=4,
)

CALL = """func.func @main(%x: tensor<2x9x11x8xf32>, %k: tensor<16x2x3x3xf32>) -> tensor<2x5x5x16xf32> {
  %0 = stablehlo.custom_call @tripy_onednn_convolution_f32(%x, %k) {api_version = 4 : i32, backend_config = {dilation = array<i64: 1, 2>, groups = 4 : i64, lhs = array<i64: 0, 3, 1, 2>, out = array<i64: 0, 3, 1, 2>, pad_hi = array<i64: 1, 0>, pad_lo = array<i64: 1, 2>, rhs = array<i64: 0, 1, 2, 3>, strides = array<i64: 2, 2>, transposed = 0 : i64}} : (tensor<2x9x11x8xf32>, tensor<16x2x3x3xf32>) -> tensor<2x5x5x16xf32>
  return %0 : tensor<2x5x5x16xf32>
}"""


def test_a_served_convolution_becomes_a_typed_ffi_call(same_module):
    same_module(onednn_convolutions.rewrite(GROUPED, Job()), CALL)


# tp.ConvTranspose(4, 6, (3, 3), stride=(2, 2), padding=((1, 1), (0, 0))): the input dilated by the stride, the
# kernel reversed, padded by dilation * (kernel - 1) - padding; oneDNN's deconvolution of stride 2, padding 1 and 0
TRANSPOSED = conv(
    "[b, 0, 1, f]x[o, i, 0, 1]->[b, 0, 1, f]",
    "1x5x5x4",
    "6x4x3x3",
    "1x9x11x6",
    "pad = [[1, 1], [2, 2]], lhs_dilate = [2, 2], reverse = [true, true]",
)


def test_a_transposed_convolution_becomes_a_deconvolution(printed):
    text = printed(onednn_convolutions.rewrite(TRANSPOSED, Job()))
    assert "stablehlo.custom_call @tripy_onednn_convolution_f32" in text
    for attribute in ("strides = array<i64: 2, 2>", "pad_lo = array<i64: 1, 0>", "pad_hi = array<i64: 1, 0>"):
        assert attribute in text
    assert "transposed = 1 : i64" in text


@pytest.mark.parametrize(
    "program",
    [
        # input dilation without the kernel reversed (a transposed convolution needs it reversed)
        conv(
            "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
            "1x4x5x5",
            "4x4x2x2",
            "1x4x10x10",
            "pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2]",
        ),
        # a transposed convolution cropped by more than its kernel spans
        conv(
            "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
            "1x4x5x5",
            "4x4x2x2",
            "1x4x10x9",
            "pad = [[1, 1], [2, -1]], lhs_dilate = [2, 2], reverse = [true, true]",
        ),
        # negative padding (a crop)
        conv("[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", "1x4x8x8", "4x4x3x3", "1x4x4x4", "pad = [[-1, -1], [-1, -1]]"),
        # not float32
        conv(
            "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", "1x4x8x8", "4x4x3x3", "1x4x6x6", "stride = [1, 1]", dtype="bf16"
        ),
    ],
    ids=["input-dilation", "transposed-overcropped", "negative-padding", "bf16"],
)
def test_what_the_kernels_do_not_serve_stays_xlas(program):
    assert onednn_convolutions.rewrite(program, Job()) is program


def test_it_runs_after_channels_last_and_sums_as_products_and_only_with_kernels(monkeypatch):
    names = [p.name for p in pipeline.XLA]
    assert names.index("onednn-convolutions") > max(names.index("channels-last"), names.index("sums-as-products"))
    monkeypatch.setattr(kernels, "_kernels", None)
    assert not onednn_convolutions.PASS.applies(Job(platform="cpu"))
    assert kernels.tag() == kernels.NONE


def test_saved_code_that_calls_missing_kernels_is_refused(monkeypatch):
    fingerprint = cpu_plan.fingerprint("cpu", 0)
    assert cpu_plan.saved_kernels(fingerprint) == kernels.tag()
    assert cpu_plan.saved_kernels("an older fingerprint;cpu_runtime=3") == kernels.NONE
    monkeypatch.setattr(kernels, "_kernels", None)
    assert kernels.missing_error(kernels.NONE) is None
    assert "tripy-kernels 0.1.0" in kernels.missing_error("tripy-kernels 0.1.0")


def test_a_bounded_programs_convolutions_stay_xlas():
    # XLA:CPU refuses a custom call on a padded dim; the range would fall back to a static program per shape.
    bounded = GROUPED.replace(b"%x: tensor<2x9x11x8xf32>", b"%x0: tensor<2x9x11x8xf32>, %n: tensor<i32>").replace(
        b"  %0 = stablehlo.convolution(%x,",
        b"  %x = stablehlo.set_dimension_size %x0, %n, dim = 0 : (tensor<2x9x11x8xf32>, tensor<i32>) -> "
        b"tensor<?x9x11x8xf32, #stablehlo.bounds<2, ?, ?, ?>>\n  %0 = stablehlo.convolution(%x,",
    )
    assert onednn_convolutions.rewrite(bounded, Job()) is bounded


def test_a_convolution_with_only_onednns_reference_kernel_stays_xlas(monkeypatch, same_module):
    asked = []
    monkeypatch.setattr(kernels, "slow", lambda x, w, y, attributes: asked.append((x, w, y, attributes)) or True)
    assert onednn_convolutions.rewrite(GROUPED, Job()) is GROUPED
    assert asked == [
        (
            [2, 9, 11, 8],
            [16, 2, 3, 3],
            [2, 5, 5, 16],
            {
                "lhs": [0, 3, 1, 2],
                "rhs": [0, 1, 2, 3],
                "out": [0, 3, 1, 2],
                "strides": [2, 2],
                "pad_lo": [1, 2],
                "pad_hi": [1, 0],
                "dilation": [1, 2],
                "groups": 4,
                "transposed": 0,
            },
        )
    ]
    monkeypatch.setattr(kernels, "slow", lambda *args: False)
    same_module(onednn_convolutions.rewrite(GROUPED, Job()), CALL)
