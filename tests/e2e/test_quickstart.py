"""examples/quickstart.py runs and does what its docstring says: eager evaluation with cached programs, then a
program compiled once with tp.compile and reused for every call."""

import pathlib
import runpy

import tripy as tp
import tripy_backend

QUICKSTART = pathlib.Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_quickstart_reuses_the_program_it_compiles(capsys, monkeypatch):
    compiled = []
    real_compile = tp.compile

    def counting_compile(*args, **kwargs):
        exe = real_compile(*args, **kwargs)
        compiled.append(tripy_backend.compilation_count())
        return exe

    monkeypatch.setattr(tp, "compile", counting_compile)
    old = tp.logger.verbosity
    try:
        runpy.run_path(str(QUICKSTART), run_name="__main__")
    finally:
        tp.logger.verbosity = old  # (the example sets its own; the tests after this one expect the default)
    out = capsys.readouterr().out
    assert "cached re-eval" in out and "reused for 3 inputs" in out
    assert len(compiled) == 1 and tripy_backend.compilation_count() == compiled[0]  # no call compiled
