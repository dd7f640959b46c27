"""The tool author's use: the tripy-flatir wheel alone, with only its declared dependencies, in a fresh
venv, builds FlatIR by hand and lowers it to StableHLO."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import importlib.util
    from tripy_flatir import FlatIRFunction, FlatIRTensor, device, float32
    from tripy_flatir.ops.tanh import TanhOp
    assert importlib.util.find_spec("tripy_trace") is None and importlib.util.find_spec("tripy_frontend") is None
    fn = FlatIRFunction()
    x = fn.add_input(FlatIRTensor("x", (2, 3), float32, device("cpu")))
    y = FlatIRTensor("y", (2, 3), float32, device("cpu"))
    TanhOp.build([x], [y])
    fn.integrate_subgraph([x], [y], [x], [y])
    fn.outputs = [y]
    print(fn.to_mlir())
""")


@pytest.mark.slow
def test_flatir_wheel_installs_alone(tmp_path):
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    dist = tmp_path / "dist"
    subprocess.run([uv, "build", "--package", "tripy-flatir", "--wheel", "-o", str(dist)], cwd=ROOT, check=True,
                   capture_output=True)
    wheels = list(dist.glob("tripy_flatir-*.whl"))
    assert len(wheels) == 1
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    # Install with the workspace's pinned jax/jaxlib so the fresh venv resolves like the lock.
    env = dict(os.environ, UV_CONSTRAINT="")
    subprocess.run([uv, "pip", "install", "-q", "-p", str(python), str(wheels[0]), "jax==0.6.2", "jaxlib==0.6.2"],
                   check=True, capture_output=True, env=env)
    result = subprocess.run([str(python), "-c", SCRIPT], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "stablehlo.tanh" in result.stdout and "tensor<2x3xf32>" in result.stdout
