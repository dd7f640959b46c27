"""Code in the style of nvtripy 0.1.7's documented examples (its guides and the examples in its API
docstrings), written against tripy with only the import changed, ``"gpu"`` read as the CPU and CuPy/PyTorch
references replaced by NumPy: the same calls, in the same order, must run and give NumPy's numbers.
(The full list of nvtripy examples that were run, and the ones that cannot run here, is in
docs/nvtripy_differences.md.)"""

import io
import os

import numpy as np

import tripy as tp


def np_of(t):
    return np.from_dlpack(t)


# ---- guides: introduction and compiler ----------------------------------------------------------------------
def test_functional_style_and_a_compiled_module():
    c = tp.ones((2, 3)) + tp.ones((2, 3))
    assert tp.equal(c, tp.full((2, 3), 2.0))

    class MLP(tp.Module):
        def __init__(self, embd_size, dtype=tp.float32):
            super().__init__()
            self.c_fc = tp.Linear(embd_size, 4 * embd_size, bias=True, dtype=dtype)
            self.c_proj = tp.Linear(4 * embd_size, embd_size, bias=True, dtype=dtype)

        def forward(self, x):
            return self.c_proj(tp.gelu(self.c_fc(x)))

    mlp = MLP(embd_size=2)
    mlp.initialize_dummy_parameters()
    inp = tp.iota(shape=(1, 2), dim=1, dtype=tp.float32)
    fast_mlp = tp.compile(mlp, args=[tp.InputInfo(shape=(1, 2), dtype=tp.float32)])
    assert np.allclose(np_of(fast_mlp(inp.eval())), np_of(mlp(inp)), atol=1e-6)


class GEGLU(tp.Module):
    def __init__(self, in_dim, out_dim):
        self.proj = tp.Linear(in_dim, out_dim * 2)
        self.out_dim = out_dim

    def forward(self, x):
        proj = self.proj(x)
        x, gate = tp.split(proj, 2, proj.rank - 1)
        return x * tp.gelu(gate)


def test_compiler_guide_geglu(tmp_path):
    layer = GEGLU(in_dim=2, out_dim=1)
    layer.load_state_dict({"proj.weight": tp.ones((2, 2)), "proj.bias": tp.ones((2,))})
    fast_geglu = tp.compile(layer, args=[tp.InputInfo(shape=((1, 2, 4), 2), dtype=tp.float32)])
    x = np.array([[1.0, 2.0], [2.0, 3.0]], np.float32)
    h = x.sum(1, keepdims=True) + 1  # both projections: ones weights, ones bias
    gelu = 0.5 * h * (1 + np.vectorize(__import__("math").erf)(h / np.sqrt(2)))
    assert np.allclose(np_of(fast_geglu(tp.Tensor(x, dtype=tp.float32).eval())), h * gelu, rtol=1e-5)
    assert fast_geglu(tp.ones((1, 2)).eval()).shape == (1, 1)

    path = os.path.join(tmp_path, "out", "executable.json")  # a missing directory is created, as in nvtripy
    fast_geglu.save(path)
    assert np.allclose(np_of(tp.Executable.load(path)(tp.Tensor(x))), h * gelu, rtol=1e-5)


def test_named_dimensions_and_input_info_bounds():
    batch = tp.NamedDimension("batch", 1, 2, 4)
    fast_add = tp.compile(
        lambda a, b: a + b,
        args=[tp.InputInfo(shape=(batch, 2), dtype=tp.float32), tp.InputInfo(shape=(batch, 2), dtype=tp.float32)],
    )
    assert fast_add(tp.ones((3, 2)), tp.ones((3, 2))).tolist() == [[2.0, 2.0]] * 3
    window = tp.NamedDimension("window_size", 3, 5, 7)
    info = tp.InputInfo((1, window, window), dtype=tp.float32)
    assert (info.shape_bounds.min, info.shape_bounds.opt, info.shape_bounds.max) == ((1, 3, 3), (1, 5, 5), (1, 7, 7))
    assert info.dimension_names == {1: "window_size", 2: "window_size"}
    dim_inp = tp.DimensionInputInfo((1, 2, 3))
    assert (dim_inp.min, dim_inp.opt, dim_inp.max) == (1, 2, 3)


def test_dimension_input_reshape():
    def func(x, y):
        return tp.reshape(x + x, (-1, y))

    exe = tp.compile(
        func, args=[tp.InputInfo(shape=((2, 4, 6), 4), dtype=tp.float32), tp.DimensionInputInfo(value_bounds=(1, 2, 3))]
    )
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    assert np.array_equal(np_of(exe(tp.Tensor(x), tp.DimensionSize(2))), (x + x).reshape(-1, 2))


def test_baked_constants_and_streams():
    exe = tp.compile(lambda a, b: a + b, args=[tp.InputInfo((1,), dtype=tp.float32), tp.ones((1,))])
    exe.stream = tp.Stream()
    assert exe(tp.ones((1,)).eval()).tolist() == [2.0]
    exe.stream.synchronize()
    assert tp.Stream() != tp.Stream() and tp.default_stream() is tp.default_stream()


