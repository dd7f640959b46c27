"""The logger's environment variable, its records in Python's ``logging`` (stderr by default, ``caplog``),
user warnings as ``TripyWarning``, whole-line writes from many threads, and progress reports (log lines as
work starts and ends; a bar on a terminal)."""

import fcntl
import io
import logging
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
import warnings

import pytest

from tripy_flatir.exceptions import TripyWarning, warn
from tripy_flatir.logging import logger


def _verbosity_with(env_value):
    code = "from tripy_flatir.logging import logger; print(','.join(sorted(logger.verbosity)))"
    env = dict(os.environ, TRIPY_LOG=env_value)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.strip().split(",")) - {""}, done.stderr


def test_tripy_log_sets_the_verbosity():
    enabled, _ = _verbosity_with("compile,timing")
    assert enabled == {"compile", "timing", "info", "warning", "error"}  # (no severity named: info stays on)
    enabled, _ = _verbosity_with("error, mlir")
    assert enabled == {"error", "mlir"}
    enabled, _ = _verbosity_with("")
    assert enabled == {"info", "warning", "error"}
    enabled, err = _verbosity_with("compile,timming")  # a typo: a warning, not a failed import
    assert enabled == {"info", "warning", "error"} and "ignoring TRIPY_LOG='compile,timming'" in err
    assert "TripyWarning" in err  # (a Python warning: the user can filter it)
    assert "timming" in err and "choose from" in err


def test_tripy_log_turns_on_compile_logging_without_code_changes():
    code = "import tripy as tp\ntp.compile(lambda x: x + 1.0, args=[tp.InputInfo((2,), tp.float32)])\n"
    env = dict(os.environ, TRIPY_LOG="compile")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "[compile] tripy.compile(<lambda>): tracing <lambda> ..." in done.stderr  # (stderr: stdout is the app's)
    assert "[compile] XLA:CPU: tripy.compile(<lambda>)" in done.stderr and done.stdout == ""


class _SlowStream:
    """A stream that takes its time over every write, one character at a time (as a pipe or terminal may
    take a long line in pieces), so unsynchronized writers would run into each other."""

    def __init__(self):
        self.chars = []

    def write(self, text):
        for ch in text:
            self.chars.append(ch)
            time.sleep(0)  # (let another thread run)
        return len(text)

    def flush(self):
        pass

    def getvalue(self):
        return "".join(self.chars)


def test_concurrent_messages_never_interleave(monkeypatch):
    stream = _SlowStream()
    monkeypatch.setattr(logger, "stream", stream)
    messages = {f"thread {i}: " + chr(ord("a") + i) * 60 for i in range(8)}
    barrier = threading.Barrier(len(messages))

    def work(message):
        barrier.wait()
        for _ in range(20):
            logger.log(message, "compile")

    with logger.use_verbosity("compile"):
        threads = [threading.Thread(target=work, args=(m,)) for m in messages]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 20 * len(messages) and set(lines) == messages


