"""The tripy logger (``tp.logger``): diagnostics by severity and IR dumps by topic, with nvtripy's names.

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
"""

from __future__ import annotations

import contextlib
import sys
import textwrap
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Tuple, Union

TOPICS = ("trace", "flat_ir", "mlir", "compile", "timing", "cache")
"""Topics: IR dumps and compiler/cache diagnostics."""

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
    part of tripy dumps MLIR), with the per-path sets in ``per_path`` (longest path first)."""

    per_path: Tuple[Tuple[str, frozenset], ...] = ()


class Logger:
    """The global logger, ``tp.logger``.

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
        self._verbosity: frozenset[str] = self._normalize("info")
        self.stream = sys.stdout
        self.enable_color = True
        """Color severities (verbose, warning, error) as nvtripy does, when the stream is a terminal."""
        self._indentation = 0
        self._logged_once: set = set()

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
        return cls._normalize_one(verbosity)

    @staticmethod
    def _normalize_one(verbosity: Any) -> frozenset[str]:
        if verbosity is None:
            return frozenset()
        names = {verbosity} if isinstance(verbosity, str) else set(verbosity)
        if "all" in names:
            return frozenset(VERBOSITY_CONFIGS) - {"ir"}
        unknown = names - set(VERBOSITY_CONFIGS)
        if unknown:
            from tripy_flatir.exceptions import TripyException

            raise TripyException(f"Unknown logger topic(s) {sorted(unknown)}; choose from "
                                 f"{list(VERBOSITY_CONFIGS)} or 'all'.")
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

    def log(self, message: Union[str, Callable[[], str]], verbosity: str, mode: str = "each",
            stack_depth: Optional[int] = None) -> None:
        """Print `message` if `verbosity` is enabled. Pass a callable to avoid building text nobody reads.
        ``mode="once"`` prints a given message only the first time. (`stack_depth` is accepted for nvtripy
        code; tripy's verbosity is global, so it is not needed.)"""
        if verbosity not in VERBOSITY_CONFIGS or verbosity == "ir":
            from tripy_flatir.exceptions import TripyException

            raise TripyException(f"Unknown verbosity {verbosity!r} for logger.log(message, verbosity); choose from "
                                 f"{[v for v in VERBOSITY_CONFIGS if v != 'ir']}.")
        if verbosity not in self._verbosity or not self._enabled_here(verbosity):
            return
        if mode == "once":
            if message in self._logged_once:
                return
            self._logged_once.add(message)
        text = message() if callable(message) else message
        prefix, color, _ = VERBOSITY_CONFIGS[verbosity]
        text = prefix + textwrap.indent(text, " " * self._indentation)
        if color and self.enable_color and getattr(self.stream, "isatty", lambda: False)():
            text = f"{color}{text}{_RESET}"
        print(text, file=self.stream, flush=True)

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
        path = "/".join([parts[0][len("tripy_"):]] + parts[1:]) if parts[0].startswith("tripy_") else ""
        for prefix, enabled in per_path:
            if prefix == "" or path == prefix or path.startswith(prefix + "/"):
                return verbosity in enabled
        return False

    def __getattr__(self, name: str) -> Any:
        if name in VERBOSITY_CONFIGS and name != "ir":
            return lambda message, mode="each": self.log(message, name, mode)
        raise AttributeError(f"Logger has no attribute: '{name}'.")


logger = Logger()
