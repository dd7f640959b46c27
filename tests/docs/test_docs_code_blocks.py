"""Every Python code block of the documentation runs, and prints what the page shows.

A page is one session: its blocks run in order as one script (``example.py``, so error reports show the
example's lines), in a fresh working directory. Where
a block is followed by an ``Output`` block, what the block printed (tripy's logger included) must equal
it, line by line (trailing spaces aside, and tensor names renumbered: ``t3`` and ``t_inter0`` count the
tensors made so far in the process).
"""

import contextlib
import importlib.util
import io
import os
import re
import sys
from pathlib import Path

import pytest

import tripy as tp
from tripy_frontend.public_names import DOCUMENT_UNDER

DOCS = Path(__file__).resolve().parents[2] / "docs"
# (the Ray examples' workers, and Ray's print wrapper: see tests/ray/conftest.py)
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
os.environ.setdefault("RAY_TQDM_PATCH_PRINT", "0")


def _load(name: str):
    """A module of docs/_ext (they are not installed packages)."""
    spec = importlib.util.spec_from_file_location(f"tripy_docs_{name}", DOCS / "_ext" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


code_blocks = _load("code_blocks")

PAGES = sorted(p for p in DOCS.rglob("*.rst") if "reference" not in p.relative_to(DOCS).parts)


def _normalized(text: str) -> str:
    # Tensors are named by process-wide counters (t0, t1, ..., t_inter0, ...): the numbers depend on what
    # ran before. They are renumbered in order of first appearance, so the wiring is still compared.
    names: dict = {}
    text = re.sub(
        r"\bt(_inter)?\d+\b", lambda m: names.setdefault(m.group(0), f"t{m.group(1) or ''}<{len(names)}>"), text
    )
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def test_every_public_name_has_a_reference_page():
    """Each name of tripy.__all__ declares an existing reference page where it is defined (docs/build checks it
    too), and every page has names."""
    groups = _load("reference_groups")
    pages = groups.names_by_page(list(tp.__all__), DOCUMENT_UNDER)
    assert all(pages.values()), [page for page, names in pages.items() if not names]
    assert "tanh" in pages["ops_elementwise"] and "Tensor" in pages["tensors"]
    with pytest.raises(ValueError, match="without a reference page.*'zz_new_op'"):
        groups.names_by_page(list(tp.__all__) + ["zz_new_op"], DOCUMENT_UNDER)
    with pytest.raises(ValueError, match="do not exist.*tanh -> 'ops_math'"):
        groups.names_by_page(list(tp.__all__), {**DOCUMENT_UNDER, "tanh": "ops_math"})


def test_pages_are_found():
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"index.rst", "guides/getting_started.rst", "guides/flatir.rst"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_page_code_blocks(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = code_blocks.Session()
    old_stream, old_verbosity = tp.logger.stream, tp.logger.verbosity
    try:
        for block in code_blocks.blocks(page):
            where = f"{page.relative_to(DOCS)}:{block.line}"
            if "torch" in block.options.get("class", "") and importlib.util.find_spec("torch") is None:
                continue  # shown for PyTorch users; runs where PyTorch is installed (see docs/guides/modules.rst)
            if "ray" in block.options.get("class", "").split() and importlib.util.find_spec("ray") is None:
                continue  # needs Ray (scripts/ray-deps; docs/guides/scaling_out.rst)
            if "file" in block.options.get("class", ""):
                continue  # a source file shown whole (docs/guides/architecture.rst's new op): tests/test_add_an_op.py
            if (
                "triton" in block.options.get("class", "")
                and importlib.util.find_spec("triton_python_backend_utils") is None
            ):
                continue  # a model file for Triton's Python backend, which provides that module (docs/guides/serving.rst)
            out = io.StringIO()
            tp.logger.stream = out  # the logger holds the stream it was given, not sys.stdout
            with contextlib.redirect_stdout(out):
                session.run(block.code)
            if block.output is not None:
                assert _normalized(out.getvalue()) == _normalized(block.output), f"{where}: printed output differs"
    finally:
        tp.logger.stream, tp.logger.verbosity = old_stream, old_verbosity


def test_readme_example(tmp_path, monkeypatch, capsys):
    """The README's example runs and prints what its comment says."""
    monkeypatch.chdir(tmp_path)
    text = (DOCS.parent / "README.md").read_text()
    code = re.search(r"```py\n(.*?)```", text, re.S)
    assert code is not None
    exec(compile(code.group(1), "README.md", "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert "[[0., 0.],\n     [8., 8.]]" in printed and "shape=(2, 3)" in printed
