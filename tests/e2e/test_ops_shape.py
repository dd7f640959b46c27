"""Shape and data-movement ops against NumPy, in eager and compiled mode, with static and dynamic shapes:
flatten, squeeze, unsqueeze, repeat, concatenate, stack, split, flip, pad, gather, copy, expand."""

import numpy as np
import pytest

import tripy as tp

RNG = np.random.default_rng(0)
X = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)


def compile_dynamic(func, *arrays, dynamic=None):
    """Compile `func` with the dims of each input dynamic (all of them unless `dynamic` lists, per input,
    which), range 0 .. size + 4, and run it on `arrays`."""
    infos = []
    for i, a in enumerate(arrays):
        dims = range(a.ndim) if dynamic is None else dynamic[i]
        infos.append(
            tp.InputInfo(
                tuple((0, s, s + 4) if d in dims else s for d, s in enumerate(a.shape)),
                tp.Tensor(np.ascontiguousarray(a)).dtype,
            )
        )
    exe = tp.compile(func, args=infos)
    return exe(*[tp.Tensor(np.ascontiguousarray(a)) for a in arrays])


def as_np(t):
    return np.from_dlpack(t)


# ---- flatten -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("start,end", [(0, -1), (1, -1), (0, 1), (1, 2), (-2, -1), (2, 2), (0, 0)])
def test_flatten(eager_or_compiled, start, end):
    out = eager_or_compiled(lambda t: tp.flatten(t, start, end), tp.Tensor(X))
    s, e = start % 3, end % 3
    expected = X.reshape(X.shape[:s] + (-1,) + X.shape[e + 1 :])
    assert np.array_equal(as_np(out), expected)


def test_flatten_method_and_rank0(eager_or_compiled):
    assert eager_or_compiled(lambda t: t.flatten(start_dim=1), tp.Tensor(X)).shape == (2, 12)
    out = eager_or_compiled(lambda t: t.flatten(), tp.Tensor(np.float32(5)))
    assert out.shape == (1,) and out.tolist() == [5.0]


def test_flatten_dynamic():
    out = compile_dynamic(lambda t: tp.flatten(t, 1), X)
    assert np.array_equal(as_np(out), X.reshape(2, 12))


def test_flatten_errors():
    with pytest.raises(tp.TripyException, match=r"start_dim \(2\) must not come after end_dim \(1\)"):
        tp.flatten(tp.Tensor(X), 2, 1)
    with pytest.raises(tp.TripyException, match="dim 3 is out of range for a tensor of rank 3"):
        tp.flatten(tp.Tensor(X), 3)


# ---- squeeze / unsqueeze --------------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [0, -1, (0, 2), (2, 0), (-3,), 2])
def test_squeeze(eager_or_compiled, dims):
    a = np.arange(5, dtype=np.float32).reshape(1, 5, 1)
    out = eager_or_compiled(lambda t: tp.squeeze(t, dims), tp.Tensor(a))
    assert np.array_equal(as_np(out), np.squeeze(a, dims))


def test_squeeze_method_and_dynamic():
    a = np.arange(5, dtype=np.int32).reshape(1, 5, 1)
    assert tp.Tensor(a).squeeze(0).shape == (5, 1)
    out = compile_dynamic(lambda t: t.squeeze((0, 2)), a, dynamic=[(1,)])
    assert np.array_equal(as_np(out), a.reshape(5))
    # A dynamic dim is taken to be 1 when squeezed.
    out = compile_dynamic(lambda t: t.squeeze(0), a)
    assert np.array_equal(as_np(out), a[0])


def test_squeeze_errors():
    with pytest.raises(tp.TripyException, match=r"only dims of size 1 can be removed, but dim 1 .* has size 5") as e:
        tp.squeeze(tp.Tensor(np.zeros((1, 5), np.float32)), (0, 1))
    assert __file__ in str(e.value)
    with pytest.raises(tp.TripyException, match="name a dimension more than once"):
        tp.squeeze(tp.Tensor(np.zeros((1, 1), np.float32)), (0, -2))


@pytest.mark.parametrize("dim", [-4, -3, -2, -1, 0, 1, 2, 3])
def test_unsqueeze(eager_or_compiled, dim):
    out = eager_or_compiled(lambda t: tp.unsqueeze(t, dim), tp.Tensor(X))
    assert np.array_equal(as_np(out), np.expand_dims(X, dim))


