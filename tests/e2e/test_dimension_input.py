"""tp.DimensionInputInfo: compiled functions that take a shape value (a DimensionSize) as a runtime
input, as nvtripy 0.1.7's do; checked against NumPy in compiled and eager mode."""

import warnings

import numpy as np
import pytest

import tripy as tp
import tripy_backend


def _line_of(marker):
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


def _rows(x, n):
    return tp.reshape(x + x, (n, -1))


@pytest.fixture(scope="module")
def rows_exe():
    return tp.compile(_rows, args=[tp.InputInfo((4, 4), tp.float32), tp.DimensionInputInfo((1, 2, 8))])


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_reshape_to_a_runtime_size(rows_exe, n):
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    expected = (x + x).reshape(n, -1)
    compiled = rows_exe(tp.Tensor(x), tp.DimensionSize(n))
    eager = _rows(tp.Tensor(x), tp.DimensionSize(n))
    assert np.array_equal(np.from_dlpack(compiled), expected) and np.array_equal(np.from_dlpack(eager), expected)
    assert np.array_equal(np.asarray(rows_exe(tp.Tensor(x), n=n)), expected)  # an int, by keyword


def _filled(n, m):
    return tp.full((n, m + 1), 2.5) * tp.arange(n, dtype=tp.float32).unsqueeze(1)


def test_sizes_compile_once_for_the_whole_range():
    exe = tp.compile(_filled, args=[tp.DimensionInputInfo((0, 3, 9)), tp.DimensionInputInfo((2, 2, 2))])
    for n in (0, 1, 3, 5, 9):
        expected = np.full((n, 3), 2.5, np.float32) * np.arange(n, dtype=np.float32)[:, None]
        before = tripy_backend.compilation_count()
        assert np.array_equal(np.asarray(exe(tp.DimensionSize(n), 2)), expected)
        assert tripy_backend.compilation_count() == before  # the range was compiled by tp.compile
        assert np.array_equal(np.asarray(_filled(tp.DimensionSize(n), tp.DimensionSize(2))), expected)


def test_value_slices_a_tensor():
    exe = tp.compile(lambda x, n: x[:n] * 2, args=[tp.InputInfo((6, 2), tp.int32), tp.DimensionInputInfo((0, 2, 6))])
    x = np.arange(12, dtype=np.int32).reshape(6, 2)
    for n in (0, 3, 6):
        assert np.array_equal(np.asarray(exe(tp.Tensor(x), n)), x[:n] * 2)


def test_save_and_load(rows_exe, tmp_path):
    path = tmp_path / "rows.tpexe"
    rows_exe.save(path)
    loaded = tp.Executable.load(path)
    assert loaded.input_infos == rows_exe.input_infos
    assert (
        str(loaded) == "Executable(x: InputInfo(shape=(4, 4), dtype=float32), "
        "n: DimensionInputInfo(min=1, opt=2, max=8)) -> Tensor"
    )
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    assert np.array_equal(np.asarray(loaded(tp.Tensor(x), tp.DimensionSize(8))), (x + x).reshape(8, 2))


def test_info_values():
    info = tp.DimensionInputInfo(value_bounds=(1, tp.ones((3, 4)).shape[1], 6))
    assert (info.min, info.opt, info.max) == (1, 4, 6)
    assert info.value_bounds == tp.Bounds(min=(1,), opt=(4,), max=(6,))
    assert info == tp.DimensionInputInfo((1, 4, 6)) and info != tp.DimensionInputInfo((1, 4, 7))
    assert str(info) == "DimensionInputInfo(min=1, opt=4, max=6)"


@pytest.mark.parametrize(
    "bounds, message",
    [
        ((1, 2), "must be a (min, opt, max) triple"),
        ((3, 2, 4), "must satisfy min <= opt <= max"),
        ((-1, 2, 4), "the minimum -1 is negative"),
        ((1, 2.5, 4), "bounds must be ints, but got float"),
    ],
)
def test_bad_bounds(bounds, message):
    with pytest.raises(tp.TripyException, match=None) as err:
        tp.DimensionInputInfo(bounds)  # MARK-bad-bounds
    assert message in str(err.value) and f"{__file__}:{_line_of('# MARK-bad-bounds')}" in str(err.value)


@pytest.mark.parametrize(
    "value, message",
    [
        (tp.DimensionSize(9), "Input 'n' is 9, which is outside the allowed range [1, 8]"),
        (0, "Input 'n' is 0, which is outside the allowed range [1, 8]"),
        (2.0, "Input 'n' must be a tripy.DimensionSize (or an int), but got float"),
        (tp.Tensor([2]), "but got a tensor of data type int32 and rank 1"),
    ],
)
def test_bad_values(rows_exe, value, message):
    with pytest.raises(tp.TripyException) as err:
        rows_exe(tp.ones((4, 4)), value)  # MARK-bad-value
    text = str(err.value)
    assert message in text and f"{__file__}:{_line_of('# MARK-bad-value')}" in text


def test_value_the_program_cannot_take_is_reported_at_the_users_op(rows_exe):
    # 16 elements do not make 3 rows: reported at the reshape in _rows
    with pytest.raises(tp.TripyException) as err:
        rows_exe(tp.ones((4, 4)), 3)
    assert f"{__file__}:{_line_of('return tp.reshape(x + x, (n, -1))')}" in str(err.value)


def test_converting_the_value_while_tracing_is_an_error_without_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(tp.TripyException, match="Cannot evaluate a tensor while tripy.compile"):
            tp.compile(
                lambda x, n: tp.reshape(x, (int(n), -1)),
                args=[tp.InputInfo((4, 4), tp.float32), tp.DimensionInputInfo((1, 2, 8))],
            )
    assert caught == []  # (the "baked in as a constant" warning is for tensors that can be)
