"""Imported models are located at the model's own code: the tripy ops of a PyTorch node at the line of the PyTorch
module that made it (its FX node's ``stack_trace``), those of an ONNX node at the node (its name and type), so that
``tp.profile``, ``tp.visualize`` and error reports name them rather than the line that called the module."""

import inspect
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import tripy as tp  # noqa: E402
from tripy_backend import _xla  # noqa: E402

N = 512


class HotSpot(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(N, N) / N)
        self.head = torch.nn.Linear(N, 4)

    def forward(self, x):
        small = torch.tanh(x) * 0.5
        big = small @ self.w
        return self.head(big)


FORWARD = inspect.getsourcelines(HotSpot.forward)[1]
BIG_LINE, SMALL_LINE, HEAD_LINE = FORWARD + 2, FORWARD + 1, FORWARD + 3


def _per_op(prof):
    if prof.ops_us == 0 and _xla.has_classic_cpu_runtime():
        pytest.skip("this jaxlib's XLA:CPU (classic runtime) reports no per-op times")


@pytest.fixture(scope="module")
def imported():
    torch.manual_seed(0)
    model = tp.from_torch(torch.export.export(HotSpot().eval(), (torch.randn(N, N),)))
    x = tp.Tensor(np.random.default_rng(0).random((N, N), dtype=np.float32))
    return model, x


def test_a_torch_model_profile_names_its_module_lines(imported):
    model, x = imported
    exe = tp.compile(model, args=model.input_infos)
    prof = tp.profile(exe, x, calls=3)
    _per_op(prof)
    # (located, not ranked: under load the small line's fusion can take longer than the matmul)
    (big,) = [r for r in prof.rows() if r.where.line == BIG_LINE]
    assert big.where.file == __file__, str(prof)
    assert "DotOp" in big.tripy_ops and big.where.code.strip() == "big = small @ self.w"
    assert f"{__file__}:{BIG_LINE}  big = small @ self.w" in str(prof)
    # nn.Linear's F.linear is PyTorch's own code: its ops count at the model's line that called the layer
    assert {r.where.line for r in prof.rows()} == {SMALL_LINE, BIG_LINE, HEAD_LINE}, str(prof)
    assert {r.where.file for r in prof.rows()} == {__file__}


def test_a_torch_model_evaluated_eagerly_is_located_too(imported):
    model, x = imported
    prof = tp.profile(model, x, calls=2)
    _per_op(prof)
    assert {r.where.file for r in prof.rows()} == {__file__}
    assert {r.where.line for r in prof.rows()} == {SMALL_LINE, BIG_LINE, HEAD_LINE}, str(prof)
    (big,) = [r for r in prof.rows() if r.where.line == BIG_LINE]
    assert big.tripy_ops == ["DotOp"], str(prof)


def test_the_graphs_show_the_torch_lines(imported, tmp_path):
    model, x = imported
    exe = tp.compile(model, args=model.input_infos)
    sources = _sources(tp.visualize(exe, save_to=str(tmp_path / "g")))
    assert f"{__file__}:{BIG_LINE}  big = small @ self.w" in sources, sources


def _sources(folder):
    """The ``source`` of every node of the graphs that tp.visualize saved in `folder`."""
    with open(os.path.join(folder, "graphs.json")) as f:
        return {
            node["attrs"]["source"] if isinstance(node["attrs"], dict) else _attr(node["attrs"], "source")
            for graph in json.load(f)["graphs"]
            for node in graph["nodes"]
            if _has_source(node)
        }


def _has_source(node):
    attrs = node.get("attrs", [])
    return "source" in attrs if isinstance(attrs, dict) else any(a.get("key") == "source" for a in attrs)


def _attr(attrs, key):
    return next(a["value"] for a in attrs if a.get("key") == key)


def _onnx_model():
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.random.default_rng(0).random((N, N), dtype=np.float32) / N, "w")
    nodes = [
        helper.make_node("Tanh", ["x"], ["t"], name="pre/Tanh"),
        helper.make_node("MatMul", ["t", "w"], ["y"], name="layer1/MatMul"),
        helper.make_node("Relu", ["y"], ["z"]),  # (no name: labeled by what it makes)
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, N])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [N, N])
    graph = helper.make_graph(nodes, "hot_spot", [x], [z], [w])
    return tp.from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))


def test_an_onnx_model_profile_names_its_nodes():
    model = _onnx_model()
    exe = tp.compile(model, args=model.input_infos)
    prof = tp.profile(exe, tp.Tensor(np.ones((N, N), np.float32)), calls=3)
    _per_op(prof)
    top = prof.rows()[0]
    assert (top.where.file, top.where.line) == ("<onnx hot_spot>", 2) and "DotOp" in top.tripy_ops
    assert "<onnx hot_spot>:2  node 'layer1/MatMul' (MatMul)" in str(prof), str(prof)
    labels = {r.label for r in prof.rows()}
    assert "<onnx hot_spot>:3  the node making 'z' (Relu)" in labels, labels
    assert all(label.startswith("<onnx hot_spot>:") for label in labels), labels


def test_the_graphs_show_the_onnx_nodes(tmp_path):
    model = _onnx_model()
    exe = tp.compile(model, args=model.input_infos)
    assert "<onnx hot_spot>:2  node 'layer1/MatMul' (MatMul)" in _sources(tp.visualize(exe, save_to=str(tmp_path)))


def test_an_error_in_an_imported_step_points_at_the_node():
    from onnx import TensorProto, helper

    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="bad/MatMul")]
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "mismatch", [a, b], [y])
    model = tp.from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    with pytest.raises(tp.TripyException, match="(?s)<onnx mismatch>:1.*node 'bad/MatMul' \\(MatMul\\)"):
        model(tp.ones((2, 3)), tp.ones((4, 5))).eval()
