"""tripy-kernels' oneDNN convolutions against XLA's own: the same StableHLO convolution compiled as XLA's op and as
the custom call the ``onednn-convolutions`` pass makes of it, on the same random operands (strided, padded,
dilated, grouped, depthwise, transposed; 1 to 3 spatial dims; tripy's NCHW layout and the channels-last one the channels-last
pass leaves), and tp.Conv end to end in eager and compiled mode against a NumPy convolution."""

import numpy as np
import pytest

pytest.importorskip("tripy_kernels")

from jax.extend.mlir import ir  # noqa: E402

import tripy as tp  # noqa: E402
from tripy_flatir.mlir_utils import context  # noqa: E402
from tripy_backend import _xla, kernels  # noqa: E402
from tripy_backend.passes import Job, onednn_convolutions  # noqa: E402

NCHW = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
NHWC = "[b, 0, 1, f]x[o, i, 0, 1]->[b, 0, 1, f]"
HWIO = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"  # (XLA's own convolution layout)

# name -> (dimension numbers, input shape, kernel shape, strides, padding, kernel dilation, groups)
CASES = {
    "plain": (NCHW, (1, 3, 8, 8), (8, 3, 3, 3), [1, 1], [[1, 1], [1, 1]], [1, 1], 1),
    "strided-padded": (NCHW, (2, 4, 9, 11), (6, 4, 3, 3), [2, 3], [[1, 2], [0, 1]], [1, 1], 1),
    "dilated": (NCHW, (1, 4, 12, 12), (4, 4, 3, 3), [1, 1], [[2, 2], [1, 1]], [2, 3], 1),
    "grouped": (NHWC, (2, 9, 11, 8), (16, 2, 3, 3), [2, 2], [[1, 1], [2, 0]], [1, 2], 4),
    "depthwise": (NHWC, (1, 10, 10, 16), (16, 1, 3, 3), [2, 2], [[1, 1], [1, 1]], [1, 1], 16),
    "depthwise-multiplier": (NCHW, (1, 8, 7, 7), (16, 1, 5, 5), [1, 1], [[2, 2], [2, 2]], [1, 1], 8),
    "channels-last-64": (NHWC, (1, 14, 14, 64), (128, 64, 3, 3), [2, 2], [[1, 1], [1, 1]], [1, 1], 1),
    "pointwise": (NHWC, (3, 7, 7, 32), (16, 32, 1, 1), [1, 1], [[0, 0], [0, 0]], [1, 1], 1),
    "hwio-weights": (HWIO, (1, 6, 6, 4), (3, 3, 4, 8), [1, 1], [[1, 1], [1, 1]], [1, 1], 1),
    "1d": ("[b, f, 0]x[o, i, 0]->[b, f, 0]", (2, 4, 20), (6, 2, 5), [2], [[2, 1]], [2], 2),
    "3d": (
        "[b, f, 0, 1, 2]x[o, i, 0, 1, 2]->[b, f, 0, 1, 2]",
        (1, 3, 5, 6, 7),
        (4, 3, 3, 3, 3),
        [1, 2, 1],
        [[1, 1], [0, 0], [1, 0]],
        [1, 1, 2],
        1,
    ),
}


# transposed convolutions as tp.ConvTranspose lowers them: (dims, input, kernel, input dilation (the stride), padding
# (dilation * (kernel - 1) - the crop), kernel dilation, groups); the kernel reversed
TRANSPOSED = {
    "transposed-2x2": (NHWC, (1, 6, 6, 8), (4, 8, 2, 2), [2, 2], [[1, 1], [1, 1]], [1, 1], 1),
    "transposed-cropped": (NCHW, (2, 4, 5, 7), (6, 4, 3, 3), [2, 3], [[1, 1], [2, 0]], [1, 1], 1),
    "transposed-dilated-grouped": (NCHW, (1, 4, 5, 5), (6, 2, 3, 3), [2, 2], [[3, 4], [4, 4]], [2, 2], 2),
}


