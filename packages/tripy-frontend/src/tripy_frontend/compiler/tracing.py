"""Whether tp.compile is tracing a function right now, so that evaluating a tensor meanwhile can be flagged:
the value is computed eagerly, once, and baked into the executable (as nvtripy warns, too)."""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Optional

_state = threading.local()


@contextlib.contextmanager
def tracing(function_name: str) -> Iterator[None]:
    """Mark the body as tp.compile tracing `function_name` (nests)."""
    old = getattr(_state, "function", None)
    _state.function = function_name
    try:
        yield
    finally:
        _state.function = old


def traced_function() -> Optional[str]:
    """The name of the function tp.compile is tracing on this thread, or None."""
    return getattr(_state, "function", None)