def test_unsqueeze_method_and_dynamic():
    assert tp.Tensor(X).unsqueeze(1).shape == (2, 1, 3, 4)
    assert np.array_equal(as_np(compile_dynamic(lambda t: t.unsqueeze(-1), X)), X[..., None])


def test_unsqueeze_errors():
    with pytest.raises(tp.TripyException, match=r"(?s)dim 4 is out of range for a tensor of rank 3.*\[-4, 3\]"):
        tp.unsqueeze(tp.Tensor(X), 4)


# ---- repeat ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("repeats", [0, 1, 3])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_repeat(eager_or_compiled, repeats, dim):
    out = eager_or_compiled(lambda t: tp.repeat(t, repeats, dim), tp.Tensor(X))
    assert np.array_equal(as_np(out), np.repeat(X, repeats, dim))


def test_repeat_by_dimension_size_and_dynamic():
    t = tp.Tensor(X)
    assert np.array_equal(as_np(tp.repeat(t, t.shape[0], 2)), np.repeat(X, 2, 2))
    out = compile_dynamic(lambda a: tp.repeat(a, a.shape[0], 1), X)
    assert np.array_equal(as_np(out), np.repeat(X, 2, 1))


def test_repeat_errors():
    with pytest.raises(tp.TripyException, match="repeats must be non-negative"):
        tp.repeat(tp.Tensor(X), -1, 0)
    with pytest.raises(tp.TripyException, match="repeats must be an int or a DimensionSize"):
        tp.repeat(tp.Tensor(X), 1.5, 0)
    with pytest.raises(tp.TripyException, match="at least one dim"):
        tp.repeat(tp.Tensor(1.0), 2, 0)


# ---- concatenate / stack --------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_concatenate(eager_or_compiled, dim):
    shapes = [list(X.shape) for _ in range(3)]
    for i, s in enumerate(shapes):
        s[dim] = i + 1
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    out = eager_or_compiled(lambda a, b, c: tp.concatenate([a, b, c], dim), *[tp.Tensor(a) for a in arrays])
    assert np.array_equal(as_np(out), np.concatenate(arrays, dim))


def test_concatenate_single_and_dynamic():
    t = tp.Tensor(X)
    assert tp.concatenate([t], 0) is t
    out = compile_dynamic(lambda a, b: tp.concatenate((a, b), 1), X, X[:, :1])
    assert np.array_equal(as_np(out), np.concatenate([X, X[:, :1]], 1))


def test_concatenate_errors():
    a, b = tp.Tensor(X), tp.Tensor(X[0])
    with pytest.raises(
        tp.TripyException, match=r"same rank, but tensor 0 has shape \[2, 3, 4\] and tensor 1 has shape"
    ):
        tp.concatenate([a, b], 0)
    with pytest.raises(
        tp.TripyException,
        match=r"'tensors\[0\]' and 'tensors\[1\]' must have the same data type, but got float32 and int32",
    ):
        tp.concatenate([a, tp.Tensor(X.astype(np.int32))], 0)
    with pytest.raises(tp.TripyException, match="must match in every dim except dim 0"):
        tp.concatenate([a, tp.Tensor(X[:, :2].copy())], 0)
    with pytest.raises(tp.TripyException, match="non-empty list"):
        tp.concatenate([], 0)
    with pytest.raises(tp.TripyException, match="rank-0 tensors cannot be concatenated"):
        tp.concatenate([tp.Tensor(1.0), tp.Tensor(2.0)], 0)
    with pytest.raises(tp.TripyException, match="dim 3 is out of range"):
        tp.concatenate([a, a], 3)


@pytest.mark.parametrize("dim", [0, 1, 3, -1, -4])
def test_stack(eager_or_compiled, dim):
    arrays = [RNG.standard_normal(X.shape).astype(np.float32) for _ in range(3)]
    out = eager_or_compiled(lambda a, b, c: tp.stack([a, b, c], dim), *[tp.Tensor(a) for a in arrays])
    assert np.array_equal(as_np(out), np.stack(arrays, dim))


