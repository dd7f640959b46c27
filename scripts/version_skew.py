"""Version skew: each layer at HEAD against the newest *released* versions of the layers below it.

    uv run python scripts/version_skew.py                  # every layer
    uv run python scripts/version_skew.py tripy-trace      # one layer

A release is a tag ``<package>-v<version>`` (made by scripts/release.py). For each layer L, every tripy
package below it is built from its newest tag that the ranges declared at HEAD admit (L's own, and those
of the other packages in between), L from HEAD; the wheels go with plain pip into a fresh virtual
environment (``--isolated --no-index``: only these files, no configured index), and L's tests run there
(TESTS below). If pip refuses the mix or the tests fail, the script exits 1 and names the range that
admitted the release that broke: raise its lower bound (or restore compatibility).

A package with no tag yet is taken from HEAD and reported; a layer whose packages below are all untagged
has nothing to skew and is skipped. ``git clone`` copies every tag by default, but a shallow or
``--no-tags`` clone has none: then this prints that there are no releases and exits 0.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# The tests each layer runs against released lower layers (its own unit tests; the meta package: a slice
# of the end-to-end tests, and every code block of the docs).
TESTS = {
    "tripy-trace": ["tests/trace"],
    "tripy-backend": ["tests/backend"],
    "tripy-frontend": ["tests/frontend"],
    "tripy-inference": ["tests/e2e/test_foundation_ops.py", "tests/docs"],
    "tripy-serve": ["tests/serve"],
}
# The frontend's tests import `tripy`: the meta package (a re-export) comes from HEAD with it.
WITH_HEAD = {"tripy-frontend": ["tripy-importers", "tripy-inference"]}
# Third-party packages the test environment gets at the versions this environment has (not from tags).
# (tripy-serve's: its own dependencies and its tests' httpx and tokenizers; not tritonclient, whose ml-dtypes pin
# conflicts with the one here: its conformance tests skip in that environment.)
THIRD_PARTY = [
    "jax",
    "jaxlib",
    "numpy",
    "ml_dtypes",
    "pytest",
    "starlette",
    "uvicorn",
    "grpcio",
    "protobuf",
    "prometheus_client",
    "httpx",
    "tokenizers",
]


def run(command: List[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True)


def projects(root: Path) -> Dict[str, dict]:
    found = (tomllib.loads(f.read_text())["project"] for f in root.glob("packages/*/pyproject.toml"))
    return {p["name"]: p for p in found}


def requirements(project: dict, names: Dict[str, dict]) -> List[Requirement]:
    return [r for r in map(Requirement, project.get("dependencies", [])) if r.name in names]


def below(name: str, names: Dict[str, dict]) -> List[str]:
    """The tripy packages `name` depends on, directly or not, lowest first."""
    found: List[str] = []
    for requirement in requirements(names[name], names):
        for dep in below(requirement.name, names) + [requirement.name]:
            if dep not in found:
                found.append(dep)
    return found


def released(name: str, root: Path) -> List[Version]:
    tags = run(["git", "tag", "--list", f"{name}-v*"], root).stdout.split()
    return sorted((Version(t[len(name) + 2 :]) for t in tags), reverse=True)


def choose(layer: str, names: Dict[str, dict], root: Path) -> Tuple[Dict[str, Optional[Version]], List[str]]:
    """For each package below `layer`: the newest released version that HEAD's ranges admit (None: HEAD)."""
    chosen: Dict[str, Optional[Version]] = {}
    notes = []
    for dep in below(layer, names):
        ranges = {p: r for p in [layer] + below(layer, names) for r in requirements(names[p], names) if r.name == dep}
        said = "; ".join(f"{p}: {r}" for p, r in ranges.items())
        versions = released(dep, root)
        admitted = [v for v in versions if all(r.specifier.contains(v, prereleases=True) for r in ranges.values())]
        chosen[dep] = admitted[0] if admitted else None
        if not versions:
            notes.append(f"{dep}: no release tagged yet; taken from HEAD")
        elif not admitted:
            notes.append(f"{dep}: no release admitted by {said}; taken from HEAD")
        else:
            notes.append(f"{dep}: {admitted[0]} (tag {dep}-v{admitted[0]}), admitted by {said}")
    return chosen, notes


