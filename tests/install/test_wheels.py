"""The wheels, as users install them: built with ``uv build``, installed with plain pip (no uv, no
extra pins) into fresh virtual environments, so pip resolves jax/jaxlib from each distribution's own
declared ranges.

* the six wheels together run examples/quickstart.py;
* ``tripy-flatir`` alone (the tool author's install) runs the code of docs/guides/flatir.rst and the
  example of its README, which build FlatIR functions by hand and lower them to StableHLO.

Slow (venv + pip, ~1 minute with a warm cache): marked ``slow``; CI runs them.
"""

import importlib.util
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    "tripy-flatir",
    "tripy-trace",
    "tripy-backend",
    "tripy-frontend",
    "tripy-importers",
    "tripy-inference",
    "tripy-serve",
]

_spec = importlib.util.spec_from_file_location("tripy_docs_code_blocks", ROOT / "docs" / "_ext" / "code_blocks.py")
assert _spec is not None and _spec.loader is not None
code_blocks = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = code_blocks
_spec.loader.exec_module(code_blocks)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH (it builds the wheels)")
    dist = tmp_path_factory.mktemp("dist")
    for package in PACKAGES:
        subprocess.run(
            [uv, "build", "--package", package, "--wheel", "-o", str(dist)], cwd=ROOT, check=True, capture_output=True
        )
    built = {p.name.split("-")[0]: p for p in dist.glob("*.whl")}
    assert sorted(built) == sorted(p.replace("-", "_") for p in PACKAGES)
    return built


def _fresh_venv(path: Path, wheels: list) -> Path:
    venv.create(path, with_pip=True)
    python = path / "bin" / "python"
    result = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *map(str, wheels)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return python


def _run(python: Path, args: list, cwd: Path) -> str:
    """What the command printed: stdout, then stderr (where tp.logger writes, the quickstart's MLIR among it)."""
    result = subprocess.run([str(python), *args], capture_output=True, text=True, cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


@pytest.mark.slow
def test_five_wheels_run_the_quickstart(wheels, tmp_path):
    # (tripy-serve, the `serve` extra, left out: the console script must say how to get it)
    python = _fresh_venv(tmp_path / "venv", [w for name, w in wheels.items() if name != "tripy_serve"])
    # Run from a directory outside the repository, so only the installed wheels can be imported.
    out = _run(python, [str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path)
    assert "stablehlo.tanh" in out and "y = [[" in out and "cached re-eval" in out and "reused for 3 inputs" in out
    where = _run(
        python, ["-c", "import tripy, tripy_backend; print(tripy.__file__, tripy_backend.__file__)"], cwd=tmp_path
    )
    assert str(ROOT) not in where
    # The `tripy` console script comes with the wheel; without the `serve` extra it says how to get it.
    serve = subprocess.run(
        [str(python.parent / "tripy"), "serve", "model.tpexe"], capture_output=True, text=True, cwd=tmp_path
    )
    assert serve.returncode == 1 and "pip install 'tripy-inference[serve]'" in serve.stderr, serve.stderr


@pytest.mark.slow
def test_flatir_wheel_alone_builds_stablehlo(wheels, tmp_path):
    python = _fresh_venv(tmp_path / "venv", [wheels["tripy_flatir"]])
    guide = ROOT / "docs" / "guides" / "flatir.rst"
    program = "\n".join(block.code for block in code_blocks.blocks(guide))
    # and the example of the package's own README (its PyPI description)
    readme = (ROOT / "packages" / "tripy-flatir" / "README.md").read_text()
    program += "\n" + readme.split("```python\n", 1)[1].split("```", 1)[0]
    check = (
        "import importlib.util\n"
        "assert [m for m in ('tripy', 'tripy_frontend', 'tripy_trace', 'tripy_backend')\n"
        "        if importlib.util.find_spec(m)] == [], 'only tripy-flatir should be installed'\n"
    )
    out = _run(python, ["-c", check + program], cwd=tmp_path)
    assert "stablehlo." in out and "func.func" in out