def module(
    dims: str, x: tuple, k: tuple, stride: list, pad: list, dilation: list, groups: int, lhs_dilation=None
) -> bytes:
    """A module with one convolution (its result shape worked out from the dimension numbers); with
    `lhs_dilation`, the input dilated and the kernel reversed, and `stride` 1."""
    lhs, rhs, out = [part.strip("[]").split(", ") for part in dims.replace("->", "x").split("]x[")]
    sizes = {"b": x[lhs.index("b")], "f": k[rhs.index("o")]}
    for i in range(len(x) - 2):
        span = (k[rhs.index(str(i))] - 1) * dilation[i] + 1
        size = x[lhs.index(str(i))] if lhs_dilation is None else (x[lhs.index(str(i))] - 1) * lhs_dilation[i] + 1
        sizes[str(i)] = (size + sum(pad[i]) - span) // stride[i] + 1
    xt, kt, yt = ("x".join(map(str, s)) for s in (x, k, [sizes[d] for d in out]))
    window = f"stride = {stride}, pad = {pad}, rhs_dilate = {dilation}"
    if lhs_dilation is not None:
        window += f", lhs_dilate = {lhs_dilation}, reverse = {['true'] * len(lhs_dilation)}".replace("'", "")
    return f"""func.func @main(%x: tensor<{xt}xf32>, %k: tensor<{kt}xf32>) -> tensor<{yt}xf32> {{
  %0 = stablehlo.convolution(%x, %k) dim_numbers = {dims}, window = {{{window}}} {{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : (tensor<{xt}xf32>, tensor<{kt}xf32>) -> tensor<{yt}xf32>
  return %0 : tensor<{yt}xf32>
}}""".encode()


def run(program: bytes, *arrays: np.ndarray) -> np.ndarray:
    return run_all(program, *arrays)[0]


def run_all(program: bytes, *arrays: np.ndarray) -> list:
    exe = _xla.compile(program, "cpu", 0)
    return [np.asarray(out) for out in _xla.execute(exe, [_xla.to_device(a, "cpu", 0) for a in arrays])]


@pytest.fixture(autouse=True)
def registered():
    assert kernels.installed() is not None


