"""Layers against NumPy references, in eager and compiled mode, with PyTorch's parameter names and shapes."""

import numpy as np
import pytest

import tripy as tp
from tripy_backend import kernels

RNG = np.random.default_rng(0)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def load_random(layer, positive=()):
    """Random values for every parameter (those named in `positive` stay > 0); returns them as NumPy."""
    state = {}
    for name, p in layer.state_dict().items():
        state[name] = rand(*p.shape, low=0.5, high=1.5) if name in positive else rand(*p.shape)
    layer.load_state_dict(state)
    return state


def _line_of(marker):
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


# ---- Linear ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("in_shape", [(4,), (1, 4), (1, 1, 4), (3, 4), (2, 3, 4), (2, 1, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(eager_or_compiled, in_shape, bias):
    linear = tp.Linear(4, 5, bias=bias)
    p = load_random(linear)
    x = rand(*in_shape)
    out = eager_or_compiled(linear, tp.Tensor(x))
    expected = x @ p["weight"].T + (p["bias"] if bias else 0)
    if bias and len(in_shape) == 1:
        expected = expected[None]  # as in nvtripy, which adds the bias as a [1, out_features] row
    assert out.shape == expected.shape
    assert np.allclose(np.from_dlpack(out), expected, atol=1e-5)


def test_linear_float16():
    linear = tp.Linear(3, 2, dtype=tp.float16)
    w = rand(2, 3).astype(np.float16)
    linear.load_state_dict({"weight": w, "bias": np.zeros(2, np.float16)})
    x = rand(2, 3).astype(np.float16)
    out = linear(tp.Tensor(x))
    assert out.dtype == tp.float16
    assert np.allclose(np.from_dlpack(out).astype(np.float32), x.astype(np.float32) @ w.T.astype(np.float32), atol=1e-2)


def test_linear_errors():
    linear = tp.Linear(4, 2)
    linear.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException) as info:
        linear(tp.ones((3, 5)))  # MARK-lin
    assert "last dim is 5, not 4" in str(info.value) and f"{__file__}:{_line_of('MARK-lin')}" in str(info.value)
    with pytest.raises(tp.TripyException, match="created with dtype float32, but its input has dtype float16"):
        linear(tp.ones((3, 4), dtype=tp.float16))
    with pytest.raises(tp.TripyException, match="in_features must be an int >= 1"):
        tp.Linear(0, 2)
    with pytest.raises(tp.TripyException, match="dtype must be one of"):
        tp.Linear(2, 2, dtype=tp.int32)


def test_linear_dynamic_batch():
    linear = tp.Linear(4, 3)
    p = load_random(linear)
    exe = tp.compile(linear, args=[tp.InputInfo(((1, 2, 8), (1, 3, 5), 4), tp.float32)])
    for shape in [(1, 1, 4), (7, 5, 4)]:
        x = rand(*shape)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ p["weight"].T + p["bias"], atol=1e-5)


# ---- Embedding -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("ids_shape", [(5,), (2, 3)])
def test_embedding(eager_or_compiled, ids_shape):
    emb = tp.Embedding(10, 4)
    p = load_random(emb)
    ids = RNG.integers(0, 10, size=ids_shape).astype(np.int32)
    out = eager_or_compiled(emb, tp.Tensor(ids))
    assert np.array_equal(np.from_dlpack(out), p["weight"][ids])


def test_embedding_errors():
    emb = tp.Embedding(10, 4)
    emb.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException, match="tp.Embedding does not support dtype float32 for argument 'x'"):
        emb(tp.ones((2,)))


# ---- normalization ---------------------------------------------------------------------------------------
def np_normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


@pytest.mark.parametrize(
    "normalized_shape,in_shape", [(6, (1, 6)), (6, (2, 3, 6)), ((3, 6), (2, 3, 6)), ((3, 6), (3, 6))]
)
def test_layernorm(eager_or_compiled, normalized_shape, in_shape):
    ln = tp.LayerNorm(normalized_shape, eps=1e-3)
    p = load_random(ln)
    x = rand(*in_shape) * 3 + 1
    out = eager_or_compiled(ln, tp.Tensor(x))
    axes = tuple(range(x.ndim - len(ln.normalized_shape), x.ndim))
    expected = np_normalize(x, axes, 1e-3) * p["weight"] + p["bias"]
    assert np.allclose(np.from_dlpack(out), expected, atol=1e-5)


