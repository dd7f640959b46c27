"""tp.compile returns once every shape in range can run; the rest of the plan compiles in the background. Calls
made meanwhile (from several threads too) are right and never wait for a compile; Executable.wait, wait=True and
Executable.save wait for the whole plan; an interpreter that exits meanwhile neither hangs nor crashes."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import tripy as tp
import tripy_backend
from tripy_backend import background, range_plan, ranges

RNG = np.random.default_rng(0)


def matmul_program():
    """A program that is not cheap (134 MFLOP at 64 rows): a plan of bounded buckets, no specializations."""
    w = RNG.standard_normal((1024, 1024)).astype(np.float32)
    return w, (lambda x: x @ tp.Tensor(w))


def test_compile_returns_with_the_cover_and_opt_and_the_rest_follows(logged):
    w, func = matmul_program()
    exe, text = logged(lambda: tp.compile(func, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)]))
    # (a product of independent rows that is not cheap: buckets at 3 * 2**k too, see ``range_plan.finer``, and none
    # at opt - 1, ``range_plan.for_rows``: opt's program, the first to compile, runs the sizes below it meanwhile)
    assert "ready in " in text and "one program for the whole range; 11 more compile in the background" in text
    ranges = exe._program.ranges
    assert ranges._opt_bucket() == (8,) and not ranges.exact((8,))
    assert exe.wait(timeout=600) and exe.ready
    assert exe._program.ranges.programs.keys() == set(exe._program.ranges.buckets())


def test_opt_program_runs_the_smaller_sizes_while_theirs_compile():
    w, func = matmul_program()
    exe = tp.compile(func, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)])
    assert exe.wait(timeout=600)
    ranges = exe._program.ranges
    with ranges.lock:  # (as if the buckets below opt were still compiling)
        for bucket in [b for b in ranges.programs if b[0] < 8]:
            del ranges.programs[bucket]
        ranges._launchers.clear()
    before = tripy_backend.compilation_count()
    for n in (1, 5):
        assert ranges.running([(n, 1024), (1024, 1024)])[0] == (8,)  # (not the cover, x[0] <= 64)
        x = RNG.standard_normal((n, 1024)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ w, rtol=1e-3, atol=1e-2)
    assert tripy_backend.compilation_count() == before


def test_whether_the_rows_are_independent_is_found_once_for_the_whole_plan(capsys):
    w, func = matmul_program()
    with tp.logger.use_verbosity("passes"):
        exe = tp.compile(func, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)], wait=True)
    printed = capsys.readouterr()
    log = printed.out + printed.err
    assert log.count(": independent-rows in ") == 1 and log.count(": static-shapes in ") == 12
    for n in (1, 7, 40, 64):  # (each bucket's program, made from the module the cover's analysis gave)
        x = RNG.standard_normal((n, 1024)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ w, rtol=1e-3, atol=1e-2)


def test_calls_from_several_threads_while_the_plan_compiles(monkeypatch):
    w, func = matmul_program()
    exe = tp.compile(func, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)])
    before = tripy_backend.compilation_count()
    errors = []

    def sweep(offset):
        try:
            for n in list(range(1 + offset, 65, 4)) * 2:
                x = RNG.standard_normal((n, 1024)).astype(np.float32)
                out = np.from_dlpack(exe(tp.Tensor(x)))
                assert np.allclose(out, x @ w, rtol=1e-3, atol=1e-2), n
        except Exception as e:  # (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=sweep, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert tripy_backend.compilation_count() == before  # no call compiled on its own thread
    assert exe.wait(timeout=600)


def test_wait_true_returns_with_the_whole_plan():
    _, func = matmul_program()
    exe = tp.compile(func, args=[tp.InputInfo(((1, 4, 16), 1024), tp.float32)], wait=True)
    assert exe.ready
    x = tp.Tensor(np.ones((3, 1024), np.float32))
    background.wait_all()  # (other tests' executables may still compile in the background)
    before = tripy_backend.compilation_count(background=True)
    exe(x).eval()
    assert tripy_backend.compilation_count(background=True) == before


def test_a_cheap_program_gets_static_programs_for_the_shapes_its_calls_bring(logged):
    exe, text = logged(
        lambda: tp.compile(lambda x: tp.exp(x) * 2.0, args=[tp.InputInfo(((1, 20, 100), 3), tp.float32)])
    )
    assert "a cheap program (XLA's cost analysis)" in text
    exe.wait()
    before = tripy_backend.compilation_count()
    for n in (3, 47, 100):
        x = RNG.standard_normal((n, 3)).astype(np.float32)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), np.exp(x) * 2.0, rtol=1e-6), n  # padded, for now
    assert exe.wait(timeout=600)
    assert {((3, 3),), ((47, 3),)} <= set(exe._program._launchers)
    assert ((100, 3),) not in exe._program._launchers  # (100 is a bound: no padding to save)
    for n in (3, 47):  # now in their own programs
        x = RNG.standard_normal((n, 3)).astype(np.float32)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), np.exp(x) * 2.0, rtol=1e-6), n
        assert ((n, 3),) in exe._runs  # (kept by the fast path once the static program is there)
    assert tripy_backend.compilation_count() == before


def test_a_cheap_program_specializes_its_shapes_on_one_thread(monkeypatch):
    """The shapes that calls bring queue for one thread (starting a thread per shape kept calls waiting for the GIL
    and had the shapes' compiles compete with each other)."""
    from tripy_backend import program

    exe = tp.compile(lambda x: tp.exp(x) * 2.0, args=[tp.InputInfo(((1, 20, 100), 3), tp.float32)], wait=True)
    made, gate = [], threading.Event()

    class Counted(background.Jobs):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    specialize = program.Program._specialize_in_background
    monkeypatch.setattr(program, "Jobs", Counted)
    monkeypatch.setattr(
        program.Program, "_specialize_in_background", lambda self, shapes: gate.wait(60) and specialize(self, shapes)
    )
    sizes = (3, 5, 11, 27, 45, 77)  # (none a bucket's bound: each runs padded until specialized)
    for n in sizes:
        x = RNG.standard_normal((n, 3)).astype(np.float32)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), np.exp(x) * 2.0, rtol=1e-6), n
    assert len(made) == 1 and not exe.ready
    gate.set()
    assert exe.wait(timeout=600)
    assert {((n, 3),) for n in sizes} <= set(exe._program._launchers)


