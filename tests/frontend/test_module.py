"""tp.Module and tp.Sequential: registration, names, state dicts, loading and its errors."""

import inspect

import numpy as np
import pytest

import tripy as tp
from tripy_frontend.nn.parameter import DefaultParameter


class Block(tp.Module):
    def __init__(self):
        super().__init__()
        self.norm = tp.LayerNorm(4)
        self.proj = tp.Linear(4, 3)

    def forward(self, x):
        return self.proj(self.norm(x))


class Net(tp.Module):
    def __init__(self):
        super().__init__()
        self.scale = tp.Tensor(np.full((3,), 2.0, dtype=np.float32))
        self.h = tp.Sequential(Block(), Block())
        self.heads = [tp.Linear(3, 2), tp.Linear(3, 2, bias=False)]
        self.extra = {"gain": tp.ones((2,)), "emb": tp.Embedding(5, 4)}
        self.note = "not a parameter"

    def forward(self, x):
        y = self.h[0](x) * self.scale
        return self.heads[0](y) + self.heads[1](y) * self.extra["gain"]


EXPECTED_KEYS = [
    "scale",
    "extra.gain",
    "h.0.norm.weight",
    "h.0.norm.bias",
    "h.0.proj.weight",
    "h.0.proj.bias",
    "h.1.norm.weight",
    "h.1.norm.bias",
    "h.1.proj.weight",
    "h.1.proj.bias",
    "heads.0.weight",
    "heads.0.bias",
    "heads.1.weight",
    "extra.emb.weight",
]


def random_state(module, seed=0):
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(p.shape).astype(np.float32) for k, p in module.state_dict().items()}


def _line_of(marker):
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


def test_names_follow_attributes_lists_dicts_and_sequential():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "extra.gain"]
    assert [n for n, _ in net.named_children()] == ["h", "heads.0", "heads.1", "extra.emb"]
    assert [n for n, _ in net.h.named_children()] == ["0", "1"]
    assert list(net.state_dict()) == EXPECTED_KEYS
    # Unset parameters are placeholders that know their shape and dtype.
    weight = net.state_dict()["h.1.proj.weight"]
    assert isinstance(weight, DefaultParameter) and not isinstance(weight, tp.Tensor)
    assert weight.shape == (3, 4) and weight.dtype == tp.float32


def test_load_state_dict_numpy_and_tensors():
    net = Net()
    state = random_state(net)
    state["heads.0.bias"] = tp.Tensor(state["heads.0.bias"])  # tensors work too
    missing, unexpected = net.load_state_dict(state)
    assert missing == set() and unexpected == set()
    loaded = net.state_dict()
    for k, v in state.items():
        assert isinstance(loaded[k], tp.Tensor) and loaded[k].is_evaluated  # uploaded once, enters programs as data
        assert np.array_equal(np.from_dlpack(loaded[k]), np.asarray(v))
    assert net.h[1].proj.weight is loaded["h.1.proj.weight"]
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    assert net(tp.Tensor(x)).shape == (2, 2)


def test_state_dict_round_trip():
    a, b = Net(), Net()
    a.load_state_dict(random_state(a))
    b.load_state_dict({k: np.from_dlpack(v) for k, v in a.state_dict().items()})
    x = tp.Tensor(np.ones((1, 4), dtype=np.float32))
    assert np.allclose(np.from_dlpack(a(x)), np.from_dlpack(b(x)))


def test_load_errors_are_reported_together_and_change_nothing():
    net = Net()
    good = random_state(net)
    net.load_state_dict(good)
    before = net.state_dict()

    bad = random_state(net, seed=1)
    del bad["h.0.norm.bias"]
    bad["h.0.proj.wieght"] = bad.pop("h.0.proj.weight")
    bad["heads.0.weight"] = bad["heads.0.weight"].T.copy()
    bad["extra.gain"] = bad["extra.gain"].astype(np.float64)
    bad["scale"] = np.zeros((4,), np.float32)
    with pytest.raises(tp.TripyException) as info:
        net.load_state_dict(bad)  # MARK-load
    msg = str(info.value)
    assert f"{__file__}:{_line_of('MARK-load')}" in msg
    for fragment in [
        "Missing keys (2",
        "h.0.norm.bias",
        "h.0.proj.weight",
        "Unexpected keys (1",
        "h.0.proj.wieght  (did you mean 'h.0.proj.weight'?)",
        "'heads.0.weight': expected shape [2, 3], but got [3, 2]",
        "looks transposed",
        "'extra.gain': expected dtype float32, but got float64",
        ".astype(np.float32)",
        "'scale': expected shape [3], but got [4]",
        "the module is unchanged",
    ]:
        assert fragment in msg, fragment
    after = net.state_dict()
    assert all(after[k] is before[k] for k in before)


def test_load_non_strict_partial():
    net = Net()
    state = random_state(net)
    partial = {"h.0.proj.weight": state["h.0.proj.weight"], "unknown": np.zeros(1, np.float32)}
    missing, unexpected = net.load_state_dict(partial, strict=False)
    assert unexpected == {"unknown"}
    assert missing == set(EXPECTED_KEYS) - {"h.0.proj.weight"}
    assert isinstance(net.h[0].proj.weight, tp.Tensor)
    assert isinstance(net.h[0].proj.bias, DefaultParameter)
    # Shape and dtype mismatches are errors even when not strict.
    with pytest.raises(tp.TripyException, match="expected shape"):
        net.load_state_dict({"h.0.proj.bias": np.zeros((4,), np.float32)}, strict=False)


