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


# Names users of NumPy, PyTorch and JAX reach for at ``tripy.<name>`` that tripy (like nvtripy) spells another way or
# does not have, and what to write instead: ``tripy.__getattr__`` says so rather than suggest a look-alike name.
_NO_FLOAT64 = "tripy has no float64; use tp.float32 (or tp.float16 / tp.bfloat16)."
_PRODUCT = "tripy has no {}: write the matrix product as a @ b."
OTHER_LIBRARY_NAMES: Dict[str, str] = {
    "matmul": _PRODUCT.format("matmul"),
    "mm": _PRODUCT.format("mm"),
    "bmm": _PRODUCT.format("bmm"),
    "dot": _PRODUCT.format("dot"),
    "float64": _NO_FLOAT64,
    "double": _NO_FLOAT64,
    "float": "Use tp.float32.",
    "half": "Use tp.float16.",
    "long": "Use tp.int64.",
    "int": "Use tp.int32.",
    "int16": "tripy has no int16; use tp.int32 (or tp.int8).",
    "uint8": "tripy has no unsigned types; use tp.int32 (or tp.int8 where values fit).",
    "cat": "Use tp.concatenate(tensors, dim).",
    "concat": "Use tp.concatenate(tensors, dim).",
    "clip": "Use tp.minimum(tp.maximum(x, low), high).",
    "clamp": "Use tp.minimum(tp.maximum(x, low), high).",
    "astype": "Use tp.cast(x, dtype).",
    "to": "Use tp.cast(x, dtype) for a dtype, tp.copy(x, device) for a device.",
    "view": "Use tp.reshape(x, shape).",
    "pow": "Use x ** y.",
    "mul": "Use x * y.",
    "add": "Use x + y.",
    "sub": "Use x - y.",
    "div": "Use x / y.",
}


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
