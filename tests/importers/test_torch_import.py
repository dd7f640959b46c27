"""tp.from_torch on small programs: what the imported module holds (state names, shared memory, input infos, dim
names and ranges), PyTorch's type promotion, and the errors a user meets (unsupported operators with their source
lines, a wrong argument, a missing extra)."""

import io
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tripy as tp  # noqa: E402
from tripy_importers import report  # noqa: E402
from torch.export import Dim, export  # noqa: E402

HERE = os.path.basename(__file__)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.register_buffer("scale", torch.full((8,), 2.0))

    def forward(self, x, y):
        return self.norm(torch.relu(self.proj(x))) * self.scale + y.sum(-1, keepdim=True)


def _block():
    torch.manual_seed(0)
    return Block().eval()


def test_state_has_pytorch_names_and_shares_memory():
    model = _block()
    imported = tp.from_torch(model, args=(torch.randn(2, 4), torch.randn(2, 3)))
    state = imported.state_dict()
    assert list(state) == list(model.state_dict())
    weight = np.from_dlpack(state["proj.weight"])
    assert weight.ctypes.data == model.proj.weight.data_ptr()  # (DLPack: no copy)


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_matches_pytorch(mode):
    model = _block()
    x, y = torch.randn(2, 4), torch.randn(2, 3)
    imported = tp.from_torch(model, args=(x, y), dynamic_shapes=({0: Dim("batch", max=8)}, {0: Dim("batch", max=8)}))
    run = imported if mode == "eager" else tp.compile(imported, args=imported.input_infos)
    for n in (1, 5, 8) if mode == "compiled" else (2,):
        x, y = torch.randn(n, 4), torch.randn(n, 3)
        expected = model(x, y).detach().numpy()
        assert np.allclose(np.from_dlpack(run(tp.Tensor(x), tp.Tensor(y))), expected, atol=1e-5)


def test_input_infos_keep_dim_names_bounds_and_equalities():
    imported = tp.from_torch(
        _block(),
        args=(torch.randn(3, 4), torch.randn(3, 5)),
        dynamic_shapes=({0: Dim("batch", min=1, max=16)}, {0: Dim("batch", min=1, max=16), 1: Dim("cols", max=32)}),
    )
    x_info, y_info = imported.input_infos
    assert imported.input_names == ("x", "y")
    assert x_info.dimension_names == {0: "batch"} and y_info.dimension_names == {0: "batch", 1: "cols"}
    assert (x_info.shape_bounds.min, x_info.shape_bounds.max) == ((1, 4), (16, 4))
    assert y_info.shape_bounds.max == (16, 32) and y_info.shape_bounds.opt == (3, 5)
    assert x_info.dtype == tp.float32


def test_an_unbounded_dim_gets_the_default_range_and_says_so():
    out = io.StringIO()
    old = tp.logger.stream
    tp.logger.stream = out
    try:
        imported = tp.from_torch(
            export(_block(), (torch.randn(3, 4), torch.randn(3, 3)), dynamic_shapes=({0: Dim("b")}, {0: Dim("b")}))
        )
    finally:
        tp.logger.stream = old
    bounds = imported.input_infos[0].shape_bounds
    assert bounds.max[0] == 4096 and bounds.opt[0] == 3
    assert "has no upper bound; it gets the range [1, 4096]" in out.getvalue()


def test_type_promotion_follows_pytorch():
    class Mixed(torch.nn.Module):
        def forward(self, ids, x):
            return (ids * 2 + x, ids // 2, (ids > 1) & (x < 0.5), x.to(torch.float16) * 3)

    ids, x = torch.arange(6).reshape(2, 3), torch.rand(2, 3)
    got = tp.from_torch(Mixed(), args=(ids, x))(tp.Tensor(ids), tp.Tensor(x))
    for g, e in zip(got, Mixed()(ids, x)):
        g = np.from_dlpack(g)
        assert str(g.dtype) == str(e.dtype).replace("torch.", "")
        assert np.allclose(g.astype(np.float32), e.numpy().astype(np.float32), atol=1e-3)


class Unsupported(torch.nn.Module):
    def forward(self, x):
        y = torch.cumprod(x, 0)
        return torch.erfinv(y.clamp(-0.5, 0.5)) + torch.cumprod(x, 1)


def test_unsupported_operators_are_reported_at_import_with_source_lines():
    with pytest.raises(tp.TripyException) as info:
        tp.from_torch(Unsupported(), args=(torch.randn(3, 4),))
    text = str(info.value)
    assert "uses 2 operator(s) that tripy cannot import yet" in text
    assert "aten.cumprod.default: used 2 time(s)" in text and "aten.erfinv.default: used 1 time(s)" in text
    assert f"{HERE}:" in text and "in forward(): y = torch.cumprod(x, 0)" in text
    assert "test_unsupported_operators_are_reported" in text.splitlines()[0]  # the report points at the caller


def test_wrong_argument_and_missing_example_inputs():
    with pytest.raises(tp.TripyException, match="expects a torch.export.ExportedProgram or a torch.nn.Module"):
        tp.from_torch("model.pt")
    with pytest.raises(tp.TripyException, match="needs example inputs"):
        tp.from_torch(_block())


def test_a_missing_extra_says_what_to_install():
    with pytest.raises(tp.TripyException, match=r"pip install 'tripy-importers\[nothing\]'"):
        report.require("a_module_that_is_not_installed", "nothing", "tp.from_something")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_models(dtype):
    model = _block().to(getattr(torch, dtype))
    x, y = torch.randn(2, 4).to(model.proj.weight.dtype), torch.randn(2, 3).to(model.proj.weight.dtype)
    imported = tp.from_torch(model, args=(x, y))
    assert imported.state_dict()["proj.weight"].dtype == getattr(tp, dtype)
    got = imported(tp.Tensor(x), tp.Tensor(y))
    assert got.dtype == getattr(tp, dtype)
    expected = model(x, y).detach().float().numpy()
    assert np.allclose(np.from_dlpack(tp.cast(got, tp.float32)), expected, atol=0.1, rtol=0.05)