def test_stack_scalars_and_dynamic(eager_or_compiled):
    out = eager_or_compiled(lambda a, b: tp.stack([a, b]), tp.Tensor(1), tp.Tensor(2))
    assert out.tolist() == [1, 2]
    assert np.array_equal(as_np(compile_dynamic(lambda a, b: tp.stack([a, b], 1), X, X + 1)), np.stack([X, X + 1], 1))


def test_stack_errors():
    with pytest.raises(tp.TripyException, match=r"same shape, but tensor 0 has shape \[2, 3, 4\] and tensor 1"):
        tp.stack([tp.Tensor(X), tp.Tensor(X[:, :1].copy())])
    with pytest.raises(tp.TripyException, match="dim 4 is out of range for stacking tensors of rank 3"):
        tp.stack([tp.Tensor(X)], 4)
    with pytest.raises(tp.TripyException, match="must be a sequence of tripy.Tensor"):
        tp.stack([tp.Tensor(X), X])


# ---- split ---------------------------------------------------------------------------------------------


def _split_ref(a, n_or_sizes, dim):
    size = a.shape[dim]
    if isinstance(n_or_sizes, int):
        chunk = -(-size // n_or_sizes)
        starts = [min(i * chunk, size) for i in range(n_or_sizes)]
        stops = starts[1:] + [size]
    else:
        stops = list(np.cumsum(n_or_sizes))
        starts = [0] + stops[:-1]
    index = [slice(None)] * a.ndim
    result = []
    for lo, hi in zip(starts, stops):
        index[dim] = slice(lo, hi)
        result.append(a[tuple(index)])
    return result


@pytest.mark.parametrize(
    "n_or_sizes,dim", [(1, 0), (2, 0), (3, 1), (2, 1), (4, 2), (3, 2), (5, 1), ([1, 2], 1), ([0, 4, 0], -1), ([2], 0)]
)
def test_split(eager_or_compiled, n_or_sizes, dim):
    outs = eager_or_compiled(lambda t: tp.split(t, n_or_sizes, dim), tp.Tensor(X))
    expected = _split_ref(X, n_or_sizes, dim)
    assert isinstance(outs, (tuple, list)) and len(outs) == len(expected)
    for o, e in zip(outs, expected):
        assert o.shape == e.shape and np.array_equal(as_np(o), e)


def test_split_non_divisible_gives_smaller_last_pieces():
    a = tp.arange(5, dtype=tp.int32)
    assert [p.tolist() for p in tp.split(a, 3)] == [[0, 1], [2, 3], [4]]
    assert [p.tolist() for p in tp.split(tp.arange(4, dtype=tp.int32), 3)] == [[0, 1], [2, 3], []]


@pytest.mark.parametrize("n_or_sizes", [2, 3, [1, 1, 2]])
def test_split_dynamic(n_or_sizes):
    exe = tp.compile(lambda t: tp.split(t, n_or_sizes, 1), args=[tp.InputInfo((2, (1, 4, 9), 3), tp.float32)])
    for n in (4, 7) if not isinstance(n_or_sizes, list) else (4,):
        a = RNG.standard_normal((2, n, 3)).astype(np.float32)
        outs = exe(tp.Tensor(a))
        for o, e in zip(outs, _split_ref(a, n_or_sizes, 1)):
            assert np.array_equal(as_np(o), e)


def test_split_errors():
    t = tp.Tensor(X)
    with pytest.raises(tp.TripyException, match=r"the sizes \[1, 1\] add up to 2, but dim 1 .* has size 3") as e:
        tp.split(t, [1, 1], dim=1)
    assert __file__ in str(e.value) and "tp.split(t, [1, 1], dim=1)" in str(e.value)
    with pytest.raises(tp.TripyException, match="number of pieces must be positive"):
        tp.split(t, 0)
    with pytest.raises(tp.TripyException, match="list of sizes must not be empty"):
        tp.split(t, [])
    with pytest.raises(tp.TripyException, match="sizes must be non-negative ints"):
        tp.split(t, [3, -1])
    with pytest.raises(tp.TripyException, match="dim 3 is out of range"):
        tp.split(t, 2, 3)


# ---- flip ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), [1], (0, 1, 2)])
def test_flip(eager_or_compiled, dim):
    out = eager_or_compiled(lambda t: tp.flip(t, dim=dim), tp.Tensor(X))
    assert np.array_equal(as_np(out), np.flip(X, dim))


def test_flip_dynamic_and_rank0():
    assert np.array_equal(as_np(compile_dynamic(lambda t: tp.flip(t, (0, 2)), X)), np.flip(X, (0, 2)))
    assert tp.flip(tp.Tensor(3.0)).tolist() == 3.0


def test_flip_errors():
    with pytest.raises(tp.TripyException, match="name a dimension more than once"):
        tp.flip(tp.Tensor(X), (1, -2))
    with pytest.raises(tp.TripyException, match="dim 3 is out of range"):
        tp.flip(tp.Tensor(X), 3)


# ---- pad -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pad", [((0, 0), (0, 0), (0, 0)), ((1, 0), (0, 2), (3, 1)), ((0, 0), (-1, 1), (2, -3)), ((2, 2), (0, -3), (0, 0))]
)
@pytest.mark.parametrize("value", [0, -1.5])
def test_pad(eager_or_compiled, pad, value):
    out = eager_or_compiled(lambda t: tp.pad(t, pad, value=value), tp.Tensor(X))
    padded = np.pad(X, [(max(lo, 0), max(hi, 0)) for lo, hi in pad], constant_values=value)
    index = tuple(slice(-min(lo, 0), padded.shape[d] + min(hi, 0)) for d, (lo, hi) in enumerate(pad))
    assert np.array_equal(as_np(out), padded[index])


