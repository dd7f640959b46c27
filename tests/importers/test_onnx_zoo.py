"""tp.from_onnx on a zoo of models exported with torch.onnx.export(..., dynamo=True) (Hugging Face transformers from
small configs, random weights, and small torch.nn models): each imports, matches ONNX Runtime eagerly, compiles once
for its dynamic dims (calls at three sizes compile nothing and match ONNX Runtime), and loads in a new process
without compiling. Plus the importer's error paths: unsupported operators, undeclared and misnamed dims.

The ranges are small (a few bounded programs per model) to keep the file fast on a small CI machine."""

import io
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
transformers = pytest.importorskip("transformers")
pytest.importorskip("onnxscript")

# The load test reads what each model's test saved (in this process): with pytest-xdist, one worker runs them all
# (``--dist loadgroup``).
pytestmark = pytest.mark.xdist_group("onnx_zoo")

import tripy as tp  # noqa: E402
import tripy_backend  # noqa: E402
from tripy_importers import from_onnx  # noqa: E402

TEXT_DIMS = {"batch": (1, 2, 2), "seq": (4, 8, 8)}
TEXT_SIZES = [(1, 4), (2, 6), (2, 8)]
IMAGE_DIMS = {"batch": (1, 2, 4)}
IMAGE_SIZES = [1, 3, 4]
VOCAB = 99
_TEXT = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=37,
    max_position_embeddings=64,
)
_VISION = dict(
    image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37
)


class _Hidden(torch.nn.Module):
    """A transformers model's last hidden state as the one output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x).last_hidden_state


def _hf(config, model, **kw):
    return _Hidden(getattr(transformers, model)(getattr(transformers, config)(**kw)))


def _cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, stride=2, groups=2),
        torch.nn.Hardswish(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
        torch.nn.LogSoftmax(dim=-1),
    )


def _mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64), torch.nn.Linear(64, 16), torch.nn.Sigmoid()
    )


# name -> (a builder of the torch module, "text" (int64 token ids [batch, seq]), "image" ([batch, 3, 32, 32]) or
# "vector" ([batch, 32]))
MODELS = {
    "bert": (lambda: _hf("BertConfig", "BertModel", **_TEXT), "text"),
    "distilbert": (
        lambda: _hf(
            "DistilBertConfig",
            "DistilBertModel",
            vocab_size=VOCAB,
            dim=32,
            n_layers=2,
            n_heads=4,
            hidden_dim=37,
            max_position_embeddings=64,
        ),
        "text",
    ),
    "roberta": (lambda: _hf("RobertaConfig", "RobertaModel", **_TEXT), "text"),
    "gpt2": (
        lambda: _hf(
            "GPT2Config", "GPT2Model", vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64, use_cache=False
        ),
        "text",
    ),
    "llama": (lambda: _hf("LlamaConfig", "LlamaModel", num_key_value_heads=2, use_cache=False, **_TEXT), "text"),
    "qwen2": (lambda: _hf("Qwen2Config", "Qwen2Model", num_key_value_heads=2, use_cache=False, **_TEXT), "text"),
    "vit": (lambda: _hf("ViTConfig", "ViTModel", **_VISION), "image"),
    "resnet": (
        lambda: _hf(
            "ResNetConfig", "ResNetModel", embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic"
        ),
        "image",
    ),
    "convnext": (
        lambda: _hf("ConvNextConfig", "ConvNextModel", hidden_sizes=[16, 32], depths=[1, 1], num_stages=2),
        "image",
    ),
    "mobilenetv2": (
        lambda: _hf("MobileNetV2Config", "MobileNetV2Model", depth_multiplier=0.35, image_size=32),
        "image",
    ),
    "cnn": (_cnn, "image"),
    "mlp": (_mlp, "vector"),
}


def _input(kind, size, seed):
    rng = np.random.default_rng(seed)
    if kind == "text":
        return rng.integers(0, VOCAB, size).astype(np.int64)
    shape = (size, 3, 32, 32) if kind == "image" else (size, 32)
    return rng.standard_normal(shape).astype(np.float32)


def _sizes(kind):
    return TEXT_SIZES if kind == "text" else IMAGE_SIZES


def _export(name, path):
    build, kind = MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    batch = torch.export.Dim("batch", min=1, max=4)
    dynamic = {0: batch, 1: torch.export.Dim("seq", min=2, max=32)} if kind == "text" else {0: batch}
    example = torch.from_numpy(_input(kind, (2, 8) if kind == "text" else 2, 0))
    torch.onnx.export(model, (example,), str(path), dynamo=True, dynamic_shapes=({**dynamic},), verbose=False)


def _error(out, ref):
    return float(np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-30))


# Programs a model compiles at load, and why (none now). GPT-2's mask uses GatherND, which merged the two run-time
# dims (batch, seq) of its data into one: XLA's dynamic padder made that reshape a sort in the bounded program, and
# XLA:CPU (jaxlib 0.10) cannot serialize a sort, so that one program was saved as StableHLO and compiled at load.
# Since the trace keeps each size's arithmetic (``tripy_trace.symbolic``), GPT-2's programs all serialize.
LOAD_COMPILES: dict = {}

# name -> what the model's test measured, for the new-process check and the table it prints
RECORDS = {}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx_zoo")


@pytest.mark.parametrize("name", list(MODELS))
def test_zoo_model_imports_matches_and_compiles_once(name, root):
    kind = MODELS[name][1]
    path = root / f"{name}.onnx"
    _export(name, path)
    model = from_onnx(str(path), dims=TEXT_DIMS if kind == "text" else IMAGE_DIMS)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0].name

    def reference(x):
        return session.run(None, {feed: x})[0]

    x = _input(kind, (2, 8) if kind == "text" else 2, 1)
    eager = _error(np.from_dlpack(model(tp.Tensor(x))), reference(x))
    assert eager <= 1e-3, f"{name}: eager output differs from ONNX Runtime's by {eager:.2e} of its scale"

    started = time.perf_counter()
    exe = tp.compile(model, args=model.input_infos)
    seconds = time.perf_counter() - started
    before = tripy_backend.compilation_count()
    inputs = [_input(kind, size, 10 + i) for i, size in enumerate(_sizes(kind))]
    errors = [_error(np.from_dlpack(exe(tp.Tensor(x))), reference(x)) for x in inputs]
    compiles = tripy_backend.compilation_count() - before
    assert compiles == 0, f"{name}: calls inside the declared range compiled {compiles} program(s)"
    assert max(errors) <= 1e-3, f"{name}: compiled outputs differ from ONNX Runtime's: {errors}"

    exe.save(str(root / f"{name}.tpexe"))
    for i, x in enumerate(inputs):
        np.save(root / f"{name}-in{i}.npy", x)
        np.save(root / f"{name}-ref{i}.npy", reference(x))
    RECORDS[name] = dict(eager=eager, seconds=seconds, compiles=compiles, calls=len(inputs))


_LOAD_AND_CALL = textwrap.dedent("""
    import json, sys, numpy as np, tripy as tp, tripy_backend
    root, counts = sys.argv[1], {}
    for name, calls in json.loads(sys.argv[2]):
        before = tripy_backend.compilation_count()
        exe = tp.Executable.load(f"{root}/{name}.tpexe")
        for i in range(calls):
            x = np.load(f"{root}/{name}-in{i}.npy")
            np.save(f"{root}/{name}-out{i}.npy", np.from_dlpack(exe(tp.Tensor(x))))
        counts[name] = tripy_backend.compilation_count() - before
    print(json.dumps(counts))
