"""Whether tp.compile is tracing a function right now, so that evaluating a tensor meanwhile can be flagged:
the value is computed eagerly, once, and baked into the executable (as nvtripy warns, too)."""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Optional


class _State(threading.local):
    # A class attribute: every thread starts out not tracing, and reading it never raises (getattr with a
    # default on a missing thread-local attribute costs about a microsecond, on every eager evaluation).
    function: Optional[str] = None


_state = _State()


@contextlib.contextmanager
def tracing(function_name: str) -> Iterator[None]:
    """Mark the body as tp.compile tracing `function_name` (nests)."""
    old = _state.function
    _state.function = function_name
    try:
        yield
    finally:
        _state.function = old


def traced_function() -> Optional[str]:
    """The name of the function tp.compile is tracing on this thread, or None."""
    return _state.function
