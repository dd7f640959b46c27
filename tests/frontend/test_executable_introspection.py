"""Executable's public introspection: the outputs' data types and shapes (``output_infos``) and the argument
checks of a call without running it (``check_inputs``), the same messages as a call gives."""

import numpy as np
import pytest

import tripy as tp


@pytest.fixture(scope="module")
def exe():
    batch = tp.NamedDimension("batch", 1, 2, 8)
    return tp.compile(
        lambda x, y: (x * 2.0, tp.sum(y, dim=1)),
        args=[tp.InputInfo((batch, 3), tp.float32), tp.InputInfo((batch, (1, 2, 4)), tp.int32)],
    )


def test_output_infos_are_named_in_order_with_dynamic_dims(exe):
    assert exe.output_infos == {
        "output_0": tp.OutputInfo(tp.float32, (-1, 3)),
        "output_1": tp.OutputInfo(tp.int32, (-1,)),
    }
    single = tp.compile(lambda x: x + 1, args=[tp.InputInfo((2,), tp.int8)])
    assert single.output_infos == {"output_0": tp.OutputInfo(tp.int8, (2,))}


def test_output_infos_survive_save_and_load(exe, tmp_path):
    exe.save(str(tmp_path / "e.tpexe"))
    assert tp.Executable.load(str(tmp_path / "e.tpexe")).output_infos == exe.output_infos


def _args(rows_x=2, rows_y=2, width=3, dtype=np.int32):
    return tp.Tensor(np.ones((rows_x, 3), np.float32)), tp.Tensor(np.ones((rows_y, width), dtype))


def test_check_inputs_accepts_what_a_call_accepts(exe):
    x, y = _args()
    assert exe.check_inputs(x, y) is None
    assert exe.check_inputs(x, y=y) is None
    assert np.array_equal(np.from_dlpack(exe(x, y)[1]), [3, 3])


@pytest.mark.parametrize(
    "args,message",
    [
        (dict(width=5), "dim 1 is 5, which is outside the allowed range [1, 4]"),
        (dict(dtype=np.float32), "data type"),
        (dict(rows_y=3), "disagree on the named dimension 'batch'"),
    ],
)
def test_check_inputs_raises_what_a_call_raises(exe, args, message):
    x, y = _args(**args)
    with pytest.raises(tp.TripyException) as checked:
        exe.check_inputs(x, y)
    with pytest.raises(tp.TripyException) as called:
        exe(x, y)
    assert message in str(checked.value)
    assert str(checked.value).split("\n\n")[-1] == str(called.value).split("\n\n")[-1]  # (the same report)


def test_check_inputs_binds_by_name_like_a_call(exe):
    x, y = _args()
    with pytest.raises(tp.TripyException, match="Missing input"):
        exe.check_inputs(x)
    with pytest.raises(tp.TripyException, match="no input named 'z'"):
        exe.check_inputs(x, z=y)