def test_layernorm_errors():
    ln = tp.LayerNorm((2, 3))
    ln.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException, match=r"the last 2 dim\(s\) of the input must be \[2, 3\]"):
        ln(tp.ones((4, 3, 3)))
    ln = tp.LayerNorm(3)
    ln.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException, match=r"expects an input of rank >= 2, shaped \(N, \*\).* got shape \[3\]"):
        ln(tp.ones((3,)))  # refused, as in nvtripy 0.1.7


def per_channel(v, rank):
    return v.reshape((1, -1) + (1,) * (rank - 2))


@pytest.mark.parametrize("in_shape", [(2, 6, 5), (2, 6, 3, 4)])
def test_groupnorm(eager_or_compiled, in_shape):
    gn = tp.GroupNorm(3, 6)
    p = load_random(gn)
    x = rand(*in_shape) * 2
    out = eager_or_compiled(gn, tp.Tensor(x))
    grouped = x.reshape(x.shape[0], 3, -1)
    expected = np_normalize(grouped, (2,), 1e-5).reshape(x.shape)
    expected = expected * per_channel(p["weight"], x.ndim) + per_channel(p["bias"], x.ndim)
    assert np.allclose(np.from_dlpack(out), expected, atol=1e-5)


@pytest.mark.parametrize("in_shape", [(2, 3, 5), (2, 3, 4, 4), (1, 3, 2, 3, 2)])
def test_instancenorm(eager_or_compiled, in_shape):
    norm = tp.InstanceNorm(3)
    p = load_random(norm)
    x = rand(*in_shape) * 2
    out = eager_or_compiled(norm, tp.Tensor(x))
    expected = np_normalize(x, tuple(range(2, x.ndim)), 1e-5)
    expected = expected * per_channel(p["weight"], x.ndim) + per_channel(p["bias"], x.ndim)
    assert np.allclose(np.from_dlpack(out), expected, atol=1e-5)


@pytest.mark.parametrize("in_shape", [(4, 3), (2, 3, 5), (2, 3, 4, 4)])
def test_batchnorm(eager_or_compiled, in_shape):
    bn = tp.BatchNorm(3, eps=1e-3)
    p = load_random(bn, positive=("running_var",))
    x = rand(*in_shape)
    out = eager_or_compiled(bn, tp.Tensor(x))
    r = x.ndim
    expected = (x - per_channel(p["running_mean"], r)) / np.sqrt(per_channel(p["running_var"], r) + 1e-3) * per_channel(
        p["weight"], r
    ) + per_channel(p["bias"], r)
    assert np.allclose(np.from_dlpack(out), expected, atol=1e-5)


def test_norm_errors():
    gn = tp.GroupNorm(2, 4)
    gn.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException, match=r"expects 4 channels \(dim 1 of the input\)"):
        gn(tp.ones((1, 3, 2)))
    with pytest.raises(tp.TripyException, match="expects an input of rank >= 3"):
        gn(tp.ones((1, 4)))
    with pytest.raises(tp.TripyException, match=r"num_groups \(3\) must divide num_channels \(4\)"):
        tp.GroupNorm(3, 4)
    bn = tp.BatchNorm(2)
    bn.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException, match="expects 2 features"):
        bn(tp.ones((1, 3, 2)))


def test_batchnorm_loads_a_pytorch_style_state_dict():
    bn = tp.BatchNorm(2)
    state = {
        "weight": np.ones(2, np.float32),
        "bias": np.zeros(2, np.float32),
        "running_mean": np.zeros(2, np.float32),
        "running_var": np.ones(2, np.float32),
        "num_batches_tracked": np.array(7),
    }
    missing, unexpected = bn.load_state_dict(state, strict=False)
    assert not missing and unexpected == {"num_batches_tracked"}


