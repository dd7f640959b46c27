"""The public API as editors and type checkers see it: ``tripy/__init__.py`` re-exports each registered name
explicitly, so mypy knows ``tp.relu(x)`` is a ``Tensor`` and reports ``tp.reluu`` as an error."""

import re
import textwrap

import pytest

import tripy as tp
from tripy_frontend import PUBLIC_API

mypy_api = pytest.importorskip("mypy.api")


def test_every_registered_name_is_re_exported_as_itself():
    assert tp.__all__ == sorted(PUBLIC_API)
    assert [n for n in PUBLIC_API if getattr(tp, n) is not PUBLIC_API[n]] == []


def test_a_misspelled_name_still_gets_a_hint_at_run_time():
    with pytest.raises(AttributeError, match=r"Did you mean: 'tripy.relu'"):
        tp.reluu


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
    assert revealed == ["tripy_frontend.tensor.Tensor", "tripy_frontend.compiler.executable.Executable",
                        "tripy_frontend.tensor.Tensor", "tripy_frontend.tensor.Tensor"], out
    errors = [line.split(": error: ")[1] for line in out.splitlines() if ": error: " in line]
    assert errors == ['Module has no attribute "reluu"  [attr-defined]',
                      'Incompatible types in assignment (expression has type "Tensor", variable has type "int")  '
                      '[assignment]',
                      '"Tensor" has no attribute "nosuch"  [attr-defined]'], out
    assert status == 1
