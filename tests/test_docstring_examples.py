"""Every public function's docstring example runs (and asserts what it shows)."""

import inspect
import textwrap

import numpy as np
import pytest

import tripy as tp
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY


def _examples(doc: str) -> list:
    blocks, lines = [], doc.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. code-block:: python":
            indent = len(lines[i]) - len(lines[i].lstrip())
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append(lines[i])
                i += 1
            blocks.append(textwrap.dedent("\n".join(body)))
        else:
            i += 1
    return blocks


def _documented():
    items = {f"tripy.{n}": obj for n, obj in vars(tp).items() if n in tp.__all__ and callable(obj)}
    for n in tp.__all__:  # the public methods of public classes (tripy.Module.state_dict, ...)
        cls = getattr(tp, n)
        if inspect.isclass(cls):
            items.update(
                {
                    f"tripy.{n}.{m}": getattr(cls, m)
                    for m, f in vars(cls).items()
                    if not m.startswith("_") and (inspect.isfunction(f) or isinstance(f, (classmethod, staticmethod)))
                }
            )
    items.update({f"Tensor.{n}": f for n, f in TENSOR_METHOD_REGISTRY.methods.items()})
    for name, obj in sorted(items.items()):
        for i, code in enumerate(_examples(inspect.getdoc(obj) or "")):
            yield pytest.param(code, id=f"{name}[{i}]")


@pytest.mark.parametrize("code", list(_documented()))
def test_docstring_example(code):
    exec(compile(code, "<docstring>", "exec"), {"tp": tp, "np": np})


def test_public_functions_have_examples():
    missing = [
        n
        for n in tp.__all__
        if inspect.isfunction(getattr(tp, n)) and not _examples(inspect.getdoc(getattr(tp, n)) or "")
    ]
    assert not missing, f"public functions without a runnable example: {missing}"


@pytest.mark.parametrize(
    "method", ["named_parameters", "named_children", "state_dict", "load_state_dict", "initialize_dummy_parameters"]
)
def test_module_methods_have_examples(method):
    assert _examples(inspect.getdoc(getattr(tp.Module, method)) or "")