# ---- convolution -------------------------------------------------------------------------------------------
def np_conv(x, w, b, stride, padding, dilation, groups):
    """Cross-correlation, as PyTorch's Conv*d: x [N, C, *S], w [O, C/groups, *K]."""
    n = x.ndim - 2
    N, C = x.shape[:2]
    n_out, K = w.shape[0], w.shape[2:]
    x = np.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in padding])
    S = x.shape[2:]
    out_sp = [(S[i] - dilation[i] * (K[i] - 1) - 1) // stride[i] + 1 for i in range(n)]
    out = np.zeros((N, groups, n_out // groups, *out_sp), np.float64)
    xg = x.reshape(N, groups, C // groups, *S)
    wg = w.reshape(groups, n_out // groups, C // groups, *K)
    for k in np.ndindex(*K):
        window = tuple(
            slice(k[i] * dilation[i], k[i] * dilation[i] + (out_sp[i] - 1) * stride[i] + 1, stride[i]) for i in range(n)
        )
        out += np.einsum("ngc...,goc->ngo...", xg[(slice(None),) * 3 + window], wg[(Ellipsis,) + k])
    out = out.reshape(N, n_out, *out_sp)
    return (out if b is None else out + per_channel(b, out.ndim)).astype(np.float32)


def np_conv_transpose(x, w, b, stride, padding, dilation, groups):
    """PyTorch's ConvTranspose*d by its definition (each input element scatters a scaled kernel):
    x [N, Cin, *S], w [Cin, Cout/groups, *K]; `padding` crops the output."""
    n = x.ndim - 2
    N, Cin = x.shape[:2]
    S, K = x.shape[2:], w.shape[2:]
    Cout = w.shape[1] * groups
    full = [(S[i] - 1) * stride[i] + dilation[i] * (K[i] - 1) + 1 for i in range(n)]
    out = np.zeros((N, groups, Cout // groups, *full), np.float64)
    xg = x.reshape(N, groups, Cin // groups, *S)
    wg = w.reshape(groups, Cin // groups, Cout // groups, *K)
    for k in np.ndindex(*K):
        window = tuple(
            slice(k[i] * dilation[i], k[i] * dilation[i] + (S[i] - 1) * stride[i] + 1, stride[i]) for i in range(n)
        )
        out[(slice(None),) * 3 + window] += np.einsum("ngc...,gco->ngo...", xg, wg[(Ellipsis,) + k])
    out = out.reshape(N, Cout, *full)
    out = out[(slice(None), slice(None)) + tuple(slice(padding[i][0], full[i] - padding[i][1]) for i in range(n))]
    return (out if b is None else out + per_channel(b, out.ndim)).astype(np.float32)


# (spatial dims, kernel, stride, padding per side, dilation, groups, bias)
CONV_CASES = [
    (1, 3, 1, (0, 0), 1, 1, True),
    (1, 4, 2, (2, 1), 1, 2, False),
    (2, 3, 1, (1, 1), 1, 1, True),
    (2, 3, 2, (0, 2), 2, 4, True),
    (2, 2, 3, (1, 0), 1, 1, False),
    (3, 2, 1, (1, 1), 2, 2, True),
]


def _conv_args(n, kernel, stride, pad, dilation):
    return dict(kernel_dims=(kernel,) * n, stride=(stride,) * n, padding=(pad,) * n, dilation=(dilation,) * n)


@pytest.mark.parametrize("n,kernel,stride,pad,dilation,groups,bias", CONV_CASES)
def test_conv(eager_or_compiled, n, kernel, stride, pad, dilation, groups, bias):
    args = _conv_args(n, kernel, stride, pad, dilation)
    conv = tp.Conv(4, 8, groups=groups, bias=bias, **args)
    p = load_random(conv)
    assert conv.weight.shape == (8, 4 // groups) + (kernel,) * n  # PyTorch's layout
    x = rand(2, 4, *((7, 6, 5)[:n]))
    out = eager_or_compiled(conv, tp.Tensor(x))
    expected = np_conv(x, p["weight"], p.get("bias"), args["stride"], args["padding"], args["dilation"], groups)
    assert out.shape == expected.shape
    assert np.allclose(np.from_dlpack(out), expected, atol=1e-4)


@pytest.mark.parametrize("stride,groups", [(1, 1), (2, 1), (1, 4)])
def test_conv_with_big_kernels(eager_or_compiled, stride, groups):
    # >= 256K kernel elements: the program compiles for XLA:CPU's thunk runtime (tripy_backend/cpu_plan.py)
    conv = tp.Conv(512, 2048, (3, 3), stride=(stride, stride), padding=((1, 1), (1, 1)), groups=groups, bias=True)
    p = load_random(conv)
    x = rand(1, 512, 7, 7)
    out = eager_or_compiled(conv, tp.Tensor(x))
    expected = np_conv(x, p["weight"], p["bias"], (stride, stride), ((1, 1), (1, 1)), (1, 1), groups)
    np.testing.assert_allclose(np.from_dlpack(out), expected, rtol=1e-4, atol=2e-3)


@pytest.mark.parametrize("n,kernel,stride,pad,dilation,groups,bias", CONV_CASES)
def test_conv_transpose(eager_or_compiled, n, kernel, stride, pad, dilation, groups, bias):
    args = _conv_args(n, kernel, stride, pad, dilation)
    conv = tp.ConvTranspose(4, 8, groups=groups, bias=bias, **args)
    p = load_random(conv)
    assert conv.weight.shape == (4, 8 // groups) + (kernel,) * n  # PyTorch's layout
    x = rand(2, 4, *((5, 4, 3)[:n]))
    out = eager_or_compiled(conv, tp.Tensor(x))
    expected = np_conv_transpose(
        x, p["weight"], p.get("bias"), args["stride"], args["padding"], args["dilation"], groups
    )
    assert out.shape == expected.shape
    assert np.allclose(np.from_dlpack(out), expected, atol=1e-4)


def test_conv_transpose_inverts_conv_shapes():
    down = tp.Conv(1, 1, (2, 2), stride=(2, 2), padding=((1, 1), (1, 1)), bias=False)
    up = tp.ConvTranspose(1, 1, (2, 2), stride=(2, 2), padding=((1, 1), (1, 1)), bias=False)
    down.initialize_dummy_parameters()
    up.initialize_dummy_parameters()
    x = tp.ones((1, 1, 4, 4))
    assert up(down(x)).shape == (1, 1, 4, 4)


def test_conv_dynamic_shapes():
    conv = tp.Conv(2, 3, (3, 3), padding=((1, 1), (1, 1)), stride=(2, 1))
    p = load_random(conv)
    exe = tp.compile(conv, args=[tp.InputInfo(((1, 1, 2), 2, (4, 6, 8), 5), tp.float32)])
    for shape in [(1, 2, 4, 5), (2, 2, 7, 5)]:
        x = rand(*shape)
        expected = np_conv(x, p["weight"], p["bias"], (2, 1), ((1, 1), (1, 1)), (1, 1), 1)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), expected, atol=1e-4)


@pytest.mark.parametrize(
    "make,info,shape",
    [
        (
            lambda: tp.ConvTranspose(2, 4, (3, 3), stride=(2, 2), padding=((1, 1), (0, 1))),
            ((1, 2, 3), 2, (3, 5, 8), (2, 4, 6)),
            (3, 2, 7, 3),
        ),
        (lambda: tp.GroupNorm(2, 4), ((1, 2, 4), 4, (2, 5, 8), 2), (3, 4, 7, 2)),
    ],
)
def test_dynamic_shapes_match_eager(make, info, shape):
    layer = make()
    load_random(layer)
    exe = tp.compile(layer, args=[tp.InputInfo(info, tp.float32)])
    x = tp.Tensor(rand(*shape))
    assert np.allclose(np.from_dlpack(exe(x)), np.from_dlpack(layer(x)), atol=1e-5)


def test_conv_errors():
    conv = tp.Conv(3, 4, (3, 3))
    conv.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException) as info:
        conv(tp.ones((1, 2, 5, 5)))  # MARK-conv
    assert "expects 3 input channels" in str(info.value)
    assert f"{__file__}:{_line_of('MARK-conv')}" in str(info.value)
    with pytest.raises(tp.TripyException, match=r"expects an input of rank 4 \(\[N, C, \*spatial\]\)"):
        conv(tp.ones((3, 5, 5)))
    with pytest.raises(tp.TripyException, match="output would be empty along spatial dim 0"):
        conv(tp.ones((1, 3, 2, 5)))
    with pytest.raises(tp.TripyException, match="has float32 parameters, but its input has dtype float16"):
        conv(tp.ones((1, 3, 5, 5), dtype=tp.float16))
    with pytest.raises(tp.TripyException, match=r"groups \(2\) must divide both in_channels \(3\)"):
        tp.Conv(3, 4, (3,), groups=2)
    with pytest.raises(tp.TripyException, match="argument 'padding' must be a sequence of a sequence of int"):
        tp.Conv(3, 4, (3, 3), padding=(1, 1))
    with pytest.raises(tp.TripyException, match="padding must be a sequence of 2"):
        tp.Conv(3, 4, (3, 3), padding=((1, 1),))
    with pytest.raises(tp.TripyException, match="kernel_dims must be a sequence of 1 to 3 ints"):
        tp.ConvTranspose(3, 4, (1, 1, 1, 1))
    with pytest.raises(tp.TripyException, match="stride must be a sequence of 2"):
        tp.ConvTranspose(3, 4, (2, 2), stride=(1, 0))


# ---- quantized Linear ----------------------------------------------------------------------------------------
def _quant(x, scale, lo, hi):
    return np.clip(np.round(x / scale), lo, hi) * scale


@pytest.mark.parametrize("quant_dtype,dim", [("int8", None), ("int8", 0), ("int8", 1), ("float8", None), ("float8", 0)])
def test_linear_quantized(eager_or_compiled, quant_dtype, dim):
    if not hasattr(tp, "quantize"):
        pytest.skip("tp.quantize is not available")
    qdt = getattr(tp, quant_dtype)
    linear = tp.Linear(8, 4, quant_dtype=qdt, weight_quant_dim=dim)
    assert set(linear.state_dict()) == {"weight", "bias", "weight_scale", "input_scale"}
    w, b = rand(4, 8), rand(4)
    amax = np.abs(w).max() if dim is None else np.abs(w).max(axis=1 - dim)
    qmax = 127.0 if quant_dtype == "int8" else 448.0
    scale = (amax / qmax).astype(np.float32)
    missing, _ = linear.load_state_dict({"weight": w, "bias": b, "weight_scale": scale})  # input_scale is optional
    assert not missing
    x = rand(3, 8)
    out = np.from_dlpack(eager_or_compiled(linear, tp.Tensor(x)))
    s = scale if dim is None else (scale[:, None] if dim == 0 else scale[None, :])
    if quant_dtype == "int8":
        wq = _quant(w, s, -128, 127)
        assert np.allclose(out, x @ wq.T + b, atol=1e-5)
    else:  # float8 e4m3: a relative error of at most 2**-4 per weight
        assert np.allclose(out, x @ w.T + b, atol=0.1)
        assert not np.allclose(out, x @ w.T + b, atol=1e-6)


def test_linear_int8_with_input_scale(eager_or_compiled):
    if not hasattr(tp, "quantize"):
        pytest.skip("tp.quantize is not available")
    linear = tp.Linear(8, 4, quant_dtype=tp.int8, weight_quant_dim=0)
    w, b, x = rand(4, 8), rand(4), rand(3, 8)
    w_scale = (np.abs(w).max(axis=1) / 127).astype(np.float32)
    x_scale = np.array(np.abs(x).max() / 127, np.float32)
    linear.load_state_dict({"weight": w, "bias": b, "weight_scale": w_scale, "input_scale": x_scale})
    out = np.from_dlpack(eager_or_compiled(linear, tp.Tensor(x)))
    expected = _quant(x, x_scale, -128, 127) @ _quant(w, w_scale[:, None], -128, 127).T + b
    assert np.allclose(out, expected, atol=1e-5)


def test_linear_int4_blockwise(eager_or_compiled):
    if not hasattr(tp, "quantize"):
        pytest.skip("tp.quantize is not available")
    linear = tp.Linear(8, 4, quant_dtype=tp.int4)
    w, b = rand(4, 8), rand(4)
    block = 2
    scale = (np.abs(w).reshape(2, block, 8).max(axis=1) / 7).astype(np.float32)  # [out / block, in]
    linear.load_state_dict({"weight": w, "bias": b, "weight_scale": scale})
    x = rand(3, 8)
    out = np.from_dlpack(eager_or_compiled(linear, tp.Tensor(x)))
    wq = _quant(w, np.repeat(scale, block, axis=0), -8, 7)
    assert np.allclose(out, x @ wq.T + b, atol=1e-5)
    assert not np.allclose(out, x @ w.T + b, atol=1e-3)


@pytest.mark.parametrize("weight_quant_dim", [None, 0, 1])
def test_linear_int4_per_tensor_and_per_channel(eager_or_compiled, weight_quant_dim):
    linear = tp.Linear(8, 4, quant_dtype=tp.int4, weight_quant_dim=weight_quant_dim)
    w, b, x = rand(4, 8), rand(4), rand(3, 8)
    scale = (
        np.array(np.abs(w).max() / 7, np.float32)
        if weight_quant_dim is None
        else (np.abs(w).max(axis=1 - weight_quant_dim) / 7).astype(np.float32)
    )
    linear.load_state_dict({"weight": w, "bias": b, "weight_scale": scale})
    out = np.from_dlpack(eager_or_compiled(linear, tp.Tensor(x)))
    broadcast = scale if weight_quant_dim != 0 else scale[:, None]
    assert np.allclose(out, x @ _quant(w, broadcast, -8, 7).T + b, atol=1e-5)


def test_linear_int4_scale_shape_error():
    linear = tp.Linear(8, 4, quant_dtype=tp.int4)
    linear.load_state_dict({"weight": rand(4, 8), "bias": rand(4), "weight_scale": rand(3, 8)})
    with pytest.raises(
        tp.TripyException,
        match=r"block-wise scaling \(a 2-D scale\) needs .* a scale \[blocks, D1\] "
        r"whose blocks divide D0",
    ):
        linear(tp.ones((1, 8)))


def test_linear_quantization_args():
    with pytest.raises(tp.TripyException, match="quant_dtype must be one of int8, float8, int4"):
        tp.Linear(2, 2, quant_dtype=tp.int32)
    linear = tp.Linear(2, 2, quant_dtype=tp.int8)
    assert linear.state_dict()["weight_scale"].shape == ()


# ---- a small convnet, channels-last inside (the pass tripy_backend/passes/channels_last.py) -------------------------------
PAD1 = ((1, 1), (1, 1))


class SmallNet(tp.Module):
    """conv-BatchNorm-relu, max pool, conv + residual, concatenation, GroupNorm-silu, transposed conv, a skip
    connection, a 1x1 conv and average pool: a ResNet block and a U-Net's up path in miniature."""

    def __init__(self):
        super().__init__()
        self.conv1 = tp.Conv(3, 8, (3, 3), padding=PAD1, bias=False)
        self.bn = tp.BatchNorm(8)
        self.conv2 = tp.Conv(8, 8, (3, 3), padding=PAD1)
        self.gn = tp.GroupNorm(4, 16)
        self.up = tp.ConvTranspose(16, 8, (2, 2), stride=(2, 2))
        self.conv3 = tp.Conv(16, 4, (1, 1))

    def forward(self, x):
        a = tp.relu(self.bn(self.conv1(x)))
        p = tp.maxpool(a, (2, 2), stride=(2, 2))
        b = self.conv2(p) + p
        c = tp.silu(self.gn(tp.concatenate([b, p], dim=1)))
        d = tp.concatenate([self.up(c), a], dim=1)
        return tp.avgpool(self.conv3(d), (2, 2), stride=(2, 2))


def np_small_net(x, p):
    a = np_conv(x, p["conv1.weight"], None, (1, 1), PAD1, (1, 1), 1)
    a = (a - per_channel(p["bn.running_mean"], 4)) / np.sqrt(per_channel(p["bn.running_var"], 4) + 1e-5)
    a = np.maximum(a * per_channel(p["bn.weight"], 4) + per_channel(p["bn.bias"], 4), 0)
    n, ch, h, w = a.shape
    pooled = a.reshape(n, ch, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    b = np_conv(pooled, p["conv2.weight"], p["conv2.bias"], (1, 1), PAD1, (1, 1), 1) + pooled
    c = np.concatenate([b, pooled], axis=1)
    c = np_normalize(c.reshape(n, 4, -1), (2,), 1e-5).reshape(c.shape)
    c = c * per_channel(p["gn.weight"], 4) + per_channel(p["gn.bias"], 4)
    c = c / (1 + np.exp(-c))
    up = np_conv_transpose(c, p["up.weight"], p["up.bias"], (2, 2), ((0, 0), (0, 0)), (1, 1), 1)
    d = np.concatenate([up, a], axis=1)
    out = np_conv(d, p["conv3.weight"], p["conv3.bias"], (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    return out.reshape(n, 4, h // 2, 2, w // 2, 2).mean(axis=(3, 5))


def small_net():
    net = SmallNet()
    params = load_random(net, positive=("bn.running_var",))
    return net, params


def test_small_convnet(eager_or_compiled):
    net, params = small_net()
    x = rand(2, 3, 8, 8)
    out = eager_or_compiled(net, tp.Tensor(x))
    np.testing.assert_allclose(np.from_dlpack(out), np_small_net(x, params), rtol=1e-4, atol=1e-4)


def test_groupnorm_after_a_convolution_sums_by_products(eager_or_compiled, logged):
    # Channels-last, the GroupNorm's sums run over H, W and the channels of a group, which the groups separate: on
    # 40x40 images XLA:CPU would take them as windowed sums, the pass sums-as-products makes them products
    conv, gn = tp.Conv(3, 16, (3, 3), padding=PAD1), tp.GroupNorm(4, 16)
    p, q = load_random(conv), load_random(gn)
    x = rand(2, 3, 40, 40)
    c = np_conv(x, p["weight"], p["bias"], (1, 1), PAD1, (1, 1), 1)
    expected = np_normalize(c.reshape(2, 4, -1), (2,), 1e-5).reshape(c.shape)
    expected = expected * per_channel(q["weight"], 4) + per_channel(q["bias"], 4)
    out, log = logged(lambda: np.from_dlpack(eager_or_compiled(lambda t: gn(conv(t)), tp.Tensor(x))))
    if kernels.enabled() and kernels.has(kernels.GROUP_NORM):  # (tripy-kernels' GroupNorm takes both sums: group-norms)
        assert "group-norms: 1 GroupNorm(s) as calls to tripy-kernels" in log
    else:
        assert "sums-as-products: 2 sum(s) as products with ones" in log  # (the mean's and the variance's)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("setting, transposes", [("1", 1), ("0", None)])
def test_transposes_cancel_between_convolutions(monkeypatch, logged, setting, transposes):
    monkeypatch.setenv("TRIPY_XLA_CPU_CHANNELS_LAST", setting)
    net, params = small_net()
    x = rand(1, 3, 8, 8)
    exe, log = logged(lambda: tp.compile(net, args=[tp.InputInfo(x.shape, tp.float32)]))
    if transposes is None:  # turned off: programs as tripy writes them
        assert "channels-last" not in log
    else:  # 4 convolutions: only the result goes back to [N, C, H, W]
        assert f"channels-last: 4 convolution(s), {transposes} transpose(s) of their results left" in log
    np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), np_small_net(x, params), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bias", [False, True])
def test_batchnorm_folds_into_the_convolution_before_it(bias):
    conv, bn = tp.Conv(16, 32, (3, 3), padding=PAD1, bias=bias), tp.BatchNorm(32)
    p, q = load_random(conv), load_random(bn, positive=("running_var",))
    x = rand(1, 16, 8, 8)
    exe = tp.compile(lambda t: bn(conv(t)), args=[tp.InputInfo(x.shape, tp.float32)])
    activation_products = [
        line for line in exe.stablehlo.splitlines() if "stablehlo.multiply" in line and "tensor<1x32x8x8xf32>" in line
    ]
    assert bool(activation_products) is bias  # folded: the scaled kernel is computed once, at compile time
    y = np_conv(x, p["weight"], p.get("bias"), (1, 1), PAD1, (1, 1), 1)
    y = (y - per_channel(q["running_mean"], 4)) / np.sqrt(per_channel(q["running_var"], 4) + 1e-5)
    expected = y * per_channel(q["weight"], 4) + per_channel(q["bias"], 4)
    np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), expected, rtol=1e-4, atol=1e-4)
