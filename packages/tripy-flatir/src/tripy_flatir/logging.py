"""The tripy logger (``tp.logger``): diagnostics by severity and IR dumps by topic, with nvtripy's names.

    tp.logger.verbosity = "verbose"                  # severities: verbose > info > warning > error
    tp.logger.verbosity = {"trace", "flat_ir", "mlir"}   # topics: IR dumps, compile timing, caches
    with tp.logger.use_verbosity("mlir"):
        ...
    tp.logger.warning("something")                   # or tp.logger.log("something", "warning")

A severity enables the ones below it (``"info"`` enables ``"warning"`` and ``"error"``); ``"ir"``
enables every IR dump and ``"all"`` every verbosity. The default is ``"info"``.
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

Verbosity = Union[str, Iterable[str], None]


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

    @staticmethod
    def _normalize(verbosity: Verbosity) -> frozenset[str]:
        if verbosity is None:
            return frozenset()
        if isinstance(verbosity, dict):
            from tripy_flatir.exceptions import TripyException

            raise TripyException("Per-module logger verbosities ({path: verbosity}) are not supported by tripy: "
                                 "set one verbosity for all of it, e.g. tp.logger.verbosity = 'verbose'.")
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
        if verbosity not in self._verbosity:
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

    def __getattr__(self, name: str) -> Any:
        if name in VERBOSITY_CONFIGS and name != "ir":
            return lambda message, mode="each": self.log(message, name, mode)
        raise AttributeError(f"Logger has no attribute: '{name}'.")


logger = Logger()
