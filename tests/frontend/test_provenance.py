"""Provenance travels inside the program: a compiler error in an executable loaded in a new process
(no FlatIR, no tracing, nothing of the original process) still names the user's line."""

import subprocess
import sys
import textwrap


def _run(script, *args):
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=300)


def test_error_in_a_loaded_executable_names_the_line_of_the_original_source(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(
        textwrap.dedent("""\
        import sys
        import tripy as tp


        def add(x, y):
            return x + y  # MARK


        dyn = tp.InputInfo(((1, 2, 8), 3), tp.float32)
        tp.compile(add, args=[dyn, dyn]).save(sys.argv[1])
        """)
    )
    user = tmp_path / "use.py"
    user.write_text(
        textwrap.dedent("""\
        import sys
        import tripy as tp

        exe = tp.Executable.load(sys.argv[1])
        assert exe(tp.ones((2, 3)), tp.ones((2, 3))).tolist() == [[2.0] * 3] * 2
        try:
            exe(tp.ones((2, 3)), tp.ones((4, 3)))  # dims 2 and 4 cannot be added
        except tp.TripyException as e:
            print(e)
        """)
    )
    path = tmp_path / "add.tpexe"
    made = _run(source, path)
    assert made.returncode == 0, made.stderr
    used = _run(user, path)
    assert used.returncode == 0, used.stderr
    report = used.stdout
    assert f"--> {source}:6\n" in report  # the line in the source that built the program
    assert "return x + y  # MARK" in report and "^" in report
    # (Operands with dynamic dims are broadcast to their run-time shape, as either may be 1 at run time: the
    # incompatible sizes show when shape refinement specializes that broadcast, which prints the file location.)
    assert "input shapes [[2, 3], [4, 3]]" in report and "not compatible" in report
