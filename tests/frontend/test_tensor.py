"""tp.Tensor: construction, interop, laziness, evaluation, metadata, printing, IR logging, caching."""

import io
import re

import numpy as np
import pytest

import tripy as tp
from tripy_frontend import eager


def test_from_python_data_infers_dtypes():
    assert tp.Tensor(1.5).dtype == tp.float32 and tp.Tensor(1.5).shape == ()
    assert tp.Tensor([1, 2]).dtype == tp.int32
    assert tp.Tensor([True, False]).dtype == tp.bool
    assert tp.Tensor([[1.0, 2.0]], dtype=tp.float16).dtype == tp.float16
    assert tp.Tensor([1, 2], dtype=tp.int64).tolist() == [1, 2]


def test_from_numpy_dlpack_and_array_protocol():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = tp.Tensor(a)
    assert t.dtype == tp.int64 and t.shape == (2, 3)
    assert np.array_equal(np.from_dlpack(t), a)

    class OnlyArrayInterface:
        def __init__(self, arr):
            self.__array_interface__ = arr.__array_interface__
            self._keep = arr

    assert tp.Tensor(OnlyArrayInterface(np.ones(3, np.float32))).tolist() == [1.0, 1.0, 1.0]

    assert tp.Tensor(OnlyDLPack(np.array([1, 2], np.int32))).tolist() == [1, 2]


def test_numpy2_array_protocol_copy_argument():
    # NumPy 2: np.array(t) and copy=True give a new, writeable array; np.asarray(t) may share the tensor's
    # memory (read-only, so the tensor cannot change under tripy); copy=False refuses a conversion that copies.
    t = tp.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    for copied in (np.array(t), np.array(t, copy=True), np.asarray(t, dtype=np.float64)):
        assert copied.flags.writeable
        copied[0, 0] = 5
    assert t.tolist()[0][0] == 0.0
    shared = np.asarray(t)
    assert np.shares_memory(shared, np.asarray(t, copy=False)) and not shared.flags.writeable
    assert np.asarray(t, dtype=np.float32, copy=False).dtype == np.float32  # same dtype: no copy needed
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(t, dtype=np.float64, copy=False)


@pytest.mark.parametrize(
    "view, strides, fix",
    [
        (
            lambda a: a.T,
            "strides [1, 4] (in elements), but row-major data of that shape has strides [3, 1]",
            "np.ascontiguousarray(array)",
        ),
        (lambda a: a[:, ::2], "strides [4, 2]", "np.ascontiguousarray(array)"),
        (lambda a: a[:, :1], "strides [4, 1]", "np.ascontiguousarray(array)"),
        (lambda a: np.broadcast_to(a[0], (2, 4)), "strides [0, 1]", "np.ascontiguousarray(array)"),
        (lambda a: OnlyDLPack(a.T), "strides [1, 4]", "Make the data contiguous (row-major)"),
    ],
)
def test_non_row_major_data_is_refused(view, strides, fix):
    # as nvtripy 0.1.7 refuses it (tp.Tensor reads data as it lies in memory)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(tp.TripyException, match="Non-canonical strides are not supported for tripy tensors") as err:
        tp.Tensor(view(a))  # MARK-strides
    text = str(err.value)
    assert strides in text and fix in text and "# MARK-strides" in text
    fixed = np.ascontiguousarray(np.from_dlpack(view(a)))
    assert tp.Tensor(fixed).tolist() == fixed.tolist()
    assert tp.Tensor(a[1:]).tolist() == a[1:].tolist()  # a view that is row-major is read as it is


class OnlyDLPack:
    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, *args, **kwargs):
        return self._arr.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_data_is_copied_so_later_host_writes_do_not_leak_in():
    a = np.zeros(3, np.float32)
    t = tp.Tensor(a)
    a[:] = 5
    assert t.tolist() == [0.0, 0.0, 0.0]
    # Arrays aligned the way the CPU runtime could alias (64 bytes) are copied too, whatever their size.
    for n in (3, 16, 1024, 4096):
        raw = np.zeros(n + 16, np.float32)
        start = (-raw.ctypes.data % 64) // 4
        aligned = raw[start : start + n]
        t = tp.Tensor(aligned)
        aligned[:] = 5
        assert not np.from_dlpack(t).any(), f"{n} elements: the tensor shares the array's memory"


def test_ops_are_lazy_until_used():
    x = tp.ones((2, 2))
    y = tp.exp(x)
    assert not y.is_evaluated
    assert y.shape == (2, 2) and y.dtype == tp.float32 and str(y.device) == "cpu:0"  # metadata needs no eval
    assert not y.is_evaluated
    y.eval()
    assert y.is_evaluated