def test_a_cheap_program_stops_specializing_at_the_limit(monkeypatch):
    monkeypatch.setattr(range_plan, "EXACT_SIZES", 2)
    exe = tp.compile(lambda x: x + 1.0, args=[tp.InputInfo(((1, 4, 64), 2), tp.float32)], wait=True)
    for n in (3, 5, 6, 9, 10):
        x = RNG.standard_normal((n, 2)).astype(np.float32)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), x + 1.0), n
    exe.wait()
    assert len(exe._program._launchers) == 2


def test_a_saved_executable_is_complete_even_right_after_compile(tmp_path):
    _, func = matmul_program()
    exe = tp.compile(func, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)])
    path = str(tmp_path / "mm.tpexe")
    exe.save(path)  # (waits for the plan)
    assert exe.ready
    inputs = [tp.Tensor(np.ones((n, 1024), np.float32)) for n in (1, 5, 33, 64)]
    background.wait_all()  # (other tests' executables may still compile in the background)
    before = tripy_backend.compilation_count(background=True)
    loaded = tp.Executable.load(path)
    assert loaded.ready
    for x in inputs:
        loaded(x).eval()
    assert tripy_backend.compilation_count(background=True) == before


@pytest.mark.parametrize("calls", [False, True])
def test_exiting_while_the_plan_compiles_neither_hangs_nor_crashes(calls):
    script = textwrap.dedent(f"""
        import time, numpy as np, tripy as tp
        w = tp.Tensor(np.ones((512, 512), np.float32))
        exe = tp.compile(lambda x: tp.gelu(x @ w) @ w, args=[tp.InputInfo(((1, 8, 1024), 512), tp.float32)])
        assert not exe.ready
        if {calls}:
            exe(tp.Tensor(np.ones((300, 512), np.float32))).eval()
        print("exiting", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "exiting" in proc.stdout


@pytest.mark.parametrize(
    "func, args",
    [
        ("lambda x: x @ w", "[x]"),
        ('lambda xs: xs["x"] @ w', '[{"x": x}]'),  # (inputs in a dict: a call flattens them first)
    ],
    ids=["plain", "nested"],
)
def test_a_dropped_executable_stops_its_plan(func, args):
    # (`exe = tp.compile(...)` again in a loop or a notebook cell: the dropped executable's plan stops compiling,
    # the program compiling when it is dropped excepted; in a process of its own, which counts only its compiles)
    script = textwrap.dedent(f"""
        import gc, weakref, numpy as np, tripy as tp, tripy_backend
        gc.disable()  # (the executable goes when its last reference does: no cycle waits for the collector)
        w = tp.Tensor(np.ones((1024, 1024), np.float32))
        before = tripy_backend.compilation_count(background=True)
        x = tp.InputInfo(((1, 8, 64), 1024), tp.float32)
        exe = tp.compile({func}, args={args})
        jobs, planned, gone = exe._program.ranges._jobs, len(exe._program.ranges._missing()), weakref.ref(exe)
        del exe
        assert gone() is None and jobs.wait(timeout=300)
        print(planned, tripy_backend.compilation_count(background=True) - before, flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    planned, compiled = map(int, proc.stdout.split())
    assert planned >= 10 and compiled <= 3  # (the cover, the program compiling when it was dropped)


def test_a_plan_logged_to_a_closed_pipe_still_completes():
    # (`TRIPY_LOG=compile python app.py 2>&1 | head`: the log's reader goes away while the plan compiles in the
    # background; its programs still compile, Executable.wait returns, and the interpreter exits)
    script = textwrap.dedent("""
        import numpy as np, tripy as tp
        w = tp.Tensor(np.ones((512, 512), np.float32))
        exe = tp.compile(lambda x: tp.gelu(x @ w) @ w, args=[tp.InputInfo(((1, 8, 1024), 512), tp.float32)])
        assert exe.wait(timeout=300) and exe.ready
        print("complete", flush=True)
    """)
    env = dict(os.environ, TRIPY_LOG="compile")
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        for line in proc.stderr:
            if "more compile in the background" in line:
                break
        proc.stderr.close()  # (each write to the log now fails: a broken pipe)
        out = proc.stdout.read()
        assert proc.wait(timeout=300) == 0 and "complete" in out
    finally:
        proc.kill()


def test_independent_rows_run_in_the_smallest_bucket_ready_while_theirs_compiles(monkeypatch):
    gate = threading.Event()
    compile_later = ranges.RangeProgram._compile_later

    def held(self, bucket):  # (only the bucket of 5 and 6 rows compiles until the test lets the others)
        if bucket != (6,):
            gate.wait(600)
        compile_later(self, bucket)

    missing = ranges.RangeProgram._missing
    monkeypatch.setattr(ranges.RangeProgram, "_compile_later", held)
    monkeypatch.setattr(ranges.RangeProgram, "_missing", lambda self: sorted(missing(self), key=lambda b: b != (6,)))
    w, func = matmul_program()  # (not cheap: buckets at 3 * 2**k too, 1 2 3 4 6 7 8 12 16 24 32 48 64)
    exe = tp.compile(func, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)])
    plan = exe._program.ranges
    try:
        assert plan.rows
        for _ in range(6000):
            if (6,) in plan.programs:
                break
            time.sleep(0.01)
        for n, stand_in in [(1, (6,)), (5, (6,)), (20, (64,))]:
            x = RNG.standard_normal((n, 1024)).astype(np.float32)
            assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ w, rtol=1e-3, atol=1e-2), n
            assert plan.running([(n, 1024)])[0] == stand_in, n
    finally:
        gate.set()
    assert exe.wait(timeout=600)
    assert plan.running([(1, 1024)])[0] == (1,)