@pytest.mark.parametrize("name", sorted(CASES) + sorted(TRANSPOSED))
def test_same_numbers_as_xla(name):
    if name in CASES:
        program = module(*CASES[name])
    else:
        dims, x, k, lhs_dilation, pad, dilation, groups = TRANSPOSED[name]
        program = module(dims, x, k, [1] * len(pad), pad, dilation, groups, lhs_dilation)
    x, k = (CASES.get(name) or TRANSPOSED[name])[1:3]
    served = onednn_convolutions.rewrite(program, Job())
    with context():
        assert "stablehlo.custom_call @tripy_onednn_convolution_f32" in str(ir.Module.parse(served))
    rng = np.random.default_rng(0)
    xs, ks = rng.standard_normal(x).astype(np.float32), rng.standard_normal(k).astype(np.float32)
    expected = run(program, xs, ks)
    np.testing.assert_allclose(run(served, xs, ks), expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def epilogue_module(ops: list, shared: bool = False) -> bytes:
    """ResNet's channels-last 3x3 64 -> 128 convolution at 14x14 (stride 2: 1x7x7x128) followed by `ops`, in order:
    "bias" (a [128] vector broadcast along the features), "residual" (a tensor argument) or "relu"; `shared`: the
    convolution's result is returned too (read twice, so nothing can be fused into it)."""
    y = "tensor<1x7x7x128xf32>"
    lines, value = [], "%0"
    for i, op in enumerate(ops, 1):
        if op == "bias":
            lines.append(f"%bb{i} = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<128xf32>) -> {y}")
            lines.append(f"%{i} = stablehlo.add {value}, %bb{i} : {y}")
        elif op == "residual":
            lines.append(f"%{i} = stablehlo.add %r, {value} : {y}")
        else:
            lines.append("%z{0} = stablehlo.constant dense<0.0> : tensor<f32>".format(i))
            lines.append(f"%zb{i} = stablehlo.broadcast_in_dim %z{i}, dims = [] : (tensor<f32>) -> {y}")
            lines.append(f"%{i} = stablehlo.maximum {value}, %zb{i} : {y}")
        value = f"%{i}"
    results = f"{value}, %0 : {y}, {y}" if shared else f"{value} : {y}"
    body = "\n  ".join(lines)
    return f"""func.func @main(%x: tensor<1x14x14x64xf32>, %k: tensor<128x64x3x3xf32>, %b: tensor<128xf32>, %r: {y}) -> ({y}{", " + y if shared else ""}) {{
  %0 = stablehlo.convolution(%x, %k) dim_numbers = {NHWC}, window = {{stride = [2, 2], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<1x14x14x64xf32>, tensor<128x64x3x3xf32>) -> {y}
  {body}
  return {results}
}}""".encode()


@pytest.mark.parametrize(
    "ops", [["bias", "relu"], ["bias", "residual", "relu"], ["relu"], ["residual", "bias"]], ids="-".join
)
def test_the_elementwise_ops_after_a_convolution_are_fused_into_it(ops):
    """A bias (BatchNorm's shift), a residual add and a ReLU after a served convolution go into its call (oneDNN's
    post-ops), with XLA's numbers."""
    program = epilogue_module(ops)
    served = onednn_convolutions.rewrite(program, Job())
    with context():
        text = str(ir.Module.parse(served))
    assert "stablehlo.custom_call @tripy_onednn_convolution_post_f32" in text
    assert "stablehlo.add" not in text and "stablehlo.maximum" not in text
    rng = np.random.default_rng(3)
    args = [
        rng.standard_normal(s).astype(np.float32) for s in [(1, 14, 14, 64), (128, 64, 3, 3), (128,), (1, 7, 7, 128)]
    ]
    expected = run(program, *args)
    np.testing.assert_allclose(run(served, *args), expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_a_convolution_result_read_elsewhere_is_not_fused():
    """Where the convolution's result is read by more than the next op, the ops after it stay XLA's."""
    served = onednn_convolutions.rewrite(epilogue_module(["bias", "relu"], shared=True), Job())
    with context():
        text = str(ir.Module.parse(served))
    assert "stablehlo.custom_call @tripy_onednn_convolution_f32" in text and "post_f32" not in text
    assert "stablehlo.add" in text and "stablehlo.maximum" in text


# ResNet's 3x3 64 -> 128 convolution of `epilogue_module` (%0), then a bias (%2)
CONV_BIAS = (
    "%0 = stablehlo.convolution(%x, %k) dim_numbers = {NHWC}, window = {{stride = [2, 2], pad = [[1, 1], [1, 1]], "
    "rhs_dilate = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : "
    "(tensor<1x14x14x64xf32>, tensor<128x64x3x3xf32>) -> {y}\n"
    "  %1 = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<128xf32>) -> {y}\n"
    "  %2 = stablehlo.add %0, %1 : {y}"
).format(NHWC=NHWC, y="tensor<1x7x7x128xf32>")


def test_a_bias_alone_is_fused_only_where_xla_could_not_fuse_it():
    """A per-channel add alone costs XLA nothing where it fuses it into what reads it (here: the function's result);
    before another convolution it would be a pass of its own, so it goes into the call."""
    served = onednn_convolutions.rewrite(epilogue_module(["bias"]), Job())
    with context():
        text = str(ir.Module.parse(served))
    assert "post_f32" not in text and "stablehlo.add" in text

    y = "tensor<1x7x7x128xf32>"
    program = f"""func.func @main(%x: tensor<1x14x14x64xf32>, %k: tensor<128x64x3x3xf32>, %b: tensor<128xf32>, %k2: tensor<128x128x1x1xf32>) -> {y} {{
  {CONV_BIAS}
  %3 = stablehlo.convolution(%2, %k2) dim_numbers = {NHWC}, window = {{stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({y}, tensor<128x128x1x1xf32>) -> {y}
  return %3 : {y}
}}""".encode()
    _assert_bias_fused(program, [(1, 14, 14, 64), (128, 64, 3, 3), (128,), (128, 128, 1, 1)])


def test_a_bias_that_a_product_reads_is_fused_though_xla_fuses_it_elsewhere():
    """A GroupNorm's mean, as ``sums-as-products`` leaves it, reads the biased result through a product (XLA stores
    the sum first) and its normalization reads it too (fused): the bias goes into the call."""
    y = "tensor<1x7x7x128xf32>"
    program = f"""func.func @main(%x: tensor<1x14x14x64xf32>, %k: tensor<128x64x3x3xf32>, %b: tensor<128xf32>) -> (tensor<1x128xf32>, {y}) {{
  {CONV_BIAS}
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %ones = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<1x49xf32>
  %3 = stablehlo.reshape %2 : ({y}) -> tensor<49x128xf32>
  %4 = stablehlo.dot_general %ones, %3, contracting_dims = [1] x [0] : (tensor<1x49xf32>, tensor<49x128xf32>) -> tensor<1x128xf32>
  %5 = stablehlo.multiply %2, %2 : {y}
  return %4, %5 : tensor<1x128xf32>, {y}
}}""".encode()
    _assert_bias_fused(program, [(1, 14, 14, 64), (128, 64, 3, 3), (128,)])


def _assert_bias_fused(program: bytes, shapes: list) -> None:
    """The bias after `program`'s first convolution goes into its call, and the outputs are XLA's."""
    served = onednn_convolutions.rewrite(program, Job())
    with context():
        text = str(ir.Module.parse(served))
    assert "@tripy_onednn_convolution_post_f32" in text and "stablehlo.add" not in text
    rng = np.random.default_rng(6)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    for got, expected in zip(run_all(served, *args), run_all(program, *args)):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_an_epilogue_operand_of_the_wrong_size_is_refused():
    """The fused handler checks each epilogue operand against the result (a [C] vector, or the result's shape) and
    fails the call with a message, instead of reading past a buffer."""
    y = "tensor<1x7x7x128xf32>"
    config = (
        "lhs = array<i64: 0, 3, 1, 2>, rhs = array<i64: 0, 1, 2, 3>, out = array<i64: 0, 3, 1, 2>, "
        "strides = array<i64: 2, 2>, pad_lo = array<i64: 1, 1>, pad_hi = array<i64: 1, 1>, "
        "dilation = array<i64: 1, 1>, groups = 1 : i64, transposed = 0 : i64, post = array<i64: 1>"
    )
    program = f"""func.func @main(%x: tensor<1x14x14x64xf32>, %k: tensor<128x64x3x3xf32>, %b: tensor<64xf32>) -> {y} {{
  %0 = stablehlo.custom_call @tripy_onednn_convolution_post_f32(%x, %k, %b) {{api_version = 4 : i32, backend_config = {{{config}}}}} : (tensor<1x14x14x64xf32>, tensor<128x64x3x3xf32>, tensor<64xf32>) -> {y}
  return %0 : {y}
}}"""
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(1, 14, 14, 64), (128, 64, 3, 3), (64,)]]
    with pytest.raises(Exception, match="an epilogue operand does not match"):
        run(program.encode(), *args)