def test_repr_evaluates_and_shows_metadata():
    text = repr(tp.full((2, 3), 0.5))
    assert "0.5" in text and "dtype=float32" in text and "loc=cpu:0" in text and "shape=(2, 3)" in text


def test_scalar_conversions():
    assert float(tp.Tensor(2.5)) == 2.5 and int(tp.Tensor([7])) == 7 and bool(tp.Tensor(True))
    with pytest.raises(tp.TripyException, match="ambiguous"):
        bool(tp.Tensor([1, 2]))


def test_unsupported_inputs_are_clear_errors():
    with pytest.raises(tp.TripyException, match="float64 is not supported"):
        tp.Tensor(np.zeros(2, np.float64))
    with pytest.raises(tp.TripyException, match="rectangular"):
        tp.Tensor([[1, 2], [3]])
    with pytest.raises(tp.TripyException, match="type 'dict'"):
        tp.Tensor({"a": 1})


def test_devices():
    assert str(tp.device("cpu")) == "cpu:0"
    with pytest.raises(tp.TripyException, match="not available"):
        tp.device("gpu")
    with pytest.raises(tp.TripyException, match="Unknown device kind 'tpu'"):
        tp.device("tpu")


def test_shape_mismatch_points_at_user_line():
    a = tp.ones((2, 3))
    b = tp.ones((4, 3))
    with pytest.raises(tp.TripyException) as info:
        a + b  # the line reported
    text = str(info.value)
    assert __file__ in text
    assert "a + b  # the line reported" in text
    assert "[2, 3]" in text and "[4, 3]" in text
    assert re.search(r"\^+", text)


def test_matmul_mismatch_points_at_user_line():
    with pytest.raises(tp.TripyException) as info:
        tp.ones((2, 3)) @ tp.ones((4, 5))
    text = str(info.value)
    assert __file__ in text and "[2, 3] @ [4, 5]" in text


def test_ir_logging_prints_all_three_irs():
    out = io.StringIO()
    old = tp.logger.stream
    tp.logger.stream = out
    try:
        with tp.logger.use_verbosity({"trace", "flat_ir", "mlir"}):
            tp.tanh(tp.full((2, 3), value=0.5)).eval()
    finally:
        tp.logger.stream = old
    text = out.getvalue()
    assert re.search(r"t\d+ = tripy.tanh\(t\d+\)", text)
    assert re.search(
        r"t\d+: \[rank=\(2\), shape=\(\[2, 3\]\), dtype=\(float32\), loc=\(cpu:0\)\] = TanhOp\(t\d+\)", text
    )
    assert "stablehlo.tanh" in text and "func.func public @main" in text


def test_unknown_logger_topic():
    with pytest.raises(tp.TripyException, match="Unknown logger topic"):
        tp.logger.verbosity = {"nonsense"}


def test_cache_hit_reuses_compiled_program_with_new_data():
    def graph(x):
        return tp.tanh(x * 3.0 + 1.0) - x

    data = [np.random.default_rng(i).standard_normal((5, 7)).astype(np.float32) for i in range(3)]
    graph(tp.Tensor(data[0])).eval()
    misses = eager.PROGRAM_CACHE.misses
    for d in data[1:]:
        out = graph(tp.Tensor(d))
        assert np.allclose(np.from_dlpack(out), np.tanh(d * 3 + 1) - d, atol=1e-6)
    assert eager.PROGRAM_CACHE.misses == misses


def test_evaluated_tensors_enter_as_arguments_not_literals():
    big = tp.Tensor(np.full((64, 64), 1.25, np.float32))
    out = io.StringIO()
    old = tp.logger.stream
    tp.logger.stream = out
    try:
        with tp.logger.use_verbosity("mlir"):
            (big + 1.0).eval()
    finally:
        tp.logger.stream = old
    text = out.getvalue()
    assert "%arg0: tensor<64x64xf32>" in text
    assert "1.250000e+00" not in text


def test_did_you_mean():
    with pytest.raises(AttributeError, match="Did you mean: 'tripy.tanh'"):
        tp.ones((1,)).tanh
    with pytest.raises(AttributeError, match="Did you mean: 'tripy.tanh'"):
        tp.tahn


def test_dlpack_both_ways_with_jax_arrays():
    """tripy's CPU client is its own (it runs programs in the calling thread); arrays still cross to and
    from jax's through DLPack, and the result stays valid after the tripy tensor is gone."""
    import jax.numpy as jnp

    j = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    t = tp.Tensor(j) * 2.0
    assert t.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    back = jnp.from_dlpack(t)
    del t
    np.testing.assert_array_equal(np.asarray(back + 1), np.arange(6, dtype=np.float32).reshape(2, 3) * 2 + 1)