# ---- modules --------------------------------------------------------------------------------------------
def test_module_state_dict_and_parameters():
    class MyModule(tp.Module):
        def __init__(self):
            super().__init__()
            self.param = tp.ones((2,), dtype=tp.float32)
            self.linear1 = tp.Linear(2, 2)
            self.linear2 = tp.Linear(2, 2)

    module = MyModule()
    assert set(module.state_dict()) == {"param", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"}
    assert [name for name, _ in module.named_children()] == ["linear1", "linear2"]
    assert not isinstance(module.linear1.weight, tp.Tensor)
    module.initialize_dummy_parameters()
    assert isinstance(module.linear1.weight, tp.Tensor)
    module.load_state_dict({"param": tp.zeros((2,), dtype=tp.float32)}, strict=False)
    assert np.array_equal(np_of(module.state_dict()["param"]), np.zeros(2, np.float32))

    class AddBias(tp.Module):
        def __init__(self):
            super().__init__()
            self.bias = tp.Tensor([1.0, 1.0], dtype=tp.float32)

        def forward(self, x):
            return x + self.bias

    assert np.array_equal(np_of(AddBias()(tp.Tensor([1.0, 1.0], dtype=tp.float32))), [2.0, 2.0])


def test_sequential_forms():
    model = tp.Sequential({"layer1": tp.Linear(1, 3), "layer2": tp.Linear(3, 2)})
    model.initialize_dummy_parameters()
    assert model(tp.Tensor([1.0])).shape == (1, 2)  # a 1-D input gives nvtripy's [1, out_features]
    pooled = tp.Sequential(
        tp.Conv(in_channels=2, out_channels=2, kernel_dims=(1, 1), stride=(1, 1)),
        lambda x: tp.avgpool(x, kernel_dims=(2, 2), stride=(1, 1)),
    )
    pooled.initialize_dummy_parameters()
    assert pooled(tp.ones((1, 2, 2, 2), dtype=tp.float32)).shape == (1, 2, 1, 1)
    model = tp.Sequential(tp.Linear(1, 64), tp.Linear(64, 128))
    assert len(model) == 2 and model[1] is list(model)[1]
    assert [name for name, _ in model.named_children()] == ["0", "1"]


def test_norm_layers_with_assigned_parameters():
    layer_norm = tp.LayerNorm(3)
    layer_norm.weight = tp.iota(layer_norm.weight.shape)
    layer_norm.bias = tp.iota(layer_norm.bias.shape)
    x = np.tile(np.arange(3, dtype=np.float32), (2, 1))
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * x[0] + x[0]
    assert np.allclose(np_of(layer_norm(tp.iota((2, 3), dim=1))), expected, atol=1e-5)

    group_norm = tp.GroupNorm(2, 4)
    group_norm.weight = tp.ones(group_norm.weight.shape)
    group_norm.bias = tp.zeros(group_norm.bias.shape)
    out = np_of(group_norm(tp.iota((1, 4, 1, 1), dim=1))).reshape(2, 2)
    assert np.allclose(out, [[-1.0, 1.0], [-1.0, 1.0]], atol=1e-4)  # each group of 2 normalized

    batch_norm = tp.BatchNorm(2)
    batch_norm.initialize_dummy_parameters()
    assert batch_norm(tp.iota((1, 2, 1, 1))).shape == (1, 2, 1, 1)


def test_conv_and_embedding():
    x = np.arange(18, dtype=np.float32).reshape(1, 2, 3, 3)
    conv = tp.Conv(2, 2, (3, 3), groups=2, bias=False, dtype=tp.float32)  # depthwise
    conv.initialize_dummy_parameters()
    w = np_of(conv.weight)
    expected = (x[0] * w[:, 0]).sum((1, 2)).reshape(1, 2, 1, 1)
    assert np.allclose(np_of(conv(tp.reshape(tp.arange(18, dtype=tp.float32), (1, 2, 3, 3)))), expected, rtol=1e-5)
    dilated = tp.Conv(1, 1, (2, 2), dilation=(2, 2), bias=False, dtype=tp.float32)
    dilated.initialize_dummy_parameters()
    k = np_of(dilated.weight)[0, 0]
    img = np.arange(9, dtype=np.float32).reshape(3, 3)
    out = np_of(dilated(tp.Tensor(img.reshape(1, 1, 3, 3))))
    assert np.allclose(out.reshape(()), (img[::2, ::2] * k).sum(), rtol=1e-5)

    embedding = tp.Embedding(num_embeddings=4, embedding_dim=6)
    embedding.initialize_dummy_parameters()
    looked_up = embedding(tp.Tensor([0, 2], dtype=tp.int32))
    assert np.array_equal(np_of(looked_up), np_of(embedding.weight)[[0, 2], :])


# ---- functions ------------------------------------------------------------------------------------------
def test_initializers_and_shape_functions():
    assert np.array_equal(np_of(tp.arange(0.5, 2.5)), np.arange(0.5, 2.5, dtype=np.float32))
    assert tp.allclose(tp.arange(2.3, 0.8, -0.2), tp.Tensor(np.arange(2.3, 0.8, -0.2, dtype=np.float32)))
    assert np.array_equal(np_of(tp.arange(5)), np.arange(5, dtype=np.float32))
    inp = tp.reshape(tp.arange(4, dtype=tp.int32), (2, 2))
    host = np_of(tp.copy(inp, device=tp.device("cpu")))
    assert np.array_equal(np_of(tp.repeat(inp, 2, dim=1)), np.repeat(host, 2, 1))
    cube = tp.iota((2, 3, 4, 5), dtype=tp.float32)
    assert np.array_equal(np_of(tp.flatten(cube, start_dim=1, end_dim=2)), np_of(cube).reshape(2, -1, 5))
    padded = tp.pad(tp.reshape(tp.arange(6, dtype=tp.float32), (2, 3)), ((1, 0), (0, 1)))
    assert np.array_equal(np_of(padded), np.pad(np.arange(6, dtype=np.float32).reshape(2, 3), ((1, 0), (0, 1))))
    sliced = tp.reshape(tp.arange(6, dtype=tp.float32), (1, 2, 3, 1))[:, 1:2, :-1, 0]
    assert np.array_equal(np_of(sliced), np.arange(6, dtype=np.float32).reshape(1, 2, 3, 1)[:, 1:2, :-1, 0])
    assert np.array_equal(np_of(tp.arange(10)[8:2:-1]), np.arange(10)[8:2:-1])


def test_gather_masked_fill_topk_cumsum():
    for shape, idx in [((3,), [0, 2]), ((3, 3), [[0, 2], [2, 1]])]:
        data, index = tp.iota(shape) + 4, tp.Tensor(idx)
        assert np.array_equal(np_of(tp.gather(data, dim=0, index=index)), np.take(np_of(data), idx, axis=0))
    filled = tp.masked_fill(tp.zeros([2, 2]), tp.Tensor([[True, False], [True, True]]), -1.0)
    assert np.array_equal(np_of(filled), [[-1, 0], [-1, -1]])
    values, indices = tp.topk(tp.iota((1, 5), dim=1) + 2.5, k=2, dim=1)
    assert tp.equal(values, tp.Tensor([[6.5, 5.5]])) and tp.equal(indices, tp.Tensor([[4, 3]]))
    desc = tp.reshape(tp.arange(9, 0, step=-1, dtype=tp.float32), (3, 3))
    assert np.array_equal(np_of(tp.cumsum(desc, dim=0)), np.cumsum(np_of(desc), axis=0))


def test_resize_pool_softmax_quantize():
    img = tp.reshape(tp.arange(16, dtype=tp.float32), (1, 1, 4, 4))
    nearest = np.arange(16, dtype=np.float32).reshape(4, 4).repeat(2, 0).repeat(2, 1)
    assert np.array_equal(np_of(tp.resize(img, "nearest", output_shape=(1, 1, 8, 8)))[0, 0], nearest)
    assert np.array_equal(np_of(tp.resize(img, "nearest", scales=(1, 1, 2, 2)))[0, 0], nearest)
    pooled = np_of(tp.maxpool(img, kernel_dims=(2, 2)))[0, 0]
    assert np.array_equal(pooled, np.arange(16, dtype=np.float32).reshape(4, 4)[1:, 1:])
    soft = tp.softmax(tp.iota([2, 2], dtype=tp.float32), dim=0)
    column = np.exp([0.0, 1.0], dtype=np.float32) / np.exp([0.0, 1.0], dtype=np.float32).sum()
    assert tp.allclose(soft, tp.Tensor(np.stack([column, column], axis=1)))
    scale = [0.99872, 0.96125]
    q = tp.quantize(tp.Tensor([[0, 1, 2], [3, 4, 5]], dtype=tp.float32), scale, tp.int8, dim=0)
    assert np.array_equal(
        np_of(q), (np.arange(6, dtype=np.float32).reshape(2, 3) / np.reshape(scale, (2, 1))).astype(np.int8)
    )
    block = tp.dequantize(
        tp.quantize(tp.Tensor([[0, 1], [2, 3]], dtype=tp.float32), [[1.0, 1.0]], tp.int4), [[1.0, 1.0]], tp.float32
    )
    assert np.array_equal(np_of(block), [[0, 1], [2, 3]])


def test_logger_verbosities():
    old, color, stream = tp.logger.verbosity, tp.logger.enable_color, tp.logger.stream
    tp.logger.enable_color, tp.logger.stream = False, io.StringIO()
    try:
        tp.logger.verbose("not logged")
        with tp.logger.use_verbosity("verbose"):
            tp.logger.verbose("logged")
        tp.logger.verbosity = {"frontend": {"verbose", "timing"}}
        tp.logger.verbosity = old
        with tp.logger.indent(2):
            tp.logger.log("indented", "info")
        out = tp.logger.stream.getvalue()
    finally:
        tp.logger.verbosity, tp.logger.enable_color, tp.logger.stream = old, color, stream
    assert "logged" in out and "not logged" not in out and "  indented" in out
