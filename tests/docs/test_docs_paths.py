"""Every source file the documentation names exists, so the pages (the architecture's file-by-file data
path above all) keep matching the code as it moves."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in list(DOCS.rglob("*.rst")) + list(DOCS.rglob("*.md")) if "reference" not in p.parts)
# `tripy_backend/program.py`, `compiler/fast_call.py`, `tests/install/test_wheels.py`, `examples/gpt2/model.py`
PATH = re.compile(r"`+([A-Za-z0-9_./-]+\.py)\b")
# The files the architecture guide's "Adding an op" walkthrough shows how to write (tests/test_add_an_op.py runs them).
WALKTHROUGH = {
    "packages/tripy-flatir/src/tripy_flatir/ops/cbrt.py",
    "packages/tripy-frontend/src/tripy_frontend/ops/cbrt.py",
}


def _exists(name: str) -> bool:
    if (ROOT / name).exists():
        return True
    # Package-relative (tripy_frontend/ops/tanh.py) or package-internal (compiler/fast_call.py).
    return any(src.exists() for src in ROOT.glob(f"packages/*/src/*/{name}")) or any(
        src.exists() for src in ROOT.glob(f"packages/*/src/{name}")
    )


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_named_files_exist(page):
    names = sorted(set(PATH.findall(page.read_text())))
    missing = [n for n in names if not _exists(n) and n not in WALKTHROUGH]
    assert not missing, f"{page.relative_to(ROOT)} names files that do not exist: {missing}"