def test_load_rejects_bad_values():
    linear = tp.Linear(2, 2)
    with pytest.raises(tp.TripyException, match="expected a NumPy array or a tp.Tensor, but got str"):
        linear.load_state_dict({"weight": "nope", "bias": np.zeros(2, np.float32)})
    with pytest.raises(tp.TripyException, match="expects a dict"):
        linear.load_state_dict([("weight", np.zeros((2, 2), np.float32))])
    assert isinstance(linear.weight, DefaultParameter)


def test_calling_with_unset_parameters_names_them():
    block = Block()
    block.norm.initialize_dummy_parameters()
    with pytest.raises(tp.TripyException) as info:
        block(tp.ones((1, 4)))  # MARK-call
    msg = str(info.value)
    assert "proj.weight, proj.bias" in msg and "norm.weight" not in msg
    assert f"{__file__}:{_line_of('MARK-call')}" in msg
    assert "load_state_dict" in msg


def test_assignment_checks_shape_and_dtype():
    linear = tp.Linear(3, 2)
    linear.weight = tp.ones((2, 3))
    linear.bias = None  # replacing a parameter with None or any tensor of the same kind is fine
    with pytest.raises(tp.TripyException, match=r"expected shape \[2, 3\], but got \[3, 2\]"):
        linear.weight = tp.ones((3, 2))
    with pytest.raises(tp.TripyException, match="expected dtype float32, but got float16"):
        linear.weight = tp.ones((2, 3), dtype=tp.float16)
    out = linear(tp.Tensor([[1.0, 2.0, 3.0]]))
    assert out.tolist() == [[6.0, 6.0]]
    assert list(linear.state_dict()) == ["weight"]


def test_shared_parameters_appear_under_each_name():
    class Tied(tp.Module):
        def __init__(self):
            super().__init__()
            self.emb = tp.Embedding(4, 2)
            self.head = tp.Linear(2, 4, bias=False)

        def forward(self, idx):
            return self.head(self.emb(idx))

    tied = Tied()
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    tied.emb.weight = tp.Tensor(table)
    tied.head.weight = tied.emb.weight
    assert list(tied.state_dict()) == ["emb.weight", "head.weight"]
    out = np.from_dlpack(tied(tp.Tensor([1])))
    assert np.allclose(out, table[[1]] @ table.T)

    zeros = np.zeros((4, 2), np.float32)
    tied.load_state_dict({"emb.weight": zeros, "head.weight": zeros})  # one array: uploaded once, still shared
    assert tied.head.weight is tied.emb.weight


def test_sequential_container():
    seq = tp.Sequential(tp.Linear(2, 3), lambda x: tp.relu(x), tp.Linear(3, 1))
    assert len(seq) == 3
    assert isinstance(seq[0], tp.Linear) and seq[-1] is seq[2] and seq["0"] is seq[0]
    assert [type(m).__name__ for m in seq][::2] == ["Linear", "Linear"]
    assert [n for n, _ in seq.named_children()] == ["0", "2"]
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(seq[1:]) == 2
    seq.load_state_dict(
        {
            "0.weight": np.ones((3, 2), np.float32),
            "0.bias": np.array([-10, 0, 1], np.float32),
            "2.weight": np.ones((1, 3), np.float32),
            "2.bias": np.zeros(1, np.float32),
        }
    )
    assert seq(tp.Tensor([[1.0, 2.0]])).tolist() == [[7.0]]
    with pytest.raises(tp.TripyException, match="index 3 is out of range for 3 modules"):
        seq[3]
    with pytest.raises(tp.TripyException, match="no module named 'x'"):
        seq["x"]

    named = tp.Sequential({"first": tp.Linear(1, 1), "second": tp.Linear(1, 1)})
    assert list(named.state_dict()) == ["first.weight", "first.bias", "second.weight", "second.bias"]
    assert named.first is named["first"]
    with pytest.raises(tp.TripyException, match="not a module or a callable"):
        tp.Sequential(tp.Linear(1, 1), 3)


def test_forward_is_required_and_signature_is_forwards():
    class NoForward(tp.Module):
        pass

    with pytest.raises(tp.TripyException, match="does not implement forward"):
        NoForward()(tp.ones((1,)))

    class Two(tp.Module):
        def forward(self, a, b=1):
            return a + b

    assert list(inspect.signature(Two()).parameters) == ["a", "b"]
    assert list(inspect.signature(tp.Linear(1, 1)).parameters) == ["x"]
    assert inspect.signature(tp.Linear)  # classes still have a normal signature


def test_initialize_dummy_parameters_and_repr():
    bn = tp.BatchNorm(3)
    assert "not set" in repr(bn)
    bn.initialize_dummy_parameters()
    for _, p in bn.named_parameters():
        assert isinstance(p, tp.Tensor) and np.all(np.from_dlpack(p) > 0)  # variances stay positive
    text = repr(Net())
    assert "h: Sequential(" in text and "weight: Parameter(shape=[3, 4], dtype=float32, not set)" in text
