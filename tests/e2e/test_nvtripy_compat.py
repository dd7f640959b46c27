"""nvtripy 0.1.7 signatures and behaviours (and older nvtripy spellings that do not contradict them),
checked against NumPy in eager and compiled mode."""

import numpy as np
import pytest

import tripy as tp
import tripy_backend


def test_arange_stop_dtype(eager_or_compiled):
    out = eager_or_compiled(lambda: tp.arange(5, tp.int32))
    assert out.dtype == tp.int32 and np.array_equal(np.asarray(out), np.arange(5, dtype=np.int32))


def test_conv_positional_order_is_nvtripy_017():
    # (in, out, kernel_dims, stride, padding, dilation, groups, bias, dtype)
    conv = tp.Conv(2, 4, (3, 3), (2, 1), ((1, 1), (0, 0)), (1, 2), 2, False, tp.float32)
    assert (conv.stride, conv.padding, conv.dilation, conv.groups, conv.bias) == (
        (2, 1),
        ((1, 1), (0, 0)),
        (1, 2),
        2,
        None,
    )
    up = tp.ConvTranspose(4, 2, (2, 2), (2, 2), ((0, 0), (1, 1)))
    assert up.stride == (2, 2) and up.padding == ((0, 0), (1, 1))


def test_dimension_size_prints_as_a_number_and_takes_a_name():
    x = tp.ones((2, 3))
    assert str(x.shape[1]) == "3" and repr(x.shape[1]) == "3" and f"{x.shape[0]}" == "2"
    d = tp.DimensionSize(4, name="four")
    assert int(d) == 4 and d.name == "four"


def test_shape_arithmetic_stays_integral(eager_or_compiled):
    a = np.arange(48, dtype=np.float32).reshape(2, 3, 8)
    out = eager_or_compiled(lambda t: tp.reshape(t, (2, t.shape[1], t.shape[2] / 2, -1)), tp.Tensor(a))
    assert np.array_equal(np.asarray(out), a.reshape(2, 3, 4, 2))


def test_dimension_size_true_division_is_nvtripys_int32_division():
    # nvtripy's DimensionSize is an int32 tensor and its '/' an int32 division (TensorRT's DIV), a DimensionSize
    # however the sizes divide: SAM2's Hiera trunk takes a remainder as `x - (x / y) * y`.
    six = tp.ones((2, 6)).shape[1]
    for quotient, want in (
        (six / 4, 1),
        (six / tp.DimensionSize(6), 1),
        (15 / six, 2),
        (six / -4, -1),
        (-15 / six, -2),
    ):
        assert isinstance(quotient, tp.DimensionSize) and int(quotient) == want
    assert six - (six / 4) * 4 == 2
    assert isinstance(six / 4.0, tp.Tensor) and float(six / 4.0) == 1.5  # a float divisor divides as floats


def test_dimension_size_true_division_at_run_time():
    # the Hiera pattern: a window padding computed as a remainder of a run-time size
    def pad_to_multiple(t):
        rest = t.shape[1] - (t.shape[1] / 3) * 3
        return t[:, : t.shape[1] - rest] * 2.0

    exe = tp.compile(pad_to_multiple, args=[tp.InputInfo((2, (4, 6, 9)), tp.float32)])
    before = tripy_backend.compilation_count()
    inputs = {n: np.arange(2 * n, dtype=np.float32).reshape(2, n) for n in range(4, 10)}
    for n, x in inputs.items():
        assert np.array_equal(np.asarray(exe(tp.Tensor(x))), x[:, : n - n % 3] * 2.0), n
    assert tripy_backend.compilation_count() == before  # no call compiles
    for n, x in inputs.items():  # eager mode gives the same
        assert np.array_equal(np.asarray(pad_to_multiple(tp.Tensor(x))), x[:, : n - n % 3] * 2.0), n


