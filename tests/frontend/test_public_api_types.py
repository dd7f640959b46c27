"""The public API as editors and type checkers see it: ``tripy/__init__.py`` re-exports each registered name
explicitly, so mypy knows ``tp.relu(x)`` is a ``Tensor`` and reports ``tp.reluu`` as an error."""

import re
import textwrap

import pytest

import tripy as tp
from tripy_frontend import PUBLIC_API

mypy_api = pytest.importorskip("mypy.api")


def test_every_registered_name_is_re_exported_as_itself():
    """A new public name needs its one re-export line in tripy/__init__.py (type checkers read that file, not the
    registry); the failure says which line to add."""
    assert tp.__all__ == sorted(PUBLIC_API)
    missing = [
        f"from {getattr(obj, '__module__', '?')} import {name} as {name}"
        for name, obj in PUBLIC_API.items()
        if vars(tp).get(name) is not obj
    ]
    assert missing == [], "add to packages/tripy/src/tripy/__init__.py:\n" + "\n".join(missing)


def test_a_misspelled_name_still_gets_a_hint_at_run_time():
    with pytest.raises(AttributeError, match=r"Did you mean: 'tripy.relu'"):
        tp.reluu


@pytest.mark.parametrize(
    "name,hint",
    [
        ("matmul", "write the matrix product as a @ b"),
        ("float64", "tripy has no float64; use tp.float32"),
        ("cat", "Use tp.concatenate"),
    ],
)
def test_another_librarys_name_gets_tripys_spelling_not_a_look_alike(name, hint):
    with pytest.raises(AttributeError) as e:
        getattr(tp, name)
    assert hint in str(e.value) and "Did you mean" not in str(e.value)


USER_CODE = """
    import numpy as np
    import tripy as tp

    x = tp.Tensor(np.ones((2, 3), np.float32))
    reveal_type(tp.relu(x))
    exe = tp.compile(tp.relu, args=[tp.InputInfo((2, 3), tp.float32)])
    reveal_type(exe)
    reveal_type(x + 1)
    reveal_type(tp.softmax(x @ tp.transpose(x, 0, 1), dim=1))
    y = tp.reluu(x)
    z: int = tp.relu(x)
    w = x.nosuch
"""


def test_mypy_sees_tripy_types_in_user_code(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent(USER_CODE))
    out, _, status = mypy_api.run([str(user), "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"])
    revealed = re.findall(r'Revealed type is "([^"]+)"', out)
    assert revealed == [
        "tripy_frontend.tensor.Tensor",
        "tripy_frontend.compiler.executable.Executable[tripy_frontend.tensor.Tensor]",
        "tripy_frontend.tensor.Tensor",
        "tripy_frontend.tensor.Tensor",
    ], out
    errors = [line.split(": error: ")[1] for line in out.splitlines() if ": error: " in line]
    assert errors == [
        'Module has no attribute "reluu"  [attr-defined]',
        'Incompatible types in assignment (expression has type "Tensor", variable has type "int")  [assignment]',
        '"Tensor" has no attribute "nosuch"  [attr-defined]',
    ], out
    assert status == 1


# What the docs show users writing: none of it is a type error.
DOCUMENTED_USER_CODE = """
    import numpy as np
    import tripy as tp

    x = tp.Tensor(np.ones((2, 3), np.float32))
    exe = tp.compile(tp.relu, args=[tp.InputInfo((2, 3), tp.float32)])
    out = np.from_dlpack(exe(x))
    def both(a: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor]:
        return a + 1, a * 2

    pair = tp.compile(both, args=[tp.InputInfo((2, 3), tp.float32)])
    first, second = pair(x)
    loaded = tp.Executable.load("model.tpexe")
    values = np.from_dlpack(loaded(x))
    layer = tp.Linear(3, 2)
    y = layer(x)
    w = layer.weight
    n: int = x.shape[0]
    rows = list(range(x.shape[0]))
    conv = tp.Conv(3, 4, (3, 3))
    reveal_type(exe(x))
    reveal_type(first)
    reveal_type(y)
    reveal_type(w)
    reveal_type(layer.bias)
    reveal_type(conv(x))
    layer("not a tensor")
"""


def test_mypy_accepts_documented_calls_and_types_modules(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent(DOCUMENTED_USER_CODE))
    out, _, status = mypy_api.run([str(user), "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"])
    revealed = re.findall(r'Revealed type is "([^"]+)"', out)
    tensor = "tripy_frontend.tensor.Tensor"
    assert revealed == [tensor, tensor, tensor, tensor, f"{tensor} | None", tensor], out
    errors = [line.split(": error: ")[1] for line in out.splitlines() if ": error: " in line]
    assert errors == [
        'Argument 1 to "__call__" of "Module" has incompatible type "str"; expected "Tensor"  [arg-type]'
    ], out
