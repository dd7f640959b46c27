"""The registry of public names: ``PUBLIC_API`` maps each ``tripy.<name>`` to its object, and ``tripy``
re-exports them.

``export.public_api`` registers functions and classes with their argument and dtype checks. The classes that
those dtype checks themselves need (``Tensor``, ``DimensionSize``) register with ``public_class`` here, which
checks constructor arguments only, so that they do not import the dtype checks (an import cycle).
"""

from __future__ import annotations

import inspect
from typing import Any, Dict, Optional, TypeVar

from tripy_frontend.argument_checks import type_checked

C = TypeVar("C", bound=type)

PUBLIC_API: Dict[str, Any] = {}


def public_class(cls: C, name: Optional[str] = None) -> C:
    """Register `cls` as ``tripy.<name>`` (default: its own name). Its constructor's arguments are checked
    against their annotations, unless the class opts out because construction is on a hot path and validates
    its own input (``_tripy_unchecked_init``, as ``tp.Tensor`` does)."""
    init = vars(cls).get("__init__")
    if inspect.isfunction(init) and not getattr(cls, "_tripy_unchecked_init", False):
        setattr(cls, "__init__", type_checked(init, f"tripy.{name or cls.__name__}"))
    PUBLIC_API[name or cls.__name__] = cls
    return cls