""")


def test_zoo_loads_in_a_new_process_without_compiling(root):
    if len(RECORDS) < len(MODELS):
        pytest.skip("runs after every zoo model's test has passed")
    jobs = [(name, record["calls"]) for name, record in RECORDS.items()]
    env = dict(os.environ, TRIPY_CACHE_DIR="")  # (the persistent cache off: nothing could come from it)
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_CALL, str(root), json.dumps(jobs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout.splitlines()[-1])
    assert counts == {name: LOAD_COMPILES.get(name, 0) for name in RECORDS}, counts
    lines = ["model        import  eager err  compile s  calls: 0 compiles  after load (new process)"]
    for name, record in RECORDS.items():
        loaded = [
            _error(np.load(root / f"{name}-out{i}.npy"), np.load(root / f"{name}-ref{i}.npy"))
            for i in range(record["calls"])
        ]
        assert max(loaded) <= 1e-3, (name, loaded)
        lines.append(
            f"{name:<12} ok      {record['eager']:.1e}    {record['seconds']:>6.1f}     "
            f"yes ({record['calls']} sizes)      {counts[name]} compiles (max err {max(loaded):.1e})"
        )
    print("\n" + "\n".join(lines))


def _tiny_model(nodes, inputs, outputs, initializers=()):
    graph = onnx.helper.make_graph(nodes, "tiny", inputs, outputs, list(initializers))
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])


def _vector(name, dims):
    return onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, dims)


def test_unsupported_operators_are_reported_by_type_and_node_name_all_at_once():
    model = _tiny_model(
        [
            onnx.helper.make_node("Relu", ["x"], ["a"], name="first_relu"),
            onnx.helper.make_node("Einsum", ["a", "a"], ["b"], name="my_einsum", equation="i,i->i"),
            onnx.helper.make_node("Erfinv", ["b"], ["y"], name="strange_op", domain="com.example"),
        ],
        [_vector("x", ["n"])],
        [_vector("y", ["n"])],
    )
    with pytest.raises(tp.TripyException) as e:
        from_onnx(model)
    message = str(e.value)
    assert "2 operator(s)" in message
    assert "Einsum" in message and "node 'my_einsum'" in message
    assert "com.example.Erfinv" in message and "node 'strange_op'" in message


def test_a_symbolic_dim_missing_from_dims_gets_the_default_range_and_a_log_line():
    model = _tiny_model(
        [onnx.helper.make_node("Add", ["x", "y"], ["z"], name="add")],
        [_vector("x", ["n", 3]), _vector("y", ["n", 3])],
        [_vector("z", ["n", 3])],
    )
    old, tp.logger.stream = tp.logger.stream, io.StringIO()
    try:
        with tp.logger.use_verbosity("info"):
            m = from_onnx(model)
        log = tp.logger.stream.getvalue()
    finally:
        tp.logger.stream = old
    assert "symbolic dim 'n' has no range" in log and "(1, 64, 4096)" in log
    x, y = m.input_infos
    assert x.shape_bounds.min == y.shape_bounds.min == (1, 3) and x.shape_bounds.max == (4096, 3)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(np.from_dlpack(m(tp.Tensor(a), tp.Tensor(a))), a + a)


def test_dims_with_a_name_the_model_does_not_use_is_a_tripy_error():
    model = _tiny_model(
        [onnx.helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [_vector("x", ["batch", 4])],
        [_vector("y", ["batch", 4])],
    )
    with pytest.raises(tp.TripyException, match=r"dims names \['bach'\].*\n?.*batch"):
        from_onnx(model, dims={"bach": (1, 2, 8)})
    m = from_onnx(model, dims={"batch": (1, 2, 8)})
    assert m.input_infos[0].shape_bounds.max == (8, 4)