@pytest.mark.parametrize(
    "dtype,value", [(np.int32, 7), (np.int64, -2), (np.bool_, True), (np.bool_, 0), (np.float16, 0.5)]
)
def test_pad_dtypes(eager_or_compiled, dtype, value):
    a = (X[0] % 2).astype(dtype)
    out = eager_or_compiled(lambda t: tp.pad(t, ((1, 1), (2, 0)), value=value), tp.Tensor(a))
    assert np.array_equal(as_np(out), np.pad(a, ((1, 1), (2, 0)), constant_values=value))


def test_pad_with_dimension_sizes_and_dynamic():
    t = tp.Tensor(X)
    out = tp.pad(t, ((0, t.shape[0]), (1, 1), (t.shape[0] - 3, 0)))
    expected = np.pad(X, ((0, 2), (1, 1), (0, 0)))[:, :, 1:]
    assert np.array_equal(as_np(out), expected)

    def f(a):
        return tp.pad(a, ((a.shape[0], 0), (0, 1), (1, -1)), value=9)

    out = compile_dynamic(f, X)
    expected = np.pad(X, ((2, 0), (0, 1), (1, 0)), constant_values=9)[:, :, :-1]
    assert np.array_equal(as_np(out), expected)


def test_pad_errors():
    t = tp.Tensor(X)
    with pytest.raises(tp.TripyException, match=r"one \(before, after\) pair per dim .* rank 3 .* got 2 pair"):
        tp.pad(t, ((1, 1), (1, 1)))
    with pytest.raises(tp.TripyException, match="unsupported padding mode 'symmetric'"):
        tp.pad(t, ((1, 1),) * 3, mode="symmetric")
    with pytest.raises(tp.TripyException, match="non-integer value 0.5"):
        tp.pad(tp.Tensor(X.astype(np.int32)), ((1, 1),) * 3, value=0.5)
    with pytest.raises(tp.TripyException, match=r"padding \(-2, -1\) of dim 0 \(size 2\) would leave a negative size"):
        tp.pad(t, ((-2, -1), (0, 0), (0, 0)))
    with pytest.raises(tp.TripyException, match=r"sequence of \(before, after\) pairs"):
        tp.pad(t, ((1, 1, 1), (0, 0), (0, 0)))
    with pytest.raises(tp.TripyException, match="argument 'pad' must be a sequence"):
        tp.pad(t, (1, 1, 1))
    with pytest.raises(tp.TripyException, match="padding amounts must be ints"):
        tp.pad(t, ((1.0, 1), (0, 0), (0, 0)))


# ---- gather --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("index", [1, [0, 1], [[1, 0, 1], [0, 0, 1]], [-1, -2, 0]])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather(eager_or_compiled, dim, index, index_dtype):
    idx = np.array(index, dtype=index_dtype)
    out = eager_or_compiled(lambda t, i: tp.gather(t, dim, i), tp.Tensor(X), tp.Tensor(idx))
    expected = np.take(X, idx, axis=dim)
    assert out.shape == expected.shape and np.array_equal(as_np(out), expected)