def build(name: str, version: Optional[Version], root: Path, work: Path, out: Path) -> Path:
    """The wheel of `name` at its tag (or at HEAD's work tree when `version` is None)."""
    tree = root
    if version is not None:
        tree = work / f"{name}-{version}"
        tree.mkdir()
        archive = work / f"{name}-{version}.tar"
        subprocess.run(["git", "archive", "-o", str(archive), f"{name}-v{version}"], cwd=root, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tree, filter="data")
    result = run(["uv", "build", "--package", name, "--wheel", "-o", str(out / name)], tree)
    if result.returncode != 0:
        raise RuntimeError(f"building {name} {version or 'HEAD'} failed:\n{result.stderr}")
    (wheel,) = (out / name).glob("*.whl")
    return wheel


def test_environment(wheels: List[Path], work: Path) -> Tuple[Optional[Path], str]:
    """A fresh venv: third-party packages at this environment's versions (uv, from its usual index), then
    the tripy wheels with plain pip from these files only. Returns (python, "") or (None, pip's complaint)."""
    venv = work / "venv"
    subprocess.run(["uv", "venv", "-q", "--seed", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    pins = [f"{p}=={importlib.metadata.version(p)}" for p in THIRD_PARTY]
    subprocess.run(["uv", "pip", "install", "-q", "--python", str(python), *pins], check=True)
    result = run([str(python), "-m", "pip", "--isolated", "install", "-q", "--no-index", *map(str, wheels)], work)
    return (python, "") if result.returncode == 0 else (None, result.stdout + result.stderr)


def check_layer(layer: str, root: Path) -> Optional[bool]:
    """True: passed; False: failed (and said which range); None: nothing released below it."""
    names = projects(root)
    chosen, notes = choose(layer, names, root)
    print(f"== {layer} (HEAD) against:\n   " + "\n   ".join(notes), flush=True)
    if all(v is None for v in chosen.values()):
        print(f"   skipped: nothing below {layer} is released")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wheels = [build(d, v, root, work, work / "wheels") for d, v in chosen.items()]
        wheels += [build(p, None, root, work, work / "wheels") for p in [layer] + WITH_HEAD.get(layer, [])]
        python, complaint = test_environment(wheels, work)
        if python is None:
            print(f"   FAILED: pip refuses this mix:\n{complaint}")
        else:
            result = run([str(python), "-m", "pytest", "-p", "no:cacheprovider", *TESTS[layer]], root)
            print("   " + (result.stdout.strip().splitlines() or ["(no output)"])[-1])
            if result.returncode == 0:
                return True
            print(result.stdout[-6000:] + result.stderr[-2000:])
    pinned = {d: v for d, v in chosen.items() if v is not None}
    for dep, version in pinned.items():
        ranges = [
            f"{p}: {r}" for p in [layer] + below(layer, names) for r in requirements(names[p], names) if r.name == dep
        ]
        print(f"   WRONG RANGE? {'; '.join(ranges)} admits {dep} {version}, and {layer} at HEAD fails with it")
    return False


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("layers", nargs="*", help=f"default: all of {', '.join(TESTS)}")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this checkout)")
    args = parser.parse_args(argv)
    if not run(["git", "tag", "--list", "*-v*"], args.root).stdout.strip():
        print("version skew: no release is tagged in this clone (none yet, or a clone without tags): nothing to check")
        return 0
    results = {layer: check_layer(layer, args.root) for layer in (args.layers or list(TESTS))}
    failed = [layer for layer, ok in results.items() if ok is False]
    print(f"version skew: {len(failed)} failed" + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
