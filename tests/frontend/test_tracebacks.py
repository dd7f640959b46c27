"""Traceback filtering: the traceback of a tripy error shows the user's frames only (the report names
the user's line); TRIPY_TRACEBACK_FILTERING=off keeps tripy's frames."""

import os
import traceback

import numpy as np
import pytest

import tripy as tp
import tripy_backend
import tripy_flatir
import tripy_frontend
import tripy_trace

_PACKAGE_DIRS = tuple(
    os.path.dirname(m.__file__) + os.sep for m in (tp, tripy_frontend, tripy_trace, tripy_backend, tripy_flatir)
)


def _tripy_frames(error):
    return [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(_PACKAGE_DIRS)]


def _add_mismatched():
    return tp.ones((3, 4)) + tp.ones((3, 3))  # MARK


def test_shape_error_traceback_has_no_tripy_frames():
    with pytest.raises(tp.TripyException) as info:
        _add_mismatched()
    frames = traceback.extract_tb(info.value.__traceback__)
    assert _tripy_frames(info.value) == []
    assert frames[-1].name == "_add_mismatched" and "# MARK" in frames[-1].line
    assert "not compatible for broadcasting" in str(info.value)


def test_filtering_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("TRIPY_TRACEBACK_FILTERING", "off")
    with pytest.raises(tp.TripyException) as info:
        _add_mismatched()
    assert _tripy_frames(info.value)  # tripy's own frames, for its developers


def _bad_calls():
    exe = tp.compile(lambda x: x + 1, args=[tp.InputInfo((2,), tp.float32)])

    class Unset(tp.Module):
        def __init__(self):
            super().__init__()
            self.linear = tp.Linear(2, 2)

        def forward(self, x):
            return self.linear(x)

    yield lambda: tp.reshape(tp.ones((2, 3)), (4, 4))  # a public function
    yield lambda: tp.exp(tp.ones((2,), dtype=tp.int32))  # a dtype rule
    yield lambda: exe(tp.ones((3,)))  # an executable's argument check
    yield lambda: Unset()(tp.ones((1, 2)))  # a module with parameters never set
    yield lambda: bool(tp.ones((2, 2)))  # a tensor method
    yield lambda: tp.Tensor(object())  # the constructor (a boundary of its own, as are eval and __dlpack__)
    yield lambda: tp.Tensor(np.ones((2, 3), np.float32).T)  # a refused (not row-major) array


@pytest.mark.parametrize("index", range(7))
def test_every_kind_of_entry_point_filters(index):
    call = list(_bad_calls())[index]
    with pytest.raises(tp.TripyException) as info:
        call()
    assert _tripy_frames(info.value) == []


def test_internal_errors_keep_every_frame():
    def broken():
        raise AssertionError("a bug in tripy")

    with pytest.raises(AssertionError) as info:
        tp.compile(lambda x: broken(), args=[tp.InputInfo((2,), tp.float32)])
    assert _tripy_frames(info.value)  # not a TripyException: nothing is hidden
