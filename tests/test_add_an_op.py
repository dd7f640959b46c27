"""The architecture guide's "Adding an op" walkthrough works as written: its two files (the FlatIR op and the
public function), loaded as the modules they would be, give ``tripy.cbrt`` through the whole pipeline, in eager
and compiled mode, with its dtype check and its reference page. Run in a child process, so the new public name
does not leak into the rest of the suite's registry."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import code_blocks  # noqa: E402

CHILD = """
import sys, types
import numpy as np

def install(name, source):
    module = types.ModuleType(name)
    module.__file__ = name.replace(".", "/") + ".py"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)

install("tripy_flatir.ops.cbrt", FLAT_FILE)
import tripy as tp
install("tripy_frontend.ops.cbrt", FRONTEND_FILE)
from tripy_frontend.public_names import DOCUMENT_UNDER, PUBLIC_API

cbrt = PUBLIC_API["cbrt"]
x = np.array([-27.0, -1.0, 0.0, 8.0, 2.0], np.float32)
eager = np.from_dlpack(cbrt(tp.Tensor(x)))
exe = tp.compile(cbrt, args=[tp.InputInfo((5,), tp.float32)])
compiled = np.from_dlpack(exe(tp.Tensor(x)))
assert np.allclose(eager, np.cbrt(x), atol=1e-6), eager
assert np.allclose(compiled, np.cbrt(x), atol=1e-6), compiled
try:
    cbrt(tp.Tensor(np.array([1, 8], np.int32)))
except tp.TripyException as e:
    print("refused:", " ".join(str(e).split()))
print("page:", DOCUMENT_UNDER["cbrt"])
"""


def test_the_walkthrough_adds_tripy_cbrt():
    files = [
        b.code
        for b in code_blocks.blocks(ROOT / "docs" / "guides" / "architecture.rst")
        if "file" in b.options.get("class", "")
    ]
    assert len(files) == 2, "the walkthrough shows the FlatIR file and the frontend file"
    script = f"FLAT_FILE = {files[0]!r}\nFRONTEND_FILE = {files[1]!r}\n" + textwrap.dedent(CHILD)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "refused: " in done.stdout and "tripy.cbrt" in done.stdout and "int32" in done.stdout, done.stdout
    assert "page: ops_elementwise" in done.stdout
