"""Traceback filtering: a user's error shows their frames and tripy's report, not tripy's internals.

Public entry points (``@public_api`` functions and constructors, Tensor methods and operators,
``Module.__call__``, ``Executable.__call__``) are *API boundaries*: a ``TripyException`` that leaves one
has the frames of tripy's packages removed from its traceback, as JAX does for its own frames. The
report itself already points at the user's line. Other exceptions (a bug in tripy) keep every frame.

Set ``TRIPY_TRACEBACK_FILTERING=off`` to keep tripy's frames (for tripy's developers).
"""

from __future__ import annotations

import functools
import os
import types
from typing import Any, Callable, Optional, TypeVar

from tripy_flatir.exceptions import TripyException
from tripy_flatir.stack_info import is_library_module

ENV_VAR = "TRIPY_TRACEBACK_FILTERING"
F = TypeVar("F", bound=Callable[..., Any])


def filtering_enabled() -> bool:
    return os.environ.get(ENV_VAR, "on").strip().lower() not in ("off", "0", "false", "no")


def filter_traceback(tb: Optional[types.TracebackType]) -> Optional[types.TracebackType]:
    """`tb` without the frames of tripy's packages (a new chain; the frames themselves are shared)."""
    kept = []
    while tb is not None:
        if not is_library_module(tb.tb_frame.f_globals.get("__name__", "")):
            kept.append(tb)
        tb = tb.tb_next
    filtered = None
    for t in reversed(kept):
        filtered = types.TracebackType(filtered, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return filtered


def strip_tripy_frames(error: TripyException) -> None:
    """Filter `error`'s traceback in place, unless filtering is off. An API boundary calls this in its
    ``except`` clause and re-raises with a bare ``raise``, which adds no frame of its own."""
    if filtering_enabled():
        error.with_traceback(filter_traceback(error.__traceback__))


def api_boundary(func: F) -> F:
    """`func` as an API boundary (see the module docstring)."""

    if getattr(func, "__tripy_api_boundary__", False):
        return func  # (a generated dtype check, which is a boundary itself)

    @functools.wraps(func)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TripyException as e:
            strip_tripy_frames(e)
            raise

    boundary.__tripy_api_boundary__ = True  # type: ignore[attr-defined]
    return boundary  # type: ignore[return-value]
