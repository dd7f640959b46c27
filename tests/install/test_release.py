"""Releasing, end to end, against a real package index (pypiserver) on 127.0.0.1.

In a throw-away git repository made from this work tree (nothing is committed or tagged here):
scripts/release.py publishes all seven distributions; plain pip installs ``tripy-inference`` from that
index alone into a fresh virtual environment and runs the quickstart; then a patch of ``tripy-flatir`` is
released alone, ``pip install -U tripy-flatir`` picks it up without touching anything else, and the
FlatIR, Trace and foundation-op end-to-end tests pass against that mix. scripts/version_skew.py then runs
tripy-trace at HEAD against the released tripy-flatir, and names the range when HEAD needs more than the
release it admits.

pip runs with ``--isolated`` (no pip.conf, no PIP_* variables: a configured ``extra-index-url`` would
let another index answer for the tripy names) and ``--index-url`` the local server only. The third-party
packages (jax, jaxlib, NumPy, ml_dtypes, pytest) are put into the venv first by ``uv pip`` at this
environment's versions, from uv's usual index, so pip never has to look for them on the local server.

Slow (~1-2 minutes): marked ``slow``; CI runs it.
"""

import importlib.metadata
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
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
THIRD_PARTY = ["jax", "jaxlib", "numpy", "ml_dtypes", "pytest"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("uv") is None or shutil.which("git") is None, reason="needs uv and git"),
]


def _run(args, cwd, env=None, both=False) -> str:
    """The command's stdout (`both`: then its stderr too)."""
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"{' '.join(map(str, args))}\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr if both else result.stdout


def _snapshot(dest: Path) -> Path:
    """A new git repository holding this work tree's files (tracked and untracked, not ignored)."""
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], ROOT)
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "tripy release test"],
        ["config", "user.email", "release-test@localhost"],
        ["add", "-A"],
        ["commit", "-q", "-m", "snapshot"],
    ):
        _run(["git", *args], dest)
    return dest


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """pypiserver on 127.0.0.1 (uploads without authentication, no fallback to PyPI). Yields its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = tmp_path_factory.mktemp("index")
    log = open(store.parent / "pypiserver.log", "w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pypiserver",
            "run",
            "-i",
            "127.0.0.1",
            "-p",
            str(port),
            "-a",
            ".",
            "-P",
            ".",
            "--disable-fallback",
            str(store),
        ],
        stdout=log,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url + "simple/", timeout=2).close()
            break
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, "pypiserver did not start"
            time.sleep(0.2)
    yield url
    server.terminate()
    server.wait(timeout=10)
    log.close()


@pytest.fixture(scope="module")
def released(tmp_path_factory, index):
    """The snapshot repository with all seven packages released (as-is) to the index."""
    repo = _snapshot(tmp_path_factory.mktemp("repo"))
    for package in PACKAGES:
        _release(repo, index, package, "as-is")
    return repo


def _release(repo: Path, index: str, package: str, bump: str) -> str:
    env = dict(os.environ, UV_PUBLISH_USERNAME="tripy", UV_PUBLISH_PASSWORD="unused")
    return _run(
        [sys.executable, repo / "scripts" / "release.py", package, bump, "--root", repo, "--index-url", index],
        repo,
        env,
    )


def _venv(path: Path) -> Path:
    _run(["uv", "venv", "-q", "--seed", "--python", sys.executable, path], path.parent)
    python = path / "bin" / "python"
    pins = [f"{p}=={importlib.metadata.version(p)}" for p in THIRD_PARTY]
    _run(["uv", "pip", "install", "-q", "--python", python, *pins], path.parent)
    return python


def _pip(python: Path, index: str, *args: str) -> str:
    return _run([python, "-m", "pip", "--isolated", *args, "--index-url", index + "simple/"], python.parent)


def _installed(python: Path) -> dict:
    lines = _run([python, "-m", "pip", "--isolated", "list", "--format=freeze"], python.parent).splitlines()
    return dict(line.split("==") for line in lines)


def test_install_from_index_then_release_one_layer_alone(released, index, tmp_path):
    python = _venv(tmp_path / "venv")
    _pip(python, index, "install", "-q", "tripy-inference")
    before = _installed(python)
    default = [p for p in PACKAGES if p != "tripy-serve"]  # (serving comes with the `serve` extra only)
    assert {p: before.get(p) for p in default} == {p: "0.1.0" for p in default} and "tripy" not in before
    assert "tripy-serve" not in before
    out = _run([python, released / "examples" / "quickstart.py"], tmp_path, both=True)
    assert "stablehlo.tanh" in out and "y = [[" in out  # (the MLIR is tp.logger's, on stderr)

    log = _release(released, index, "tripy-flatir", "patch")
    assert "tripy-trace: its range 'tripy-flatir>=0.1,<0.2' admits tripy-flatir 0.1.1" in log
    assert "tripy-flatir-v0.1.1" in _run(["git", "tag"], released).split()
    assert "## 0.1.1" in (released / "packages" / "tripy-flatir" / "CHANGELOG.md").read_text()

    _pip(python, index, "install", "-q", "-U", "tripy-flatir")
    after = _installed(python)
    changed = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}
    assert changed == {"tripy-flatir": ("0.1.0", "0.1.1")}
    where = _run(
        [python, "-c", "import tripy, tripy_flatir; print(tripy_flatir.__version__, tripy_flatir.__file__)"], tmp_path
    )
    assert where.startswith("0.1.1 ") and str(tmp_path / "venv") in where
    # The mix (flatir 0.1.1, the rest 0.1.0) against the snapshot's tests of the layer and its users.
    _run(
        [
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/flatir",
            "tests/trace",
            "tests/e2e/test_foundation_ops.py",
        ],
        released,
    )


def test_version_skew_names_the_wrong_range(released, tmp_path):
    # A plain `git clone` carries the tags (the releases) with it.
    clone = tmp_path / "clone"
    _run(["git", "clone", "-q", released, clone], tmp_path)
    assert "tripy-flatir-v0.1.0" in _run(["git", "tag"], clone).split()
    skew = [sys.executable, clone / "scripts" / "version_skew.py", "tripy-trace", "--root", clone]
    assert "version skew: 0 failed" in _run(skew, clone)

    # HEAD's tripy-trace starts needing a tripy-flatir function that no release has, but keeps its range.
    flatir_init = clone / "packages" / "tripy-flatir" / "src" / "tripy_flatir" / "__init__.py"
    flatir_init.write_text(flatir_init.read_text() + "\n\ndef skew_probe() -> int:\n    return 1\n")
    trace_init = clone / "packages" / "tripy-trace" / "src" / "tripy_trace" / "__init__.py"
    trace_init.write_text(trace_init.read_text() + "\nfrom tripy_flatir import skew_probe  # noqa: E402,F401\n")
    result = subprocess.run([str(a) for a in skew], cwd=clone, capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "WRONG RANGE? tripy-trace: tripy-flatir<0.2,>=0.1 admits tripy-flatir 0.1." in result.stdout
