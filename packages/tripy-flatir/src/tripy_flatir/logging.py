"""The tripy logger: IR dumps and diagnostics, switched on by topic.

    tp.logger.verbosity = {"trace", "flat_ir", "mlir"}
    with tp.logger.use_verbosity("mlir"):
        ...
"""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterable, Iterator, Union

TOPICS = ("trace", "flat_ir", "mlir", "compile", "timing", "cache")


class Logger:
    def __init__(self) -> None:
        self._verbosity: frozenset[str] = frozenset()
        self.stream = sys.stdout

    @property
    def verbosity(self) -> frozenset[str]:
        return self._verbosity

    @verbosity.setter
    def verbosity(self, topics: Union[str, Iterable[str], None]) -> None:
        self._verbosity = self._normalize(topics)

    @staticmethod
    def _normalize(topics: Union[str, Iterable[str], None]) -> frozenset[str]:
        if topics is None:
            return frozenset()
        if isinstance(topics, str):
            topics = {topics}
        topics = frozenset(topics)
        if "all" in topics:
            return frozenset(TOPICS)
        unknown = topics - set(TOPICS)
        if unknown:
            from tripy_flatir.exceptions import TripyException

            raise TripyException(f"Unknown logger topic(s) {sorted(unknown)}; choose from {list(TOPICS)} or 'all'.")
        return topics

    @contextlib.contextmanager
    def use_verbosity(self, topics: Union[str, Iterable[str], None]) -> Iterator[None]:
        old = self._verbosity
        self._verbosity = self._normalize(topics)
        try:
            yield
        finally:
            self._verbosity = old

    def enabled(self, topic: str) -> bool:
        return topic in self._verbosity

    def log(self, topic: str, message: Union[str, Callable[[], str]]) -> None:
        """Print `message` if `topic` is on. Pass a callable to avoid building text nobody reads."""
        if topic in self._verbosity:
            text = message() if callable(message) else message
            print(text, file=self.stream, flush=True)


logger = Logger()