def test_a_call_standing_in_takes_the_fast_path_until_a_program_is_ready(monkeypatch):
    gate = threading.Event()
    compile_later = ranges.RangeProgram._compile_later
    monkeypatch.setattr(
        ranges.RangeProgram, "_compile_later", lambda self, b: gate.wait(600) and compile_later(self, b)
    )
    w, func = matmul_program()
    exe = tp.compile(func, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)])
    asked = []
    launcher = exe._program.launcher
    monkeypatch.setattr(exe._program, "launcher", lambda shapes: asked.append(shapes) or launcher(shapes))
    x = RNG.standard_normal((5, 1024)).astype(np.float32)
    try:
        for _ in range(3):  # (the cover stands in; asked for once, then the fast path runs it)
            np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ w, rtol=1e-3, atol=1e-2)
        assert len(asked) == 1 and exe._program.ranges.running([(5, 1024)])[0] == (64,)
    finally:
        gate.set()
    assert exe.wait(timeout=600)
    assert ((5, 1024),) not in exe._runs  # (forgotten as programs were ready: the next call asks again)
    np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x @ w, rtol=1e-3, atol=1e-2)
    assert len(asked) == 2 and exe._program.ranges.running([(5, 1024)])[0] == (6,)


@pytest.mark.parametrize("warm_flops", [0.0, 1e12])
def test_each_program_runs_once_as_it_is_ready_unless_it_does_much_work(monkeypatch, warm_flops):
    """A program runs once on zeros as it is ready (its one-time set-up is not the first request's), except one
    that does more than ``range_plan.WARM_FLOPS`` of work: a run would cost more than that set-up saves."""
    monkeypatch.setattr(range_plan, "WARM_FLOPS", warm_flops)
    runs = []
    launcher = ranges.RangeProgram.launcher

    class Counted:
        def __init__(self, run, rows):
            self._run, self._rows = run, rows

        def __call__(self, buffers):
            runs.append(self._rows)
            return self._run(buffers)

        def __getattr__(self, name):
            return getattr(self._run, name)

    def counted(self, shapes, *args, **kwargs):
        return Counted(launcher(self, shapes, *args, **kwargs), shapes[0][0])

    monkeypatch.setattr(ranges.RangeProgram, "launcher", counted)
    # (elementwise: XLA counts its work on every jaxlib; jaxlib 0.6 cannot tell a large product's, which then runs)
    exe = tp.compile(lambda x: x * 2.0 + 1.0, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)], wait=True)
    buckets = exe._program.ranges.buckets()
    assert sorted(runs) == ([] if warm_flops == 0 else sorted(b for (b,) in buckets))
    x = RNG.standard_normal((5, 1024)).astype(np.float32)
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), x * 2.0 + 1.0)