def numpy_conv(x, w, stride, padding, dilation, groups):
    """NCHW x OIHW convolution in NumPy (float64), for the end-to-end checks."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *padding])
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    oh = (h - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (wd - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    per = o // groups
    for g in range(groups):
        xg, wg = x[:, g * ci : (g + 1) * ci], w[g * per : (g + 1) * per].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xg[
                    :,
                    :,
                    i * dilation[0] : i * dilation[0] + (oh - 1) * stride[0] + 1 : stride[0],
                    j * dilation[1] : j * dilation[1] + (ow - 1) * stride[1] + 1 : stride[1],
                ]
                out[:, g * per : (g + 1) * per] += np.einsum("nchw,oc->nohw", patch, wg[:, :, i, j])
    return out


@pytest.mark.parametrize(
    "cin, cout, kernel, stride, padding, dilation, groups",
    [
        (3, 8, (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
        (8, 16, (3, 3), (2, 2), ((1, 1), (2, 0)), (1, 2), 4),
        (16, 16, (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 16),
        (4, 4, (5, 3), (1, 2), ((4, 4), (1, 1)), (2, 1), 1),
    ],
    ids=["plain", "grouped-dilated", "depthwise", "dilated"],
)
@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_tp_conv_runs_on_onednn(cin, cout, kernel, stride, padding, dilation, groups, mode):
    rng = np.random.default_rng(1)
    conv = tp.Conv(cin, cout, kernel, stride=stride, padding=padding, dilation=dilation, groups=groups)
    w = rng.standard_normal((cout, cin // groups, *kernel)).astype(np.float32)
    b = rng.standard_normal((cout,)).astype(np.float32)
    conv.weight, conv.bias = tp.Tensor(w), tp.Tensor(b)
    x = rng.standard_normal((2, cin, 11, 13)).astype(np.float32)
    if mode == "eager":
        y = np.from_dlpack(conv(tp.Tensor(x)))
    else:
        exe = tp.compile(conv, args=[tp.InputInfo(x.shape, tp.float32)])
        y = np.from_dlpack(exe(tp.Tensor(x)))
    expected = numpy_conv(x, w, stride, padding, dilation, groups) + b[None, :, None, None]
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-4)


def test_a_batch_range_runs_every_bucket_on_onednn(logged):
    # (its rows are independent: each bucket's program is static at its bound, see ``passes.independent_rows``)
    rng = np.random.default_rng(5)
    conv = tp.Conv(4, 8, (3, 3), padding=((1, 1), (1, 1)))
    w, b = rng.standard_normal((8, 4, 3, 3)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    conv.load_state_dict({"weight": tp.Tensor(w), "bias": tp.Tensor(b)})
    exe, text = logged(
        lambda: tp.compile(
            lambda x: tp.relu(conv(x)), args=[tp.InputInfo(((1, 4, 16), 4, 6, 6), tp.float32)], wait=True
        )
    )
    assert "stay XLA's" not in text
    assert text.count("onednn-convolutions: 1 of 1 to oneDNN") == len(exe._program.ranges.programs)
    for n in (1, 3, 5, 11, 16):
        x = rng.standard_normal((n, 4, 6, 6)).astype(np.float32)
        expected = np.maximum(numpy_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1) + b[None, :, None, None], 0)
        np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), expected, rtol=1e-5, atol=1e-4)


def test_saved_executable_needs_the_kernels(tmp_path, monkeypatch):
    conv = tp.Conv(4, 8, (3, 3), padding=((1, 1), (1, 1)))
    conv.initialize_dummy_parameters()
    exe = tp.compile(conv, args=[tp.InputInfo((1, 4, 6, 6), tp.float32)])
    path = str(tmp_path / "conv.tpexe")
    exe.save(path)
    x = tp.Tensor(np.random.default_rng(2).standard_normal((1, 4, 6, 6)).astype(np.float32))
    expected = np.from_dlpack(exe(x))
    np.testing.assert_array_equal(np.from_dlpack(tp.Executable.load(path)(x)), expected)
    monkeypatch.setattr(kernels, "_kernels", None)  # (as where tripy-kernels is not installed)
    with pytest.raises(tp.TripyException, match="calls tripy's native kernels"):
        tp.Executable.load(path)
    recompiled = tp.Executable.load(path, trust_compiled_code=False)  # its StableHLO, on XLA's convolutions
    np.testing.assert_allclose(np.from_dlpack(recompiled(x)), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_tp_conv_transpose_runs_on_onednn(mode):
    rng = np.random.default_rng(3)
    stride, padding = (2, 3), ((1, 1), (0, 2))
    layer = tp.ConvTranspose(4, 6, (3, 3), stride=stride, padding=padding)
    w = rng.standard_normal((4, 6, 3, 3)).astype(np.float32)  # [in, out, *k], as PyTorch's
    b = rng.standard_normal((6,)).astype(np.float32)
    layer.weight, layer.bias = tp.Tensor(w), tp.Tensor(b)
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    if mode == "eager":
        y = np.from_dlpack(layer(tp.Tensor(x)))
    else:
        y = np.from_dlpack(tp.compile(layer, args=[tp.InputInfo(x.shape, tp.float32)])(tp.Tensor(x)))
    (h, wd), (kh, kw) = x.shape[2:], w.shape[2:]
    full = np.zeros((2, 6, (h - 1) * stride[0] + kh, (wd - 1) * stride[1] + kw))
    for i in range(kh):
        for j in range(kw):
            full[:, :, i : i + (h - 1) * stride[0] + 1 : stride[0], j : j + (wd - 1) * stride[1] + 1 : stride[1]] += (
                np.einsum("nchw,co->nohw", x.astype(np.float64), w[:, :, i, j].astype(np.float64))
            )
    expected = full[:, :, padding[0][0] : full.shape[2] - padding[0][1], padding[1][0] : full.shape[3] - padding[1][1]]
    np.testing.assert_allclose(y, expected + b[None, :, None, None], rtol=1e-5, atol=1e-4)


def _aligned(shape, alignment=256):
    """An uninitialized float32 array whose data starts at a multiple of `alignment` bytes."""
    size = int(np.prod(shape))
    raw = np.empty(size + alignment // 4, np.float32)
    start = (-raw.ctypes.data % alignment) // 4
    return raw[start : start + size].reshape(shape)


@pytest.mark.parametrize("channels", [64, 128])
def test_weights_changed_in_place_are_laid_out_again(channels):
    """The handler keeps the weights laid out in oneDNN's layout per buffer: a buffer whose contents change between
    calls (here a host array the CPU client aliases, written in place) must not be read through the old copy. (128
    input channels: 1.2 MB of weights, fingerprinted in three chunks on oneDNN's threads; 64: one chunk.)"""
    case = (NHWC, (1, 14, 14, channels), (2 * channels, channels, 3, 3), [2, 2], [[1, 1], [1, 1]], [1, 1], 1)
    put, _, zero_copy = _xla._uploader("cpu", 0)
    program = onednn_convolutions.rewrite(module(*case), Job())
    exe = _xla.compile(program, "cpu", 0)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(case[1]).astype(np.float32)
    k = _aligned(case[2])  # (the CPU client aliases only aligned host memory; it copies the rest)
    k[...] = rng.standard_normal(k.shape)
    xb, kb = _xla.to_device(x, "cpu", 0), put(k, zero_copy)
    expected = run(module(*case), x, k.copy())
    np.testing.assert_allclose(np.asarray(_xla.execute(exe, [xb, kb])[0]), expected, rtol=1e-5, atol=1e-4)
    changes = (
        lambda: k.__setitem__((77, 5, 1, 2), 3.0),  # (one weight in the first chunk, one in the last, then all)
        lambda: k.__setitem__((-1, -1, -1, -1), 3.0),
        lambda: k.__imul__(-0.5),
    )
    for change in changes:
        change()
        expected = run(module(*case), x, k.copy())
        np.testing.assert_allclose(np.asarray(_xla.execute(exe, [xb, kb])[0]), expected, rtol=1e-5, atol=1e-4)


def test_the_kernels_say_which_convolutions_they_run_fast():
    attributes = dict(lhs=[0, 3, 1, 2], rhs=[0, 1, 2, 3], out=[0, 3, 1, 2], strides=[1, 1], pad_lo=[1, 1])
    attributes.update(pad_hi=[1, 1], dilation=[1, 1], groups=1, transposed=0)
    assert not kernels.slow([1, 14, 14, 64], [128, 64, 3, 3], [1, 14, 14, 128], attributes)
    # (a result shape that does not follow from the rest: oneDNN has no kernel for it at all)
    assert kernels.slow([1, 14, 14, 64], [128, 64, 3, 3], [1, 14, 15, 128], attributes)


_ONE_POOL = """
import os
import threading

import numpy as np
import tripy as tp

def threads():
    return len(os.listdir("/proc/self/task"))

conv = tp.Conv(16, 16, (3, 3), padding=((1, 1), (1, 1)))
conv.initialize_dummy_parameters()
exe = tp.compile(conv, args=[tp.InputInfo((2, 16, 32, 32), tp.float32)])
xs = [np.random.default_rng(i).standard_normal((2, 16, 32, 32)).astype(np.float32) for i in range(4)]
expected = [np.from_dlpack(exe(tp.Tensor(x))).copy() for x in xs]
before = threads()
wrong = []

def calls(i):
    for _ in range(30):
        if not np.allclose(np.from_dlpack(exe(tp.Tensor(xs[i]))), expected[i], rtol=1e-6, atol=1e-6):
            wrong.append(i)

callers = [threading.Thread(target=calls, args=(i,)) for i in range(4)]
for c in callers:
    c.start()
for c in callers:
    c.join()
libraries = {line.split()[-1].rsplit("/", 1)[-1].split(".so")[0] for line in open("/proc/self/maps") if ".so" in line}
print(" ".join(sorted(libraries & {"libtbb", "libgomp", "libiomp5", "libomp"})))
print(before, threads(), len(wrong))
"""


def test_convolutions_from_several_threads_share_one_pool_of_threads():
    """Four threads call a compiled convolution at once (XLA then calls the handler from several of its threads): every
    result is right, and oneDNN runs them all on one pool of threads: TBB's (cores - 1 workers, made by the first
    calls), no OpenMP runtime in the process (GNU OpenMP's build gave each thread that called a team of its own). The
    calls add at most as many threads as the host has cores: TBB's workers, and one of the runtime's own that
    sometimes appears (seen in CI: 2 on 2 cores)."""
    import os
    import subprocess
    import sys

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: no pool to share")
    done = subprocess.run([sys.executable, "-c", _ONE_POOL], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    *_, runtimes, counts = done.stdout.strip().splitlines()
    before, after, wrong = map(int, counts.split())
    assert wrong == 0
    assert runtimes == "libtbb"
    assert after - before <= len(os.sched_getaffinity(0))


def test_pinned_weights_are_read_as_laid_out_until_unpinned():
    """A pinned buffer's weights (tripy pins an executable's baked-in data: its own copies, never written) are not
    fingerprinted on each call: a change made in place anyway is not seen until the buffer is unpinned."""
    import tripy_kernels

    put, _, zero_copy = _xla._uploader("cpu", 0)
    exe = _xla.compile(onednn_convolutions.rewrite(module(*CASES["channels-last-64"]), Job()), "cpu", 0)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 14, 14, 64)).astype(np.float32)
    k = _aligned((128, 64, 3, 3))
    k[...] = rng.standard_normal(k.shape)
    xb, kb = _xla.to_device(x, "cpu", 0), put(k, zero_copy)
    address = kb.unsafe_buffer_pointer()
    assert address == k.ctypes.data  # (the buffer aliases the array: the change below reaches it)
    before = run(module(*CASES["channels-last-64"]), x, k.copy())
    tripy_kernels.pin(address)
    try:
        np.testing.assert_allclose(np.asarray(_xla.execute(exe, [xb, kb])[0]), before, rtol=1e-5, atol=1e-4)
        k *= -0.5
        np.testing.assert_allclose(np.asarray(_xla.execute(exe, [xb, kb])[0]), before, rtol=1e-5, atol=1e-4)
    finally:
        tripy_kernels.unpin(address)
    after = run(module(*CASES["channels-last-64"]), x, k.copy())
    np.testing.assert_allclose(np.asarray(_xla.execute(exe, [xb, kb])[0]), after, rtol=1e-5, atol=1e-4)


def test_an_executables_baked_in_data_is_pinned_while_it_lives():
    import gc

    import tripy_kernels

    gc.collect()  # (earlier tests' executables, freed now rather than during this test)
    baseline = tripy_kernels.pinned()

    def compile_and_run():
        conv = tp.Conv(8, 16, (3, 3), padding=((1, 1), (1, 1)))
        conv.initialize_dummy_parameters()
        exe = tp.compile(conv, args=[tp.InputInfo((1, 8, 16, 16), tp.float32)])
        x = np.random.default_rng(6).standard_normal((1, 8, 16, 16)).astype(np.float32)
        assert tripy_kernels.pinned() == baseline + 2  # (the weight and the bias)
        for _ in range(2):  # (the second call reads the laid-out weights unchecked)
            np.testing.assert_allclose(
                np.from_dlpack(exe(tp.Tensor(x))), np.from_dlpack(conv(tp.Tensor(x))), rtol=1e-5, atol=1e-5
            )

    compile_and_run()
    gc.collect()
    assert tripy_kernels.pinned() == baseline
