"""Executables and tensors pickle (as pickle, multiprocessing and Ray ship them): an executable as its saved file in
memory, which a new process loads without compiling (counted through the backend) and runs to the same numbers; a
tensor through host memory, with its dtype, shape and device. Unpickling compiled code is loading it: with
TRIPY_TRUST_COMPILED_CODE=0 the new process compiles from the StableHLO instead. Bad bytes are a clear error."""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tripy as tp
import tripy_backend
from tripy_frontend.compiler.executable import _from_pickle

RNG = np.random.default_rng(0)
W = RNG.standard_normal((8, 4)).astype(np.float32)


def _executables():
    """name -> (executable, NumPy reference, sizes of dim 0 to call it at)"""
    static = tp.compile(lambda x: tp.tanh(tp.relu(x @ tp.Tensor(W)) + 1.0), args=[tp.InputInfo((3, 8), tp.float32)])
    ranged = tp.compile(
        lambda x, y: (tp.tanh(x @ tp.Tensor(W)), x * y),
        args=[tp.InputInfo(((1, 4, 16), 8), tp.float32), tp.InputInfo((8,), tp.float32)],
    )
    return {
        "static": (static, lambda x, y: np.tanh(np.maximum(x @ W, 0) + 1.0), [3]),
        "range": (ranged, lambda x, y: (np.tanh(x @ W), x * y), [1, 5, 16]),
    }


# In a new process: unpickle each executable (counting compiles), call it, and save the results.
_UNPICKLE_AND_CALL = textwrap.dedent("""
    import json, pickle, sys, numpy as np, tripy as tp, tripy_backend
    jobs, out = json.loads(sys.argv[1]), sys.argv[2]
    counts = {}
    for name, sizes in jobs:
        with open(f"{out}/{name}.pkl", "rb") as f:
            data = f.read()
        before = tripy_backend.compilation_count()
        exe = pickle.loads(data)
        loaded = tripy_backend.compilation_count()
        for n in sizes:
            x = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float32)
            y = np.arange(8, dtype=np.float32)
            args = [tp.Tensor(x), tp.Tensor(y)][:len(exe.input_infos)]
            result = exe(*args)
            result = result if isinstance(result, tuple) else (result,)
            np.savez(f"{out}/{name}-{n}.npz", *[np.from_dlpack(r) for r in result])
        counts[name] = [loaded - before, tripy_backend.compilation_count() - loaded]
    print(json.dumps(counts))
""")


def _run_in_new_process(tmp_path, trust, again=False):
    """Pickle each executable (`again`: unpickle it here and pickle what that gave), run it in a new process with
    TRIPY_TRUST_COMPILED_CODE=`trust`, check its numbers; each one's compile counts (at load, in the calls)."""
    executables = _executables()
    for name, (exe, _, _) in executables.items():
        data = pickle.dumps(exe)
        (tmp_path / f"{name}.pkl").write_bytes(pickle.dumps(pickle.loads(data)) if again else data)
    jobs = [(name, sizes) for name, (_, _, sizes) in executables.items()]
    env = dict(os.environ, TRIPY_CACHE_DIR="", TRIPY_TRUST_COMPILED_CODE=trust)
    proc = subprocess.run(
        [sys.executable, "-c", _UNPICKLE_AND_CALL, json.dumps(jobs), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for name, (_, reference, sizes) in executables.items():
        for n in sizes:
            x = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float32)
            expected = reference(x, np.arange(8, dtype=np.float32))
            expected = expected if isinstance(expected, tuple) else (expected,)
            got = np.load(tmp_path / f"{name}-{n}.npz")
            assert len(got.files) == len(expected)
            for i, e in enumerate(expected):
                assert np.allclose(got[f"arr_{i}"], e, rtol=1e-5, atol=1e-5), (name, n, i)
    return json.loads(proc.stdout.splitlines()[-1])


def test_an_unpickled_executable_compiles_nothing_in_a_new_process(tmp_path):
    assert _run_in_new_process(tmp_path, trust="1") == {"static": [0, 0], "range": [0, 0]}  # (at load, in calls)


def test_an_unpickled_executable_pickles_again(tmp_path):
    # (as Ray Serve ships a deployment's arguments: through its controller, which unpickles and pickles them.
    # XLA:CPU serializes a loaded program without its tanh's code: the bytes it was loaded from travel instead.)
    assert _run_in_new_process(tmp_path, trust="1", again=True) == {"static": [0, 0], "range": [0, 0]}


def test_untrusted_compiled_code_is_not_run_when_unpickled(tmp_path):
    counts = _run_in_new_process(tmp_path, trust="0")  # (same numbers: compiled again from the StableHLO)
    assert all(at_load >= 1 for at_load, _ in counts.values()), counts


def test_an_unpickled_executable_keeps_its_signature():
    exe, _, _ = _executables()["range"]
    again = pickle.loads(pickle.dumps(exe))
    assert repr(again) == repr(exe) and list(again.input_infos) == ["x", "y"]
    with pytest.raises(tp.TripyException, match="dim 0 is 17, which is outside the allowed range"):
        again(tp.ones((17, 8)), tp.ones((8,)))


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "it is empty"),
        (b"not an archive", "not a valid archive"),
        ("a string", "its data must be bytes, but got str"),
    ],
)
def test_bad_pickled_bytes_are_a_clear_error(data, message):
    with pytest.raises(tp.TripyException, match="cannot unpickle the executable: .*" + message):
        _from_pickle(data)


