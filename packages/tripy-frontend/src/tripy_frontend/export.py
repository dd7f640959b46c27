"""The public API registry: everything ``tripy`` re-exports is registered here with @public_api."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, TypeVar

F = TypeVar("F")

PUBLIC_API: Dict[str, Any] = {}


def public_api(name: Optional[str] = None) -> Callable[[F], F]:
    """Register a function or class as ``tripy.<name>`` (default: its own name)."""

    def register(obj: F) -> F:
        PUBLIC_API[name or getattr(obj, "__name__")] = obj
        return obj

    return register