def test_gather_dynamic():
    idx = np.array([[2, -1], [0, 1]], dtype=np.int32)
    out = compile_dynamic(lambda t, i: tp.gather(t, 2, i), X, idx)
    assert np.array_equal(as_np(out), np.take(X, idx, axis=2))
    out = compile_dynamic(lambda t, i: tp.gather(t, 0, i), X, idx[:, :1] % 2, dynamic=[(0, 2), (0,)])
    assert np.array_equal(as_np(out), np.take(X, idx[:, :1] % 2, axis=0))


def test_gather_out_of_range_indices_are_clamped():
    out = tp.gather(tp.Tensor([10, 20, 30]), 0, tp.Tensor([5, -7]))
    assert out.tolist() == [30, 10]


def test_gather_errors():
    t = tp.Tensor(X)
    with pytest.raises(tp.TripyException, match="tripy.gather does not support dtype float32 for argument 'index'"):
        tp.gather(t, 0, tp.Tensor([0.0]))
    with pytest.raises(tp.TripyException, match="dim 3 is out of range"):
        tp.gather(t, 3, tp.Tensor([0]))
    with pytest.raises(tp.TripyException, match="argument 'index' must be tripy.Tensor"):
        tp.gather(t, 0, [0, 1])


# ---- copy ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
def test_copy_is_a_real_copy(dtype):
    a = (X % 3).astype(dtype)
    src = tp.Tensor(a) + tp.Tensor(a) if dtype is not np.bool_ else tp.Tensor(a)
    cpu = tp.device("cpu")
    out = tp.copy(src, cpu)
    assert out.device == cpu and out.dtype == src.dtype
    assert np.array_equal(as_np(out), as_np(src))
    assert as_np(out).__array_interface__["data"][0] != as_np(src).__array_interface__["data"][0]
    assert src.copy(cpu).tolist() == src.tolist()


def test_copy_errors():
    t = tp.Tensor(X)
    with pytest.raises(
        tp.TripyException, match=r"(?s)device must be a tripy.device, but got the string 'cpu'.*tp.device\('cpu'\)"
    ):
        tp.copy(t, "cpu")
    with pytest.raises(tp.TripyException, match="device must be a tripy.device"):
        tp.copy(t, 0)
    with pytest.raises(tp.TripyException, match="not available"):
        tp.copy(t, tp.device("gpu"))
    with pytest.raises(
        tp.TripyException, match="cannot copy a tensor computed from the inputs of a function being compiled"
    ):
        tp.compile(lambda a: tp.copy(a * 2, tp.device("cpu")), args=[tp.InputInfo((2,), tp.float32)])


# ---- expand --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src,sizes",
    [((3, 1), (3, 4)), ((1,), (2, 5)), ((2, 1, 4), (3, 2, -1, 4)), ((), (2, 2)), ((1, 3), (-1, 3)), ((1, 1), (0, 5))],
)
def test_expand(eager_or_compiled, src, sizes):
    a = RNG.standard_normal(src).astype(np.float32)
    out = eager_or_compiled(lambda t: tp.expand(t, sizes), tp.Tensor(a))
    target = tuple(a.shape[i - (len(sizes) - a.ndim)] if s == -1 else s for i, s in enumerate(sizes))
    assert np.array_equal(as_np(out), np.broadcast_to(a, target))


def test_expand_method_and_dynamic():
    a = np.arange(3, dtype=np.float32).reshape(3, 1)
    assert np.array_equal(as_np(tp.Tensor(a).expand((2, 3, 4))), np.broadcast_to(a, (2, 3, 4)))
    out = compile_dynamic(lambda t: tp.expand(t, (2, t.shape[0], 5)), a, dynamic=[(0,)])
    assert np.array_equal(as_np(out), np.broadcast_to(a, (2, 3, 5)))


def test_expand_errors():
    with pytest.raises(tp.TripyException, match="Cannot expand dim 0 of size 3 to size 4"):
        tp.expand(tp.Tensor(np.zeros((3, 1), np.float32)), (4, 2))
    with pytest.raises(tp.TripyException, match="Cannot expand a tensor of rank 2"):
        tp.expand(tp.Tensor(np.zeros((3, 1), np.float32)), (3,))