def test_damaged_pickled_bytes_are_a_clear_error():
    exe, _, _ = _executables()["static"]
    reduce, (data,) = exe.__reduce__()
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF  # (somewhere in a member: a checksum no longer matches)
    with pytest.raises(tp.TripyException, match="cannot unpickle the executable: .*corrupted"):
        reduce(bytes(damaged))


_TENSORS = {
    "float32": np.arange(6, dtype=np.float32).reshape(2, 3),
    "int32": np.array([[-1, 2], [3, 2**30 - 1]], dtype=np.int32),
    "int64": np.array([2**40, -5], dtype=np.int64),
    "bool": np.array([True, False, True]),
    "float16": np.array([0.5, -1.25], dtype=np.float16),
    "scalar": np.array(3.5, dtype=np.float32),
    "empty": np.zeros((0, 4), dtype=np.float32),
}


def test_tensors_round_trip_through_a_new_process(tmp_path):
    tensors = {name: tp.Tensor(a) for name, a in _TENSORS.items()}
    tensors["bfloat16"] = tp.cast(tp.Tensor([1.5, -2.0]), tp.bfloat16)
    tensors["lazy"] = tp.Tensor(_TENSORS["float32"]) * 2.0  # (evaluated when pickled)
    (tmp_path / "in.pkl").write_bytes(pickle.dumps(tensors))
    # The new process checks the metadata, computes on each tensor and pickles the results back.
    script = textwrap.dedent("""
        import pickle, sys, tripy as tp
        with open(sys.argv[1], "rb") as f:
            tensors = pickle.load(f)
        out = {name: (str(t.dtype), str(t.device), [int(d) for d in t.shape], t.is_evaluated, t + t if
                      t.dtype not in (tp.bool,) else t) for name, t in tensors.items()}
        sys.stdout.buffer.write(pickle.dumps(out))
    """)
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "in.pkl")], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    back = pickle.loads(proc.stdout)
    for name, t in tensors.items():
        dtype, device, shape, evaluated, doubled = back[name]
        assert (dtype, device, shape, evaluated) == (str(t.dtype), "cpu:0", list(np.asarray(t).shape), True)
        expected = np.asarray(t) if t.dtype is tp.bool else np.asarray(t).astype(np.float64) * 2
        assert doubled.dtype is t.dtype
        assert np.array_equal(np.asarray(doubled).astype(expected.dtype), expected), name


def test_dimension_sizes_pickle_as_sizes():
    size = pickle.loads(pickle.dumps(tp.ones((2, 5)).shape[1]))
    assert isinstance(size, tp.DimensionSize) and size == 5 and size + 1 == 6


def test_pickling_does_not_compile_anything_new_for_a_tensor():
    t = tp.Tensor(np.ones((3, 3), np.float32))
    before = tripy_backend.compilation_count()
    again = pickle.loads(pickle.dumps(t))
    assert tripy_backend.compilation_count() == before
    assert np.array_equal(np.from_dlpack(again), np.ones((3, 3), np.float32))


_COMPILE_AND_SAVE = """
import sys
import numpy as np
import tripy as tp
exe = tp.compile(lambda x: tp.tanh(x) * 2.0, args=[tp.InputInfo((4,), tp.float32)])
exe.save(sys.argv[1])
"""

_LOAD_AND_CALL = """
import sys
import numpy as np
import tripy as tp
import tripy_backend
exe = tp.Executable.load(sys.argv[1])
x = np.linspace(-2, 2, 4).astype(np.float32)
np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), np.tanh(x) * 2, rtol=1e-5)
print(tripy_backend.compilation_count())
"""


def test_an_executable_compiled_through_a_disk_cache_hit_saves_code_that_loads(tmp_path):
    # The second process's program is a cache hit: a deserialized program, whose own serialization XLA:CPU makes
    # without its runtime helpers' code. The saved file must hold the entry's bytes, which load in a third process.
    env = {**os.environ, "TRIPY_CACHE_DIR": str(tmp_path / "cache")}
    for name in ("first.tpexe", "hit.tpexe"):
        subprocess.run(
            [sys.executable, "-c", _COMPILE_AND_SAVE, str(tmp_path / name)],
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
    env.pop("TRIPY_CACHE_DIR")
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_CALL, str(tmp_path / "hit.tpexe")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "0"  # (loaded, not compiled again)
