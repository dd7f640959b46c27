"""A range of rows keeps ``x @ W^T``'s transpose in the program: the buckets of many rows read the weight as stored, and
those of few rows read copies that the backend makes once, in the background (``passes.transposed_weights``), so that
tp.compile returns without them. Every size is right, in eager and compiled mode, and a saved executable brings its
copies' program (it loads without compiling) in a form an older tripy reads too (it compiles those buckets)."""

import json
import zipfile

import numpy as np
import pytest

import tripy as tp
import tripy_backend
from tripy_backend import background

RNG = np.random.default_rng(3)
ROWS = (1, 8, 64)
SIZES = (1, 2, 5, 8, 13, 31, 40, 64)


@pytest.fixture(scope="module")
def layer():
    linear = tp.Linear(768, 1024)
    linear.weight = tp.Tensor(RNG.standard_normal((1024, 768)).astype(np.float32) / 30)
    linear.bias = tp.Tensor(RNG.standard_normal(1024).astype(np.float32))
    return linear, np.asarray(linear.weight), np.asarray(linear.bias)


def compile_range(linear, wait=True):
    return tp.compile(linear, args=[tp.InputInfo((1, ROWS, 768), tp.float32)], wait=wait)


def check(run, w, b, sizes=SIZES):
    for n in sizes:
        x = RNG.standard_normal((1, n, 768)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(run(tp.Tensor(x))), x @ w.T + b, rtol=1e-4, atol=1e-4)


def test_eager_and_every_size_of_the_range_are_right(layer):
    linear, w, b = layer
    check(linear, w, b, (1, 5))  # eager
    check(compile_range(linear), w, b)


def test_small_buckets_read_copies_made_once_after_tp_compile_returns(layer, logged):
    linear, w, b = layer

    def compile_and_wait():
        exe = compile_range(linear, wait=False)
        check(exe, w, b, (1, 5, 13, 2, 7))  # (while the plan compiles: in stand-ins, then in buckets as they are ready)
        exe.wait()
        return exe

    exe, text = logged(compile_and_wait)
    made = "(copies of 1 transposed weight(s) for the buckets of few rows) in "
    assert text.count(made) == 1
    assert text.index("ready in ") < text.index(made)  # (the cover reads none)
    programs = exe._program.ranges.programs
    assert not programs[(ROWS[2],)].transposed  # (the cover: 64 rows, read as stored, see cpu_plan)
    assert list(programs[(1,)].transposed) in ([], [1])  # (one row: as stored, where XLA's product reads it so)
    assert list(programs[(8,)].transposed) == [1]
    check(exe, w, b)


def test_a_saved_executable_brings_its_copies_and_loads_without_compiling(layer, tmp_path):
    linear, w, b = layer
    path = str(tmp_path / "linear.tpexe")
    compile_range(linear).save(path)
    background.wait_all()  # (other tests' executables may still compile in the background)
    before = tripy_backend.compilation_count(background=True)
    check(tp.Executable.load(path), w, b)
    assert tripy_backend.compilation_count(background=True) == before


def test_an_older_tripy_compiles_the_buckets_that_read_copies(layer, tmp_path):
    # An older tripy ignores the entries it does not know ("reads_copies", "copiers"): it finds no code for the
    # buckets that read copies, compiles them from the StableHLO (which transposes in the program) and is right.
    linear, w, b = layer
    path, older = str(tmp_path / "linear.tpexe"), str(tmp_path / "older.tpexe")
    compile_range(linear).save(path)
    with zipfile.ZipFile(path) as new, zipfile.ZipFile(older, "w") as old:
        for item in new.infolist():
            data = new.read(item)
            if item.filename == "tripy_executable.json":
                header = json.loads(data)
                compiled = header["compiled"]
                assert compiled["copiers"] and any("reads_copies" in p for p in compiled["programs"])
                assert all(p["size"] == 0 for p in compiled["programs"] if "reads_copies" in p)
                del compiled["copiers"]
                for p in compiled["programs"]:
                    p.pop("reads_copies", None)
                data = json.dumps(header).encode()
            old.writestr(item, data)
    background.wait_all()
    before = tripy_backend.compilation_count(background=True)
    check(tp.Executable.load(older), w, b)
    assert tripy_backend.compilation_count(background=True) > before
