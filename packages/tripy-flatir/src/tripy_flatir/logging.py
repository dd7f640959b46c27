"""The tripy logger (``tp.logger``): diagnostics by severity and IR dumps by topic, with nvtripy's names,
built on Python's ``logging``.

    tp.logger.verbosity = "verbose"                  # severities: verbose > info > warning > error
    tp.logger.verbosity = {"trace", "flat_ir", "mlir"}   # topics: IR dumps, compile timing, caches
    with tp.logger.use_verbosity("mlir"):
        ...
    tp.logger.warning("something")                   # or tp.logger.log("something", "warning")

A severity enables the ones below it (``"info"`` enables ``"warning"`` and ``"error"``); ``"ir"``
enables every IR dump and ``"all"`` every verbosity. The default is ``"info"``.

As in nvtripy, a dict sets verbosities per part of tripy, by path: ``{"frontend": "verbose"}`` applies to
messages logged from ``tripy_frontend`` (``"frontend/ops"`` to ``tripy_frontend.ops``, ``"backend"`` to
``tripy_backend``, ...); the ``""`` entry (default ``"info"``) applies everywhere else.

The environment variable ``TRIPY_LOG`` sets the starting verbosity without editing code: a comma-separated
list (``TRIPY_LOG=compile,timing``); unless it names a severity, ``info`` stays on too.

Each enabled message becomes a ``logging`` record: severities on the ``tripy`` logger (verbose is DEBUG),
each topic on a logger of its own (``tripy.compile``, ``tripy.mlir``, ..., at INFO), so an application's
handlers and pytest's ``caplog`` see them. tripy's own handler writes them to ``sys.stderr`` (the one there is
when a message is written) with nvtripy's prefixes; ``tp.logger.stream`` replaces that stream, and ``None``
leaves the records to ``logging``'s handlers alone. Each message is written whole (one write, under the
handler's lock), so messages logged by threads at the same time (parallel compiles) never run into each other.
A write that fails (output piped to ``head``, which has exited) goes to ``logging``'s error handling, as with its own
handlers: the line is lost, the work that logged it goes on.

Warnings meant for the user (a tensor baked into an executable, an ignored setting) are ``warnings`` of the
class ``TripyWarning``, so they can be filtered or turned into errors as any Python warning.

``logger.progress`` reports long work while it runs (see ``Progress``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import textwrap
import threading
import time
import warnings
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Tuple, Union
from tripy_flatir.exceptions import TripyException, TripyWarning

TOPICS = ("trace", "flat_ir", "mlir", "compile", "passes", "timing", "cache")
"""Topics: IR dumps, compiler and cache diagnostics, the backend's passes (each one's time)."""

# name -> (prefix, ANSI color, the verbosities it also enables)
VERBOSITY_CONFIGS: Dict[str, Tuple[str, str, Tuple[str, ...]]] = {
    "verbose": ("[V] ", "\x1b[95m", ("info", "warning", "error")),
    "info": ("[I] ", "", ("warning", "error")),
    "warning": ("[W] ", "\x1b[93m", ("error",)),
    "error": ("[E] ", "\x1b[91m", ()),
    "ir": ("", "", ("trace", "flat_ir", "mlir")),
    **{topic: ("", "", ()) for topic in TOPICS},
}
_RESET = "\x1b[0m"

Verbosity = Union[str, Iterable[str], Dict[str, Any], None]


class VerbositySet(frozenset):
    """The enabled verbosities: those of every path (so ``"mlir" in tp.logger.verbosity`` tells whether any
    part of tripy dumps MLIR), with the per-path sets in ``per_path`` (longest path first). It also compares
    equal to nvtripy's form of the verbosity, a trie by path: ``{"": {"info", "warning", "error"}}``,
    ``{"frontend": {"": {"error"}}, "": {...}}``."""

    per_path: Tuple[Tuple[str, frozenset], ...] = ()

    def as_trie(self) -> Dict[str, Any]:
        """nvtripy's form: the default set under ``""``, each path's set under its parts."""
        trie: Dict[str, Any] = {"": set(dict(self.per_path).get("", self))}
        for path, enabled in self.per_path:
            node = trie
            for part in path.split("/") if path else []:
                node = node.setdefault(part, {})
            node[""] = set(enabled)
        return trie

    def __eq__(self, other: object) -> bool:
        if isinstance(other, dict):
            return self.as_trie() == other
        return frozenset.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = frozenset.__hash__


PYTHON_LEVELS = {"verbose": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
"""The ``logging`` level of each severity's records; a topic's records are INFO."""


def python_logger(verbosity: str) -> logging.Logger:
    """The ``logging`` logger that gets the records of `verbosity`: ``tripy`` for a severity, ``tripy.<topic>``
    for a topic."""
    return logging.getLogger("tripy" if verbosity in PYTHON_LEVELS else f"tripy.{verbosity}")


class _Stderr:
    """The default log stream: whatever ``sys.stderr`` is when a message is written, so output redirected or
    captured after ``import tripy`` (pytest's ``capsys``, ``contextlib.redirect_stderr``) gets the log too."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())

    def __repr__(self) -> str:
        return "<tripy log stream: sys.stderr>"


class _Handler(logging.Handler):
    """tripy's handler on the ``tripy`` logger: each record as nvtripy prints it (``[I] `` and the message,
    colored on a terminal), in one write to `stream` (nothing when `stream` is None)."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.stream: Any = _Stderr()
        self.enable_color = True

    def emit(self, record: logging.LogRecord) -> None:
        stream = self.stream
        if stream is None:
            return
        verbosity = getattr(record, "tripy_verbosity", None) or _severity_of(record.levelno)
        prefix, color, _ = VERBOSITY_CONFIGS.get(verbosity, ("", "", ()))
        text = prefix + record.getMessage()
        if color and self.enable_color and getattr(stream, "isatty", lambda: False)():
            text = f"{color}{text}{_RESET}"
        try:
            with _clear_progress_bar(stream):
                stream.write(text + "\n")
                stream.flush()
        except Exception:  # (a closed pipe, a full disk: a log line is never worth the work that logs it)
            self.handleError(record)


def _severity_of(level: int) -> str:
    """The severity of a record logged on a ``tripy`` logger through ``logging`` itself, not ``tp.logger``."""
    return next((name for name in ("error", "warning", "info") if level >= PYTHON_LEVELS[name]), "verbose")


def _clear_progress_bar(stream: Any) -> Any:
    """While a progress bar shows on stderr, a line written there clears the bar and redraws it after."""
    shown = Progress._shown
    if shown is None or not isinstance(stream, _Stderr) or time.perf_counter() - shown._start < shown.BAR_DELAY:
        return contextlib.nullcontext()  # (no bar, or not drawn yet: redrawing it would show it early)
    return _tqdm().external_write_mode(file=sys.stderr)


_HANDLER = _Handler()
logging.getLogger("tripy").addHandler(_HANDLER)
if logging.getLogger("tripy").level == logging.NOTSET:  # (unless the application set a level before import)
    # whether a message is wanted is tp.logger's verbosity: the ``tripy`` loggers pass on every record it enables
    logging.getLogger("tripy").setLevel(logging.DEBUG)


class Logger:
    """The global logger, ``tp.logger``. Its messages are ``logging`` records (``tripy`` and ``tripy.<topic>``),
    written to ``sys.stderr`` unless ``stream`` says otherwise.

    .. code-block:: python

        import io

        old_stream, tp.logger.stream = tp.logger.stream, io.StringIO()
        tp.logger.verbose("This will NOT be logged")
        with tp.logger.use_verbosity("verbose"):
            tp.logger.verbose("This will be logged")
            with tp.logger.indent(2):
                tp.logger.info("indented")
        text, tp.logger.stream = tp.logger.stream.getvalue(), old_stream
        assert text == "[V] This will be logged\\n[I]   indented\\n"
    """

    VERBOSITY_CONFIGS = VERBOSITY_CONFIGS

    def __init__(self) -> None:
        self._verbosity: frozenset[str] = _from_environment(os.environ.get("TRIPY_LOG", ""))
        self._indentation = 0
        self._logged_once: set = set()

    @property
    def stream(self) -> Any:
        """Where tripy's handler writes (default: ``sys.stderr`` at the time of each write); ``None``: nowhere,
        the records go to ``logging``'s other handlers only."""
        return _HANDLER.stream

    @stream.setter
    def stream(self, stream: Any) -> None:
        _HANDLER.stream = stream

    @property
    def enable_color(self) -> bool:
        """Color severities (verbose, warning, error) as nvtripy does, when the stream is a terminal."""
        return _HANDLER.enable_color

    @enable_color.setter
    def enable_color(self, enable: bool) -> None:
        _HANDLER.enable_color = enable

    @property
    def verbosity(self) -> frozenset[str]:
        return self._verbosity

    @verbosity.setter
    def verbosity(self, verbosity: Verbosity) -> None:
        self._verbosity = self._normalize(verbosity)

    @classmethod
    def _normalize(cls, verbosity: Verbosity) -> frozenset[str]:
        if isinstance(verbosity, VerbositySet):
            return verbosity
        if isinstance(verbosity, dict):
            per_path = {str(k).replace(".", "/").strip("/"): cls._normalize_one(v) for k, v in verbosity.items()}
            default = per_path.pop("", cls._normalize_one("info"))
            result = VerbositySet(default.union(*per_path.values()))
            result.per_path = tuple(sorted(per_path.items(), key=lambda kv: -len(kv[0]))) + (("", default),)
            return result
        return VerbositySet(cls._normalize_one(verbosity))

    @staticmethod
    def _normalize_one(verbosity: Any) -> frozenset[str]:
        if verbosity is None:
            return frozenset()
        names = {verbosity} if isinstance(verbosity, str) else set(verbosity)
        if "all" in names:
            return frozenset(VERBOSITY_CONFIGS) - {"ir"}
        unknown = names - set(VERBOSITY_CONFIGS)
        if unknown:
            raise TripyException(
                f"Unknown logger topic(s) {sorted(unknown)}; choose from {list(VERBOSITY_CONFIGS)} or 'all'."
            )
        for name in list(names):
            names.update(VERBOSITY_CONFIGS[name][2])
        return frozenset(names - {"ir"})

    @contextlib.contextmanager
    def use_verbosity(self, verbosity: Verbosity) -> Iterator[None]:
        """Temporarily use another verbosity."""
        old = self._verbosity
        self._verbosity = self._normalize(verbosity)
        try:
            yield
        finally:
            self._verbosity = old

    @contextlib.contextmanager
    def indent(self, level: int = 4) -> Iterator[None]:
        """Indent every message logged inside by `level` spaces (nests)."""
        old = self._indentation
        self._indentation += level
        try:
            yield
        finally:
            self._indentation = old

    def enabled(self, verbosity: str) -> bool:
        return verbosity in self._verbosity

    def log(
        self,
        message: Union[str, Callable[[], str]],
        verbosity: str,
        mode: str = "each",
        stack_depth: Optional[int] = None,
    ) -> None:
        """Log `message` if `verbosity` is enabled. Pass a callable to avoid building text nobody reads.
        ``mode="once"`` logs a given message only the first time. (`stack_depth` is accepted for nvtripy
        code; the record names the caller of ``log``.)"""
        self._emit(message, verbosity, mode)

    def _log_at(self, verbosity: str, message: Union[str, Callable[[], str]], mode: str = "each") -> None:
        """``tp.logger.info(message, mode)`` and the other severities and topics."""
        self._emit(message, verbosity, mode)

    def _emit(self, message: Union[str, Callable[[], str]], verbosity: str, mode: str) -> None:
        """(called by ``log`` and ``_log_at`` only: the record names their caller, two frames up)"""
        if verbosity not in VERBOSITY_CONFIGS or verbosity == "ir":
            raise TripyException(
                f"Unknown verbosity {verbosity!r} for logger.log(message, verbosity); choose from "
                f"{[v for v in VERBOSITY_CONFIGS if v != 'ir']}."
            )
        if verbosity not in self._verbosity or not self._enabled_here(verbosity):
            return
        if mode == "once":
            if message in self._logged_once:
                return
            self._logged_once.add(message)
        text = textwrap.indent(message() if callable(message) else message, " " * self._indentation)
        python_logger(verbosity).log(
            PYTHON_LEVELS.get(verbosity, logging.INFO), "%s", text, stacklevel=3, extra={"tripy_verbosity": verbosity}
        )

    def progress(self, what: str, total: int, topic: str = "compile") -> "Progress":
        """Report long work (`total` steps) while it runs: ``with logger.progress(...) as p: ...
        p.step_done(description)``. See ``Progress``."""
        return Progress(self, what, total, topic)

    @contextlib.contextmanager
    def background(self) -> Iterator[None]:
        """Work in this thread runs in the background (compiles ``tp.compile`` did not wait for): its progress
        reports log their lines but show no bar and do not count as work the caller waits on."""
        _background.on = True
        try:
            yield
        finally:
            _background.on = False

    def _enabled_here(self, verbosity: str) -> bool:
        """With per-path verbosities: whether `verbosity` is on for the part of tripy that is logging."""
        per_path = getattr(self._verbosity, "per_path", ())
        if not per_path:
            return True
        frame = sys._getframe(2)
        while frame is not None and frame.f_globals.get("__name__") == __name__:
            frame = frame.f_back  # type: ignore[assignment]
        module = frame.f_globals.get("__name__", "") if frame is not None else ""
        parts = module.split(".")
        path = "/".join([parts[0][len("tripy_") :]] + parts[1:]) if parts[0].startswith("tripy_") else ""
        for prefix, enabled in per_path:
            if prefix == "" or path == prefix or path.startswith(prefix + "/"):
                return verbosity in enabled
        return False

    def __getattr__(self, name: str) -> Any:
        if name in VERBOSITY_CONFIGS and name != "ir":
            return functools.partial(self._log_at, name)  # (no frame of its own: the record names the caller)
        raise AttributeError(f"Logger has no attribute: '{name}'.")


def _from_environment(value: str) -> frozenset[str]:
    """The verbosity ``TRIPY_LOG`` asks for (see the module docstring); "info" if it is unset or unknown."""
    names = {n.strip() for n in value.split(",") if n.strip()}
    if not names:
        return Logger._normalize("info")
    if not names & {"verbose", "info", "warning", "error", "all"}:
        names.add("info")
    try:
        return Logger._normalize(names)
    except Exception as e:  # (a typo in the environment must not stop ``import tripy``)
        warnings.warn(f"tripy: ignoring TRIPY_LOG={value!r}: {e}", TripyWarning, stacklevel=2)
        return Logger._normalize("info")


_PROGRESS_LOCK = threading.Lock()
_background = threading.local()  # .on: this thread's work is in the background (``Logger.background``)


class Progress:
    """Long work reporting while it runs (``logger.progress(what, total)``, a context manager).

    ``step_started(description)`` and ``step_done(description)`` log a line on the topic (``compile``) as each
    step starts and ends, so the log says what is running now, not only what has finished. Where stderr is a
    terminal and ``tqdm`` is installed (the ``progress`` extra of ``tripy-inference``), a progress bar also shows on
    stderr once the work has taken ``BAR_DELAY`` seconds (short work shows nothing), and its elapsed time
    keeps moving while a long step (one big compile) runs. ``TRIPY_PROGRESS=0`` turns the bar off. Work
    reported inside other reported work (the programs of a range compile) gets no bar of its own.
    Thread-safe: steps may start and end in several threads."""

    BAR_DELAY = 1.0
    _depth = 0  # how many reports are running (in any thread): only the outermost shows a bar...
    _shown: Optional["Progress"] = None  # ...this one, where the reports inside it show their counts

    def __init__(self, logger: Logger, what: str, total: int, topic: str) -> None:
        self.logger, self.what, self.total, self.topic = logger, what, total, topic
        self.done = 0
        self._lock = threading.Lock()
        self._bar: Any = None
        self._stop = threading.Event()
        self._ticker: Optional[threading.Thread] = None
        self._quiet = False  # (set on entry: background work shows no bar)

    def __enter__(self) -> "Progress":
        self._start = time.perf_counter()
        self._quiet = getattr(_background, "on", False)
        if self._quiet:  # (background work: lines in the log only)
            return self
        with _PROGRESS_LOCK:
            Progress._depth += 1
            outermost = Progress._depth == 1
        if outermost and _bar_wanted():
            self._bar = _tqdm()(
                total=self.total,
                desc=self.what,
                unit="step",
                delay=self.BAR_DELAY,
                leave=False,
                file=sys.stderr,
                dynamic_ncols=True,
            )
            Progress._shown = self
            self._ticker = threading.Thread(target=self._tick, name="tripy-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._quiet:
            return
        with _PROGRESS_LOCK:
            Progress._depth -= 1
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._bar is not None:
            Progress._shown = None
            self._bar.close()

    @contextlib.contextmanager
    def step(self, description: str) -> Iterator[None]:
        """``step_started(description)``, the body, then ``step_done(description)``."""
        self.step_started(description)
        yield
        self.step_done(description)

    def set_total(self, total: int) -> None:
        """The work turned out to have `total` steps."""
        self.total = total
        if self._bar is not None:
            self._bar.total = total
            self._bar.refresh()

    def step_started(self, description: str) -> None:
        self.logger.log(lambda: f"[{self.topic}] {self.what}: {description} ...", self.topic)
        shown = Progress._shown
        if self._quiet:
            return
        if shown is not None and shown is not self:  # (work inside the work with the bar)
            shown._bar.set_postfix_str(f"{self.what} {self.done}/{self.total}", refresh=False)
        elif self._bar is not None:
            self._bar.set_postfix_str(description, refresh=False)

    def step_done(self, description: Optional[str] = None) -> None:
        """One more step is done (logged if `description` is given: callers with a line of their own omit it)."""
        with self._lock:
            self.done += 1
            done = self.done
        elapsed = time.perf_counter() - self._start
        if description is not None:
            self.logger.log(
                lambda: (
                    f"[{self.topic}] {self.what}: ({done}/{self.total}) {description} done ({elapsed:.3f} s so far)"
                ),
                self.topic,
            )
        shown = Progress._shown
        if self._quiet:
            return
        if self._bar is not None:
            self._bar.update(1)
        elif shown is not None:
            shown._bar.set_postfix_str(f"{self.what} {done}/{self.total}", refresh=False)

    def _tick(self) -> None:  # (a thread: the bar's clock moves while one step blocks for seconds)
        while not self._stop.wait(0.25):
            if time.perf_counter() - self._start >= self.BAR_DELAY:
                self._bar.refresh()


def _bar_wanted() -> bool:
    if os.environ.get("TRIPY_PROGRESS", "1").lower() in ("0", "off", "false") or _tqdm() is None:
        return False
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def _tqdm() -> Any:
    """tqdm's progress bar class, or None where the optional dependency (``progress`` extra) is missing."""
    try:
        from tqdm import tqdm  # (optional: imported only when a bar could show)
    except ImportError:
        return None
    return tqdm


logger = Logger()