def test_shape_arithmetic_with_run_time_sizes():
    exe = tp.compile(
        lambda t: tp.reshape(t, (t.shape[0], t.shape[1] / 2, 2)), args=[tp.InputInfo((2, (2, 4, 8)), tp.float32)]
    )
    for n in (2, 6, 8):
        a = np.arange(2 * n, dtype=np.float32).reshape(2, n)
        assert np.array_equal(np.asarray(exe(tp.Tensor(a))), a.reshape(2, n // 2, 2))


def test_dimension_size_in_where_and_split(eager_or_compiled):
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = eager_or_compiled(lambda t: tp.where(tp.Tensor([True, False]), t.shape[0], t.shape[1]), tp.Tensor(x))
    assert np.array_equal(np.asarray(out), [5, 2])
    a, b = eager_or_compiled(lambda t: tp.split(t, [t.shape[1], 3]), tp.Tensor(x))
    assert np.array_equal(np.asarray(a), x[:2]) and np.array_equal(np.asarray(b), x[2:])


def test_where_of_two_sizes_is_a_size(eager_or_compiled):
    # nvtripy 0.1.7's test_dimension_size_inputs: a size chosen by a rank-0 condition is a DimensionSize
    out = tp.where(tp.Tensor(True, dtype=tp.bool), tp.DimensionSize(0), tp.DimensionSize(1))
    assert isinstance(out, tp.DimensionSize) and out.tolist() == 0
    x = tp.Tensor(np.zeros((3, 4), np.float32))
    for flag, size in ((True, 3), (False, 4)):
        out = eager_or_compiled(lambda t, c: tp.where(c, t.shape[0], t.shape[1]) * 2, x, tp.Tensor(flag))
        assert int(out) == 2 * size


def test_shape_compares_with_lists_and_tuples():
    t = tp.ones((2, 3))
    assert t.shape == [2, 3] and t.shape == (2, 3) and t.shape != [3, 2] and not (t.shape != [2, 3])
    assert [2, 3] == t.shape


def test_flip_dims_keyword(eager_or_compiled):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = eager_or_compiled(lambda t: tp.flip(t, dims=[0, 1]), tp.Tensor(x))
    assert np.array_equal(np.asarray(out), np.flip(x, (0, 1)))
    with pytest.raises(tp.TripyException, match="give dim or dims"):
        tp.flip(tp.Tensor(x), 0, dims=1)


def test_split_results_unpack_index_and_iterate():
    outs = tp.split(tp.arange(6), 3)
    assert isinstance(outs, tuple) and len(outs) == 3 and [o.tolist() for o in list(outs)][1] == [2.0, 3.0]


def test_numpy_operators_return_tensors():
    a = np.arange(3, dtype=np.float32)
    for result, expected in [
        (a + tp.ones((3,)), a + 1),
        (a * tp.Tensor([2.0, 2.0, 2.0]), a * 2),
        (a - tp.ones((3,)), a - 1),
        (a > tp.ones((3,)), a > 1),
        (a == tp.ones((3,)), a == 1),
    ]:
        assert isinstance(result, tp.Tensor)
        assert np.array_equal(np.asarray(result), expected)
    # NumPy functions still read a tensor's value
    assert np.allclose(np.exp(tp.ones((2,))), np.e) and np.array_equal(tp.Tensor([1, 2]), [1, 2])


@pytest.mark.parametrize("index", [[2, 0], [[1, -1], [0, 0]], 1])
def test_index_with_an_integer_tensor(eager_or_compiled, index):
    x = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    out = eager_or_compiled(lambda t, i: t[i], tp.Tensor(x), tp.Tensor(np.array(index, np.int32)))
    assert np.array_equal(np.asarray(out), x[np.array(index)])
    out = eager_or_compiled(lambda t, i: t[1:, i, 0], tp.Tensor(x), tp.Tensor(np.array(index, np.int32)))
    assert np.array_equal(np.asarray(out), x[1:, np.array(index), 0])


def test_index_tensor_refusals():
    x = tp.ones((3, 4, 2))
    with pytest.raises(tp.TripyException, match="only one index tensor of rank above 0"):
        x[tp.Tensor([0, 1]), tp.Tensor([0, 1])]
    with pytest.raises(tp.TripyException, match="a slice or None separates"):
        x[tp.Tensor([0, 1]), :, 0]
    with pytest.raises(tp.TripyException, match="must have an integer dtype"):
        x[tp.Tensor([0.0])]


def test_dlpack_producers_of_every_dtype():
    jnp = pytest.importorskip("jax.numpy")
    for dt, tdt in [
        (jnp.bfloat16, tp.bfloat16),
        (jnp.float8_e4m3fn, tp.float8),
        (jnp.float16, tp.float16),
        (jnp.float32, tp.float32),
        (jnp.int8, tp.int8),
        (jnp.int32, tp.int32),
        (jnp.bool_, tp.bool),
    ]:
        src = jnp.arange(6).reshape(2, 3).astype(dt)
        t = tp.Tensor(src)
        assert t.dtype == tdt
        assert np.array_equal(np.asarray(t).astype(np.float32), np.asarray(src).astype(np.float32))


def test_torch_tensors_of_every_dtype():
    torch = pytest.importorskip("torch")
    for dt, tdt in [
        (torch.bfloat16, tp.bfloat16),
        (torch.float16, tp.float16),
        (torch.int64, tp.int64),
        (torch.bool, tp.bool),
        (torch.float8_e4m3fn, tp.float8),
    ]:
        src = torch.arange(6).reshape(2, 3).to(dt)
        t = tp.Tensor(src)
        assert t.dtype == tdt and t.tolist() == src.to(torch.float32).tolist()


def test_gpu_device_without_a_gpu_is_reported_at_the_users_line():
    from tripy_backend.devices import gpu_backend, install_command

    if gpu_backend() is not None:
        pytest.skip("a GPU backend is available here")
    with pytest.raises(tp.TripyException) as e:
        tp.device("gpu")  # MARK-gpu
    text = str(e.value)
    assert __file__ in text and install_command("tensorrt") in text and "tp.device('cpu')" in text


@pytest.mark.parametrize("mode,numpy_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes(eager_or_compiled, mode, numpy_mode):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    pads = [(0, 0), (2, 1), (1, 3)]
    out = eager_or_compiled(lambda t: tp.pad(t, pads, mode=mode), tp.Tensor(x))
    assert np.array_equal(np.asarray(out), np.pad(x, pads, mode=numpy_mode))


def test_pad_mode_refusals():
    x = tp.ones((2, 3))
    with pytest.raises(tp.TripyException, match="cannot pad dim 1 of size 3 by \\(3, 0\\)"):
        tp.pad(x, [(0, 0), (3, 0)], mode="reflect")
    with pytest.raises(tp.TripyException, match="needs static, non-negative padding"):
        tp.pad(x, [(0, 0), (-1, 0)], mode="replicate")
    with pytest.raises(tp.TripyException, match="unsupported padding mode 'symmetric'"):
        tp.pad(x, [(0, 0), (1, 0)], mode="symmetric")


def _norm_ref(x, dims, eps=1e-5):
    x = x.astype(np.float64)
    mean = x.mean(axis=dims, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=dims, keepdims=True) + eps)


@pytest.mark.parametrize("name", ["layer", "group", "instance"])
def test_float16_norms_accumulate_in_float32(eager_or_compiled, name):
    """Max error against a float64 reference: 0.001 (PyTorch's CPU float16: 0.001-0.0017; in float16
    throughout it was 0.011)."""
    x = (np.random.default_rng(0).standard_normal((4, 8, 16, 16)) * 3 + 1).astype(np.float16)
    norm, ref = {
        "layer": (tp.LayerNorm((16, 16), dtype=tp.float16), _norm_ref(x, (2, 3))),
        "group": (tp.GroupNorm(4, 8, dtype=tp.float16), _norm_ref(x.reshape(4, 4, -1), (2,)).reshape(x.shape)),
        "instance": (tp.InstanceNorm(8, dtype=tp.float16), _norm_ref(x, (2, 3))),
    }[name]
    shape = (16, 16) if name == "layer" else (8,)
    norm.load_state_dict({"weight": np.ones(shape, np.float16), "bias": np.zeros(shape, np.float16)})
    out = eager_or_compiled(norm, tp.Tensor(x))
    assert out.dtype == tp.float16
    assert np.abs(np.asarray(out).astype(np.float64) - ref).max() < 0.002


@pytest.mark.parametrize("bias", [True, False])
def test_linear_on_a_1d_input_has_nvtripys_shape(eager_or_compiled, bias):
    linear = tp.Linear(3, 2, bias=bias)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    linear.load_state_dict({"weight": w, **({"bias": np.array([1.0, -1.0], np.float32)} if bias else {})})
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out = eager_or_compiled(linear, tp.Tensor(x))
    expected = (w @ x + np.array([1.0, -1.0], np.float32))[None] if bias else w @ x
    assert out.shape == expected.shape and np.allclose(np.asarray(out), expected)
