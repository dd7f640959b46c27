"""The registry of public names: ``PUBLIC_API`` maps each ``tripy.<name>`` to its object, and ``tripy``
re-exports them.

``export.public_api`` registers functions and classes with their argument and dtype checks. The classes that
those dtype checks themselves need (``Tensor``, ``DimensionSize``) register with ``@public_class(document_under=...)`` here, which
checks constructor arguments only, so that they do not import the dtype checks (an import cycle).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional, TypeVar

from tripy_frontend.argument_checks import type_checked

C = TypeVar("C", bound=type)

PUBLIC_API: Dict[str, Any] = {}
# Each public name's page in the API reference (one of ``docs/_ext/reference_groups.PAGES``), declared where the
# name is defined: ``@public_api(document_under=...)``.
DOCUMENT_UNDER: Dict[str, str] = {}


def public_class(document_under: str, name: Optional[str] = None) -> Callable[[C], C]:
    """Register a class as ``tripy.<name>`` (default: its own name), on the API reference's page `document_under`.
    Its constructor's arguments are checked against their annotations, unless the class opts out because
    construction is on a hot path and validates its own input (``_tripy_unchecked_init``, as ``tp.Tensor`` does)."""

    def register(cls: C) -> C:
        init = vars(cls).get("__init__")
        if inspect.isfunction(init) and not getattr(cls, "_tripy_unchecked_init", False):
            setattr(cls, "__init__", type_checked(init, f"tripy.{name or cls.__name__}"))
        PUBLIC_API[name or cls.__name__] = cls
        DOCUMENT_UNDER[name or cls.__name__] = document_under
        return cls

    return register
