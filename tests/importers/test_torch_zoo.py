"""The PyTorch importer on a zoo of real models (tests/importers/zoo.py): each is exported with dynamic dims and
imported; its eager output equals PyTorch's; it compiles once for the exported range, and calls at three sizes
inside it equal PyTorch's with no compile; saved, it loads in a new process and runs with no compile."""

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("timm")

# The load test reads what each model's test saved (in this process): with pytest-xdist, one worker runs them all
# (``--dist loadgroup``).
pytestmark = pytest.mark.xdist_group("torch_zoo")

import tripy as tp  # noqa: E402
import tripy_backend  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo import TORCH_ZOO  # noqa: E402

# float32: the largest error allowed, as a fraction of the output's largest magnitude.
TOLERANCE = 1e-3


def reference(model, inputs):
    with torch.no_grad():
        return [t.numpy() for t in torch.utils._pytree.tree_leaves(model(*inputs)) if isinstance(t, torch.Tensor)]


def as_list(out):
    return list(out) if isinstance(out, tuple) else [out]


def assert_close(got, expected, what):
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        g = np.from_dlpack(g) if not isinstance(g, np.ndarray) else g
        assert g.shape == e.shape, (what, g.shape, e.shape)
        scale = max(float(np.abs(e).max()), 1e-6)
        error = float(np.abs(g.astype(np.float64) - e).max()) / scale
        assert error <= TOLERANCE, f"{what}: max error {error:.2e} of the output's scale"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """What each model's test saved for the load test: the executable, the inputs and PyTorch's outputs."""
    return {"dir": tmp_path_factory.mktemp("torch_zoo"), "models": {}}


@pytest.mark.parametrize("name", sorted(TORCH_ZOO))
def test_model(name, saved):
    case = TORCH_ZOO[name]
    torch.manual_seed(0)
    model = case.build().eval()
    example = case.inputs(torch, 2, 8)
    started = time.perf_counter()
    imported = tp.from_torch(torch.export.export(model, example, dynamic_shapes=case.dynamic_shapes(torch)))
    imported_s = time.perf_counter() - started
    assert_close(as_list(imported(*[tp.Tensor(x) for x in example])), reference(model, example), f"{name} eager")

    started = time.perf_counter()
    exe = tp.compile(imported, args=imported.input_infos)
    compile_s = time.perf_counter() - started
    before = tripy_backend.compilation_count()
    calls = {}
    for batch, seq in case.call_sizes():
        inputs = case.inputs(torch, batch, seq)
        expected = reference(model, inputs)
        assert_close(as_list(exe(*[tp.Tensor(x) for x in inputs])), expected, f"{name} compiled at {batch}x{seq}")
        calls[f"{batch}x{seq}"] = ([x.numpy() for x in inputs], expected)
    assert tripy_backend.compilation_count() == before, f"{name}: a call inside the declared range compiled"

    path = saved["dir"] / f"{name}.tpexe"
    exe.save(str(path))
    np.savez(
        saved["dir"] / f"{name}.npz",
        **{f"{size}/in{i}": x for size, (xs, _) in calls.items() for i, x in enumerate(xs)},
    )
    saved["models"][name] = (str(path), calls)
    print(f"\nzoo {name}: import {imported_s:.1f} s, {len(imported.ops)} ops, compile {compile_s:.1f} s")


_LOAD_AND_CALL = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tripy as tp, tripy_backend
    jobs, out_dir = json.loads(sys.argv[1]), sys.argv[2]
    counts = {}
    for name, path, sizes in jobs:
        before = tripy_backend.compilation_count()
        exe = tp.Executable.load(path)
        loaded = tripy_backend.compilation_count()
        data = np.load(path[:-len(".tpexe")] + ".npz")
        for size in sizes:
            inputs = [data[f"{size}/in{i}"] for i in range(len([k for k in data.files if k.startswith(size + "/")]))]
            out = exe(*[tp.Tensor(x) for x in inputs])
            outs = list(out) if isinstance(out, tuple) else [out]
            np.savez(f"{out_dir}/{name}-{size}-out.npz", *[np.from_dlpack(o) for o in outs])
        counts[name] = [loaded - before, tripy_backend.compilation_count() - loaded]
    print(json.dumps(counts))
""")


def test_saved_models_load_in_a_new_process_without_compiling(saved):
    if not saved["models"]:
        pytest.skip("no model of the zoo was saved (their tests did not run or failed)")
    jobs = [(name, path, list(calls)) for name, (path, calls) in saved["models"].items()]
    env = dict(os.environ, TRIPY_CACHE_DIR="")  # (the persistent cache off: nothing could come from it)
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_CALL, json.dumps(jobs), str(saved["dir"])],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = json.loads(proc.stdout.splitlines()[-1])
    assert counts == {name: [0, 0] for name in saved["models"]}  # (at load, during the calls)
    for name, (_, calls) in saved["models"].items():
        for size, (_, expected) in calls.items():
            got = np.load(saved["dir"] / f"{name}-{size}-out.npz")
            assert_close([got[f"arr_{i}"] for i in range(len(got.files))], expected, f"{name} loaded at {size}")
