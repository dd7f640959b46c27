"""Sharded programs from the public API (tp.Mesh, tp.Sharding, tp.shard, InputInfo(sharding=...)) on 2 and 4 XLA:CPU
host devices, against NumPy; the error reports for bad shardings name the user's line. Cases that need several
devices run in a fresh process with ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (read when the
runtime starts); the others run here, on this process's one device."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tripy as tp


def run_script(tmp_path: pathlib.Path, n: int, code: str) -> str:
    """Run `code` (with ``import numpy as np, tripy as tp``) on `n` host devices; its stdout."""
    script = tmp_path / "script.py"
    script.write_text("import numpy as np\nimport tripy as tp\n" + textwrap.dedent(code))
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


_NUMBERS = """
n = tp.Mesh((N,), ("x",)).size
mesh = tp.Mesh((2, n // 2), ("data", "model"))
rng = np.random.default_rng(0)
x = rng.normal(size=(4, 8)).astype(np.float32)
w = rng.normal(size=(8, 4 * n)).astype(np.float32)
b = rng.normal(size=(4 * n,)).astype(np.float32)
expected = np.maximum(x @ w + b, 0)

# Tensor parallel: a column-parallel weight (split along its output features), baked into the program.
layer = tp.Linear(8, 4 * n)
layer.weight = tp.shard(tp.Tensor(np.ascontiguousarray(w.T)), tp.Sharding(mesh, ("model", None)))
layer.bias = tp.shard(tp.Tensor(b), tp.Sharding(mesh, ("model",)))
exe = tp.compile(lambda a: tp.relu(layer(a)), args=[tp.InputInfo((4, 8), tp.float32)])
out = exe(tp.Tensor(x))
assert np.allclose(np.from_dlpack(out), expected, rtol=1e-5, atol=1e-5)
assert np.allclose(np.array(out.tolist()), expected, rtol=1e-5, atol=1e-5)

# Data parallel: the batch split over "data", the weight whole on every device.
dp = tp.compile(lambda a, m: a @ m, args=[tp.InputInfo((4, 8), tp.float32, sharding=tp.Sharding(mesh, ("data", None))),
                                          tp.InputInfo((8, 4 * n), tp.float32)])
xs = tp.shard(tp.Tensor(x), tp.Sharding(mesh, ("data", None)))
for arg in (xs, tp.Tensor(x)):  # already split as the program reads it, and split at the call
    assert np.allclose(np.from_dlpack(dp(arg, tp.Tensor(w))), x @ w, rtol=1e-5, atol=1e-5)

# A constraint on an intermediate tensor (tp.shard inside the compiled function): the only split in the program.
def constrained(a, m):
    y = tp.shard(tp.relu(a @ m), tp.Sharding(mesh, ("data", "model")))
    return tp.sum(y, dim=1)
exe = tp.compile(constrained, args=[tp.InputInfo((4, 8), tp.float32), tp.InputInfo((8, 4 * n), tp.float32)])
assert 'custom_call @Sharding' in exe.stablehlo and "mhlo.num_partitions" in exe.stablehlo
assert np.allclose(np.from_dlpack(exe(tp.Tensor(x), tp.Tensor(w))), np.maximum(x @ w, 0).sum(1), rtol=1e-5)
print("ok")
"""


@pytest.mark.parametrize("n", [2, 4])
def test_sharded_programs_match_numpy(tmp_path: pathlib.Path, n: int) -> None:
    code = _NUMBERS.replace("N,", f"{n},")
    assert run_script(tmp_path, n, code).strip().endswith("ok")


_ERRORS = """
import os, tempfile
mesh = tp.Mesh((2,), ("model",))
def report(f):
    try:
        f()
    except tp.TripyException as e:
        return str(e)
    raise AssertionError("no error")

text = report(lambda: tp.shard(tp.ones((3, 4)), tp.Sharding(mesh, ("model", None))))  # MARK-indivisible
assert "dim 0 of shape [3, 4] is 3, which the mesh axis 'model' (2 devices) does not divide evenly" in text, text
assert "MARK-indivisible" in text, text
text = report(lambda: tp.InputInfo((4, 3), tp.float32, sharding=tp.Sharding(mesh, (None, "model"))))  # MARK-info
assert "does not divide evenly" in text and "MARK-info" in text, text

other = tp.Mesh((2,), ("data",))
a = tp.InputInfo((4,), tp.float32, sharding=tp.Sharding(mesh, ("model",)))
b = tp.InputInfo((4,), tp.float32, sharding=tp.Sharding(other, ("data",)))
text = report(lambda: tp.compile(lambda p, q: p + q, args=[a, b]))  # MARK-meshes
assert "input 'p' and input 'q' are split over different meshes" in text and "MARK-meshes" in text, text

split = tp.shard(tp.ones((4,)), tp.Sharding(mesh, ("model",)))
text = report(lambda: (split + 1).eval())  # MARK-eager
assert "Eager ops run on one device" in text and "MARK-eager" in text, text
assert np.from_dlpack(tp.Tensor(np.from_dlpack(split)) + 1).tolist() == [2.0] * 4  # gathered: fine

exe = tp.compile(lambda p: p * 2, args=[a])
path = os.path.join(tempfile.mkdtemp(), "double.tpexe")
exe.save(path)
print(path)
"""


def test_error_reports_and_saved_shardings(tmp_path: pathlib.Path) -> None:
    path = run_script(tmp_path, 2, _ERRORS).strip().splitlines()[-1]
    load = (
        f"exe = tp.Executable.load({path!r})\n"
        "out = exe(tp.Tensor(np.arange(4, dtype=np.float32)))\n"
        "assert exe.input_infos['p'].sharding.spec == ('model',)\n"
        "assert np.from_dlpack(out).tolist() == [0.0, 2.0, 4.0, 6.0]\n"
        "print('ok')\n"
    )
    assert run_script(tmp_path, 2, load).strip().endswith("ok")
    wrong = (
        f"try:\n    tp.Executable.load({path!r})  # MARK-load\n"
        "except tp.TripyException as e:\n"
        "    assert 'compiled for a mesh of 2 devices, but this process has 4' in str(e), str(e)\n"
        "    assert 'MARK-load' in str(e) and 'device_count=2' in str(e)\n"
        "    print('ok')\n"
    )
    assert run_script(tmp_path, 4, wrong).strip().endswith("ok")


def test_unknown_axis_is_reported_at_the_users_line() -> None:
    mesh = tp.Mesh((1,), ("model",))
    with pytest.raises(
        tp.TripyException,
        match=r"'modle' is not an axis of Mesh\(\{'model': 1\}\)\. Did you mean "
        r"'model'\?",
    ) as e:
        tp.Sharding(mesh, (None, "modle"))  # MARK-axis
    assert "MARK-axis" in str(e.value)


def test_mesh_larger_than_the_devices_says_how_to_get_more() -> None:
    with pytest.raises(tp.TripyException, match="needs 64 devices, but the CPU has") as e:
        tp.Mesh((8, 8), ("data", "model"))
    assert "xla_force_host_platform_device_count=64" in str(e.value)


def test_spec_rank_must_match() -> None:
    mesh = tp.Mesh((1,), ("model",))
    with pytest.raises(tp.TripyException, match="has 1 entries, but the tensor has rank 2"):
        tp.shard(tp.ones((2, 2)), tp.Sharding(mesh, ("model",)))


def test_one_device_mesh_gives_ordinary_tensors() -> None:
    mesh = tp.Mesh((1,), ("model",))
    w = tp.shard(tp.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), tp.Sharding(mesh, (None, "model")))
    assert (w + 1).tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
