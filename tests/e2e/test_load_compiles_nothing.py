"""A saved executable carries every program it runs, compiled, beside its portable StableHLO: loading it in a
new process on the same compiler and host compiles nothing, and neither does the first call (counted through
the backend), for a static program, a range of bounded programs, a range with many exact sizes and a
program with no bounded form. On another compiler or host (a doctored fingerprint) load says so once and
compiles from the StableHLO; files saved before the static code was recorded still load."""

import io
import json
import os
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pytest

import tripy as tp
import tripy_backend
from tripy_backend import range_plan

RNG = np.random.default_rng(0)
W = RNG.standard_normal((8, 8)).astype(np.float32)


class MLP(tp.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = tp.Linear(64, 128)
        self.fc2 = tp.Linear(128, 16)

    def forward(self, x):
        return self.fc2(tp.relu(self.fc1(x)))


def _mlp():
    m = MLP()
    m.initialize_dummy_parameters()
    w = {k: np.from_dlpack(v).astype(np.float64) for k, v in m.state_dict().items()}
    return m, lambda x: np.maximum(x @ w["fc1.weight"].T + w["fc1.bias"], 0) @ w["fc2.weight"].T + w["fc2.bias"]


def _cases():
    """name -> (function, InputInfo, sizes of dim 0 to call it at, NumPy reference, bounded programs only?)"""
    mlp, mlp_reference = _mlp()
    return {
        "static": (
            lambda x: tp.relu(x @ tp.Tensor(W)) + 1.0,
            tp.InputInfo((4, 8), tp.float32),
            [4],
            lambda x: np.maximum(x @ W, 0) + 1.0,
            False,
        ),
        "static_module": (mlp, tp.InputInfo((4, 64), tp.float32), [4], mlp_reference, False),
        "range": (mlp, tp.InputInfo(((1, 8, 32), 64), tp.float32), [1, 5, 8, 32], mlp_reference, True),
        "cheap": (
            lambda x: tp.exp(x) * 2.0,
            tp.InputInfo(((1, 20, 100), 8), tp.float32),
            [1, 20, 48, 49, 100],
            lambda x: np.exp(x) * 2.0,
            False,
        ),
        # (a pad by an amount computed from the sizes: a static program per shape. Not a sort: XLA >= 0.7 cannot
        # serialize a sort's comparator, so a sort program compiles at load there.)
        "no_bounded_form": (
            lambda t: tp.pad(t, ((0, t.shape[0]), (0, 0))),
            tp.InputInfo(((2, 3, 6), 8), tp.float32),
            [2, 3, 6],
            lambda x: np.pad(x, ((0, len(x)), (0, 0))),
            False,
        ),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each case compiled and saved: name -> (path, reference, sizes)."""
    root = tmp_path_factory.mktemp("saved")
    out = {}
    for name, (fn, info, sizes, reference, bounded_only) in _cases().items():
        old = range_plan.EXACT_SIZES
        range_plan.EXACT_SIZES = 0 if bounded_only else old
        try:
            exe = tp.compile(fn, args=[info])
        finally:
            range_plan.EXACT_SIZES = old
        path = root / f"{name}.tpexe"
        exe.save(str(path))
        out[name] = (path, reference, sizes, info.shape_bounds.opt[1])
    return out


_LOAD_AND_CALL = textwrap.dedent("""
    import json, sys, numpy as np, tripy as tp, tripy_backend
    counts = {}
    for name, path, cols, sizes in json.loads(sys.argv[1]):
        before = tripy_backend.compilation_count()
        exe = tp.Executable.load(path)
        loaded = tripy_backend.compilation_count()
        for n in sizes:
            x = np.random.default_rng(n).standard_normal((n, cols)).astype(np.float32)
            np.save(f"{sys.argv[2]}/{name}-{n}.npy", np.from_dlpack(exe(tp.Tensor(x))))
        counts[name] = [loaded - before, tripy_backend.compilation_count() - loaded]
    print(json.dumps(counts))
""")


def test_load_and_first_calls_compile_nothing_in_a_new_process(saved, tmp_path):
    jobs = [(name, str(path), cols, sizes) for name, (path, _, sizes, cols) in saved.items()]
    env = dict(os.environ, TRIPY_CACHE_DIR="")  # (the persistent cache off: nothing could come from it)
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_CALL, json.dumps(jobs), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "compiling it again" not in proc.stderr
    counts = json.loads(proc.stdout.splitlines()[-1])
    assert counts == {name: [0, 0] for name in saved}  # (at load, during the calls)
    for name, (_, reference, sizes, cols) in saved.items():
        for n in sizes:
            x = np.random.default_rng(n).standard_normal((n, cols)).astype(np.float32)
            assert np.allclose(np.load(tmp_path / f"{name}-{n}.npy"), reference(x), rtol=1e-4, atol=1e-4), (name, n)


def test_every_program_travels_compiled(saved):
    def compiled_members(name):
        with zipfile.ZipFile(saved[name][0]) as z:
            return sorted(n for n in z.namelist() if n.startswith("compiled/"))

    assert compiled_members("static") == ["compiled/static.bin"]
    # (saved mid-plan: it waits; its rows are independent: no bound 19, ``range_plan.for_rows``)
    assert len(compiled_members("cheap")) == len(range_plan.for_rows(range_plan.bounds_for(1, 20, 100), 1, 20))
    assert len(compiled_members("no_bounded_form")) == 5  # a static program for each of the sizes 2..6


def _header(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("tripy_executable.json"))


def _rewrite(src, dst, edit, members=None):
    """Copy the archive `src` to `dst` with its header edited by `edit(header)` (and `members` replaced)."""
    with zipfile.ZipFile(src) as z:
        contents = {name: z.read(name) for name in z.namelist()}
    header = json.loads(contents["tripy_executable.json"])
    edit(header)
    contents["tripy_executable.json"] = json.dumps(header).encode()
    contents.update(members or {})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in contents.items():
            z.writestr(name, data)
    dst.write_bytes(buf.getvalue())
    return str(dst)


def _load_logged(path):
    """(executable, the compile topic's lines, the warnings' messages, compilations) of loading `path`."""
    old, tp.logger.stream = tp.logger.stream, io.StringIO()
    before = tripy_backend.compilation_count()
    try:
        with tp.logger.use_verbosity("compile"), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exe = tp.Executable.load(path)
        return (
            exe,
            tp.logger.stream.getvalue().splitlines(),
            [str(w.message) for w in caught],
            tripy_backend.compilation_count() - before,
        )
    finally:
        tp.logger.stream = old


def _check(exe, reference, n, cols):
    x = RNG.standard_normal((n, cols)).astype(np.float32)
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), reference(x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["static", "cheap", "no_bounded_form"])
def test_another_fingerprint_compiles_from_the_stablehlo_and_says_so_once(saved, tmp_path, name):
    src, reference, sizes, cols = saved[name]
    path = _rewrite(
        src, tmp_path / "elsewhere.tpexe", lambda h: h["compiled"].update(fingerprint="jaxlib=0.0.0;platform=elsewhere")
    )
    exe, log, warned, compiled = _load_logged(path)
    said = "its compiled code was made by another compiler or on another kind of host; compiling it again"
    assert sum(said in line for line in log) == 1 and log[[said in line for line in log].index(True)].startswith(
        "[compile] executable loaded from"
    )
    assert len(warned) == 1 and said in warned[0]
    assert compiled >= 1  # what it needs, now (the static program; every bucket of the range; the opt shapes)
    for n in sizes:
        _check(exe, reference, n, cols)


def test_compiled_code_that_does_not_load_is_rebuilt_with_a_warning(saved, tmp_path):
    src, reference, _, cols = saved["static"]
    garbage = b"not a compiled program" * 8

    def edit(h):
        h["compiled"]["static"].update(size=len(garbage), sha256=__import__("hashlib").sha256(garbage).hexdigest())

    exe, log, warned, compiled = _load_logged(
        _rewrite(src, tmp_path / "bad.tpexe", edit, {"compiled/static.bin": garbage})
    )
    assert len(warned) == 1 and "its compiled code does not load" in warned[0] and compiled == 1
    _check(exe, reference, 4, cols)


def test_files_without_the_static_code_still_load(saved, tmp_path):
    # as saved before the static program and the specializations were recorded: a static program compiles at
    # load (without a warning), a range's bounded programs load
    src, reference, _, cols = saved["static"]
    exe, _, warned, compiled = _load_logged(_rewrite(src, tmp_path / "old_static.tpexe", lambda h: h.pop("compiled")))
    assert (warned, compiled) == ([], 1)
    _check(exe, reference, 4, cols)

    def old_range(h):
        del h["compiled"]["bounded"], h["compiled"]["specializations"]

    src, reference, sizes, cols = saved["range"]
    exe, _, warned, compiled = _load_logged(_rewrite(src, tmp_path / "old_range.tpexe", old_range))
    assert (warned, compiled) == ([], 0)
    for n in sizes:
        _check(exe, reference, n, cols)


@pytest.mark.parametrize(
    "edit",
    [
        lambda c: c.update(bounded="yes"),
        lambda c: c.update(static=[1]),
        lambda c: c.update(specializations=[{"member": "x", "shapes": [[-2]]}]),
    ],
)
def test_a_bad_description_of_the_compiled_code_is_a_clear_error(saved, tmp_path, edit):
    path = _rewrite(saved["static"][0], tmp_path / "bad.tpexe", lambda h: edit(h["compiled"]))
    with pytest.raises(tp.TripyException, match="its header has an invalid description of the compiled programs"):
        tp.Executable.load(path)