def test_progress_logs_each_step_as_it_starts_and_ends(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(logger, "stream", stream)
    with logger.use_verbosity("compile"):
        with logger.progress("building", 2) as progress:
            with progress.step("first part"):
                assert stream.getvalue().splitlines() == ["[compile] building: first part ..."]  # (while it runs)
            progress.step_started("second part")
            progress.step_done()  # (a caller with a line of its own)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[compile] building: first part ..."
    assert lines[1].startswith("[compile] building: (1/2) first part done (") and lines[1].endswith(" s so far)")
    assert lines[2:] == ["[compile] building: second part ..."] and progress.done == 2
    with logger.progress("quiet", 1) as progress:  # topic off: nothing is printed
        with progress.step("a step"):
            pass
    assert len(stream.getvalue().splitlines()) == 3


_BAR_SCRIPT = """
import time
from tripy_flatir.logging import Progress, logger
Progress.BAR_DELAY = {delay}
with logger.progress("compiling things", 3) as progress:
    for i in range(3):
        with progress.step(f"thing {{i}}"):
            time.sleep(0.4)
        logger.warning(f"log line {{i}}")  # (stderr too: written above the bar, which is redrawn)
"""


def _stderr_on_a_terminal(delay):
    """What the script writes to stderr when stderr is a (pseudo-)terminal."""
    pytest.importorskip("tqdm")
    main, replica = pty.openpty()
    fcntl.ioctl(replica, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # (30 rows, 100 columns)
    env = dict(os.environ)
    env.pop("TRIPY_PROGRESS", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", _BAR_SCRIPT.format(delay=delay)], stderr=replica, stdout=subprocess.DEVNULL, env=env
    )
    os.close(replica)
    chunks = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # (the terminal's other end closed: the script is done)
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode(errors="replace")


def test_a_terminal_gets_a_progress_bar_once_work_takes_long():
    shown = _stderr_on_a_terminal(delay=0.2)
    assert "compiling things" in shown and "/3" in shown  # the bar, with its count
    assert "thing" in shown  # and what is running now
    assert all(f"[W] log line {i}" in shown for i in range(3))
    quiet = _stderr_on_a_terminal(delay=30.0)  # short work: no bar at all, only the log lines
    assert quiet.replace("\x1b[93m", "").replace("\x1b[0m", "").split() == [
        "[W]",
        "log",
        "line",
        "0",
        "[W]",
        "log",
        "line",
        "1",
        "[W]",
        "log",
        "line",
        "2",
    ]


def test_default_stream_is_stderr_at_write_time(capsys):
    # the default stream is sys.stderr when the message is written, not the one there was at import, so
    # capsys (and redirect_stderr) see the log, and stdout stays the application's
    logger.info("Test Message")
    with logger.indent():
        logger.info(lambda: "indented")
    captured = capsys.readouterr()
    assert "[I] Test Message\n" in captured.err and "[I]     indented\n" in captured.err and captured.out == ""


def _log_each_kind():
    logger.verbose("a verbose line")
    logger.info("an info line")
    logger.warning("a warning line")
    logger.log("==== MLIR ====", "mlir")
    with logger.indent(2):
        logger.log(lambda: "[compile] compiled", "compile")


def test_records_go_to_one_python_logger_per_topic(caplog):
    with logger.use_verbosity({"info", "mlir", "compile"}):
        _log_each_kind()
    seen = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    assert seen == [
        ("tripy", "INFO", "an info line"),
        ("tripy", "WARNING", "a warning line"),
        ("tripy.mlir", "INFO", "==== MLIR ===="),
        ("tripy.compile", "INFO", "  [compile] compiled"),
    ]
    # each record names the code that logged it, not the logger
    assert {(r.filename, r.funcName) for r in caplog.records} == {("test_logging.py", "_log_each_kind")}


def test_severity_methods_take_the_mode_by_position_as_nvtripys(caplog):
    for _ in range(3):
        logger.warning("said once", "once")
        logger.info(lambda: "said each time", "each")
    assert [r.getMessage() for r in caplog.records] == ["said once"] + ["said each time"] * 3


def test_verbose_is_debug_and_disabled_topics_make_no_record(caplog):
    with logger.use_verbosity("verbose"):
        _log_each_kind()
    assert [(r.name, r.levelno) for r in caplog.records] == [
        ("tripy", logging.DEBUG),
        ("tripy", logging.INFO),
        ("tripy", logging.WARNING),
    ]


def test_a_stream_of_none_leaves_the_records_to_logging(caplog, capsys):
    old, logger.stream = logger.stream, None
    try:
        logger.warning("for logging only")
    finally:
        logger.stream = old
    assert capsys.readouterr().err == "" and [r.getMessage() for r in caplog.records] == ["for logging only"]


class _ClosedPipe:
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        pass


def test_a_stream_that_fails_to_write_loses_the_line_and_the_caller_goes_on(monkeypatch, capsys):
    monkeypatch.setattr(logger, "stream", _ClosedPipe())  # (output piped to `head`, which has exited)
    with logger.use_verbosity({"compile", "info"}):
        logger.log("lost", "compile")
        logger.info("lost too")
    assert "BrokenPipeError" in capsys.readouterr().err  # (logging's report of a handler's error)


def test_an_applications_level_filters_tripys_records(caplog):
    tripy_compile = logging.getLogger("tripy.compile")
    tripy_compile.setLevel(logging.WARNING)
    try:
        with logger.use_verbosity({"compile", "info"}):
            logger.log("filtered out", "compile")
            logger.info("kept")
    finally:
        tripy_compile.setLevel(logging.NOTSET)
    assert [r.getMessage() for r in caplog.records] == ["kept"]


def test_records_logged_through_logging_itself_get_their_severitys_prefix():
    stream = io.StringIO()
    old, logger.stream = logger.stream, stream
    try:
        for level in (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL):
            logging.getLogger("tripy.compile").log(level, "x")
    finally:
        logger.stream = old
    assert stream.getvalue() == "[V] x\n[I] x\n[W] x\n[E] x\n[E] x\n"


def test_a_level_set_before_import_is_kept():
    code = (
        "import logging; logging.getLogger('tripy').setLevel(logging.WARNING)\n"
        "from tripy_flatir.logging import logger\nlogger.info('quiet')\nlogger.warning('loud')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "[W] loud\n" and done.stdout == "", done.stderr


def _warn_from_here():
    warn("baked in")


def test_user_warnings_are_tripy_warnings():
    with pytest.warns(TripyWarning, match="^baked in$") as caught:
        _warn_from_here()
    assert caught[0].filename == __file__  # (without a user frame: the caller of the function that warns)
    assert issubclass(TripyWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TripyWarning)  # (a Python warning: filters apply)
        with pytest.raises(TripyWarning):
            _warn_from_here()


@pytest.mark.parametrize(
    "verbosity,trie",
    [
        ("info", {"": {"info", "warning", "error"}}),
        ("flat_ir", {"": {"flat_ir"}}),
        ({"info", "trace"}, {"": {"info", "warning", "error", "trace"}}),
        ({"frontend": "error"}, {"frontend": {"": {"error"}}, "": {"error", "warning", "info"}}),
        (
            {"frontend/ops": {"error", "timing"}},
            {"frontend": {"ops": {"": {"timing", "error"}}}, "": {"error", "warning", "info"}},
        ),
    ],
)
def test_verbosity_compares_equal_to_nvtripys_trie(verbosity, trie):
    with logger.use_verbosity(verbosity):
        assert logger.verbosity == trie and not logger.verbosity != trie
    with logger.use_verbosity("info"):  # (still a set of names, too)
        assert logger.verbosity == {"info", "warning", "error"} and logger.verbosity == {
            "": {"info", "warning", "error"}
        }
