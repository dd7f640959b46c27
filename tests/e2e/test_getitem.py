"""Tensor.__getitem__ against NumPy indexing: eager, compiled with static shapes, and compiled with every
dim dynamic (bounds computed in the program)."""

import numpy as np
import pytest

import tripy as tp

X = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)


def compile_dynamic(func, *arrays):
    """Compile `func` with every dim of every input dynamic (range 0 .. size + 4) and run it on `arrays`."""
    infos = [tp.InputInfo(tuple((0, s, s + 4) for s in a.shape), tp.Tensor(a).dtype) for a in arrays]
    exe = tp.compile(func, args=infos)
    return exe(*[tp.Tensor(a) for a in arrays])


INDICES = [
    0,
    -1,
    3,
    -4,
    (1, 2),
    (1, 2, 3),
    (-1, -1, -1),
    (0, -5),
    slice(None),
    slice(1, 3),
    slice(-3, None),
    slice(None, -1),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(3, 0, -1),
    slice(-1, -10, -2),
    slice(10, -10, -3),
    slice(2, 2),
    slice(3, 1),
    slice(-100, 100),
    (slice(None), 2),
    (slice(None), slice(1, None, 2), slice(None, None, -3)),
    (Ellipsis, 0),
    (Ellipsis, slice(None, None, -1)),
    (0, Ellipsis),
    (1, Ellipsis, 2),
    (None,),
    (None, 0),
    (slice(None), None, slice(1, 3)),
    (Ellipsis, None),
    (None, Ellipsis, None, -1),
    (None, None, 1, None),
    (slice(1, 2), 0, slice(None, None, -2)),
    Ellipsis,
    (),
    (0, slice(4, 1, -1), None, slice(-2, None)),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_static_index_matches_numpy(eager_or_compiled, index):
    out = eager_or_compiled(lambda t: t[index], tp.Tensor(X))
    expected = X[index]
    assert out.shape == expected.shape
    assert np.array_equal(np.from_dlpack(out), expected)


# Trivial indices return the input itself; a compiled identity function with dynamic inputs is a backend
# matter (the specialized module's result type), not indexing, so they are left out here.
TRIVIAL = (slice(None), Ellipsis, ())


@pytest.mark.parametrize("index", [i for i in INDICES if not any(i == t for t in TRIVIAL)], ids=repr)
def test_index_on_dynamic_dims_matches_numpy(index):
    out = compile_dynamic(lambda t: t[index], X)
    assert np.array_equal(np.from_dlpack(out), X[index])


@pytest.mark.parametrize("shape", [(4, 5, 6), (1, 2, 3), (7, 1, 9), (0, 5, 2)])
def test_one_compiled_program_for_many_shapes(shape):
    exe = tp.compile(lambda t: t[1:, ::-2, -3:], args=[tp.InputInfo(((0, 2, 8), (0, 2, 8), (0, 2, 10)), tp.float32)])
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert np.array_equal(np.from_dlpack(exe(tp.Tensor(x))), x[1:, ::-2, -3:])


def test_dimension_size_bounds(eager_or_compiled):
    def f(t):
        n = t.shape[1]
        return t[1 : t.shape[0] - 1, n - 2 :: -2, : n // 2]

    assert np.array_equal(np.from_dlpack(eager_or_compiled(f, tp.Tensor(X))), X[1:3, 3::-2, :2])


def test_dimension_size_bounds_dynamic():
    def f(t):
        return t[t.shape[0] - 2, : t.shape[1] - 1, t.shape[2] // 2 :]

    assert np.array_equal(np.from_dlpack(compile_dynamic(f, X)), X[2, :4, 3:])
    y = np.arange(3 * 7 * 2, dtype=np.float32).reshape(3, 7, 2)
    assert np.array_equal(np.from_dlpack(compile_dynamic(f, y)), y[1, :6, 1:])


@pytest.mark.parametrize("i", [0, 2, -1, -4])
def test_rank0_tensor_index(eager_or_compiled, i):
    out = eager_or_compiled(lambda t, idx: t[idx, 1, idx], tp.Tensor(X), tp.Tensor(i))
    assert np.array_equal(np.from_dlpack(out), X[i, 1, i])


def test_rank0_int64_tensor_index_with_dynamic_dims():
    def f(t, idx):
        return t[:, idx]

    out = tp.compile(f, args=[tp.InputInfo(((1, 4, 8), (1, 5, 8), 6), tp.float32), tp.InputInfo((), tp.int64)])
    assert np.array_equal(np.from_dlpack(out(tp.Tensor(X), tp.Tensor(np.int64(-2)))), X[:, -2])


def test_tensor_slice_bounds_in_eager_mode():
    start, stop = tp.Tensor(1), tp.Tensor(np.int64(-1))
    assert np.array_equal(np.from_dlpack(tp.Tensor(X)[start:stop, ::2]), X[1:-1, ::2])


def test_getitem_of_computed_tensor_and_int_dtypes(eager_or_compiled):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    out = eager_or_compiled(lambda t: (t * 2)[::-1, 1::2], tp.Tensor(a))
    assert out.dtype == tp.int64
    assert np.array_equal(np.from_dlpack(out), (a * 2)[::-1, 1::2])


def test_bool_tensor(eager_or_compiled):
    a = np.array([[True, False, True], [False, False, True]])
    out = eager_or_compiled(lambda t: t[:, ::-1], tp.Tensor(a))
    assert np.array_equal(np.from_dlpack(out), a[:, ::-1])


def test_rank0_tensor_with_none_and_ellipsis(eager_or_compiled):
    out = eager_or_compiled(lambda t: t[None, ..., None], tp.Tensor(np.float32(3.5)))
    assert out.shape == (1, 1) and out.tolist() == [[3.5]]


def test_trivial_index_returns_input():
    t = tp.Tensor(X)
    assert t[...] is t and t[:, :] is t


# ---- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index,dim,size", [(4, 0, 4), (-5, 0, 4), ((0, 5), 1, 5), ((0, 0, -7), 2, 6)])
def test_out_of_range_index_points_at_user_line(index, dim, size):
    t = tp.Tensor(X)
    with pytest.raises(tp.TripyException, match=rf"Index -?\d+ is out of range for dim {dim}") as e:
        t[index]  # the failing line
    text = str(e.value)
    assert __file__ in text and "t[index]  # the failing line" in text
    assert f"Valid indices for this dim are {-size} to {size - 1}" in text


def test_index_into_empty_dim():
    with pytest.raises(tp.TripyException, match="This dim is empty"):
        tp.Tensor(np.zeros((0, 3), np.float32))[0]


def test_too_many_indices():
    with pytest.raises(tp.TripyException, match=r"too many indices for a tensor of rank 3: got 4"):
        tp.Tensor(X)[0, 0, 0, 0]


def test_two_ellipses():
    with pytest.raises(tp.TripyException, match="only have a single ellipsis"):
        tp.Tensor(X)[..., 0, ...]


def test_zero_step():
    with pytest.raises(tp.TripyException, match="slice step cannot be zero"):
        tp.Tensor(X)[::0]


@pytest.mark.parametrize(
    "index,match",
    [
        ([0, 1], "Use tripy.gather"),
        (1.5, "unsupported index of type float"),
        (True, "unsupported index of type bool"),
        ("a", "unsupported index"),
        (slice(0.5, None), "slice start must be an int"),
    ],
)
def test_unsupported_index_types(index, match):
    with pytest.raises(tp.TripyException, match=match):
        tp.Tensor(X)[index]


def test_tensor_index_must_be_an_integer_tensor():
    with pytest.raises(tp.TripyException, match="must have an integer dtype, but has float32"):
        tp.Tensor(X)[tp.Tensor(1.0)]
    with pytest.raises(
        tp.TripyException, match=r"slice start must be a rank-0 integer tensor, but got one of shape \[2\]"
    ):
        tp.Tensor(X)[tp.Tensor([0, 1]) :]


def test_tensor_step_is_rejected():
    with pytest.raises(tp.TripyException, match="slice step must be an int"):
        tp.Tensor(X)[:: tp.Tensor(2)]


def test_data_dependent_slice_bound_in_compiled_function():
    def f(t, n):
        return t[:n]

    with pytest.raises(tp.TripyException, match="output shape depend on data") as e:
        tp.compile(f, args=[tp.InputInfo((4, 5, 6), tp.float32), tp.InputInfo((), tp.int32)])
    assert "return t[:n]" in str(e.value)
