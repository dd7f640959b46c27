"""Each distribution's own page: a README (its PyPI description) whose example runs, a CHANGELOG with an
entry for the current version, a stated compatibility policy, and ``__version__`` read from the installed
distribution (one source: the pyproject). And no install hint anywhere names PyPI's unrelated ``tripy``."""

import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = {
    "tripy-flatir": "tripy_flatir",
    "tripy-trace": "tripy_trace",
    "tripy-backend": "tripy_backend",
    "tripy-frontend": "tripy_frontend",
    "tripy-importers": "tripy_importers",
    "tripy-inference": "tripy",
    "tripy-serve": "tripy_serve",
}
PROJECTS = {tomllib.loads(p.read_text())["project"]["name"]: p.parent for p in ROOT.glob("packages/*/pyproject.toml")}


def test_the_seven_distributions():
    assert sorted(PROJECTS) == sorted(MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_version_readme_changelog(name):
    directory = PROJECTS[name]
    project = tomllib.loads((directory / "pyproject.toml").read_text())["project"]
    assert importlib.import_module(MODULES[name]).__version__ == project["version"]
    assert project["readme"] == "README.md"
    readme = (directory / "README.md").read_text()
    assert readme.startswith(f"# {name}") and "## Compatibility policy" in readme and "public API" in readme
    changelog = (directory / "CHANGELOG.md").read_text()
    assert f"\n## {project['version']}" in changelog


@pytest.mark.parametrize("name", sorted(MODULES))
def test_readme_example_runs(name, tmp_path):
    if name == "tripy-importers":
        pytest.importorskip("torch")  # (its example imports a PyTorch model)
    readme = (PROJECTS[name] / "README.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", readme, re.S)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    expected = {
        "tripy-flatir": "stablehlo.tanh",
        "tripy-trace": "stablehlo.tanh",
        "tripy-backend": "XLA:CPU",
        "tripy-frontend": "[3., 3.]",
        "tripy-importers": "0.weight",
        "tripy-inference": "[8., 8.]",
        "tripy-serve": "'datatype': 'FP32'",
    }[name]
    assert expected in result.stdout


# `pip install tripy...` / `uv build --package tripy` / `'tripy[extra]'`, but not tripy-<something>, and not
# the warnings that quote ``pip install tripy`` (a closing backquote) to say that it installs something else.
_OLD_NAME = re.compile(r"(pip install\s+['\"]?tripy(?![-\w`])|--package\s+tripy(?![-\w])|['\"]tripy\[)")


def test_no_install_hint_names_pypi_tripy():
    files = [
        *ROOT.glob("packages/*/src/**/*.py"),
        *ROOT.glob("docs/**/*.rst"),
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("packages/*/README.md"),
        ROOT / "README.md",
        *ROOT.glob("scripts/*.py"),
        *ROOT.glob(".ci/*"),
    ]
    offenders = [
        f"{path.relative_to(ROOT)}: {m.group(0)}" for path in files for m in _OLD_NAME.finditer(path.read_text())
    ]
    assert offenders == []
    assert _OLD_NAME.search("raise ... pip install 'tripy[tensorrt]'") and _OLD_NAME.search("uv build --package tripy ")


@pytest.mark.parametrize("page", ["README.md", "docs/guides/getting_started.rst", "docs/guides/flatir.rst"])
def test_install_commands_define_the_index_they_use(page):
    # `pip install --index-url $TRIPY_INDEX/simple/ ...` works as written only once TRIPY_INDEX is set: each
    # install page sets it (and says what it is) before its first use.
    text = (ROOT / page).read_text()
    first_use = text.index("$TRIPY_INDEX")
    assert "export TRIPY_INDEX=" in text[:first_use], page
