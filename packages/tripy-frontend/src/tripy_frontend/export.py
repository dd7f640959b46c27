"""The public-API registry: everything ``tripy`` re-exports is registered here with ``@public_api``.

``@public_api()`` puts a function or class into ``PUBLIC_API`` under ``tripy.<name>`` and, at the call
boundary, checks its arguments against their annotations (``argument_checks.py``) and the data types it
declares (``dtype_constraints`` / ``dtype_variables``: see ``dtype_rules.py``), so a wrong argument is
reported at the user's line with what was expected, instead of failing deep inside tripy.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional, TypeVar

from tripy_frontend.argument_checks import type_checked
from tripy_frontend.dtype_rules import RETURN, Constraints, Exceptions, Variables, dtype_rules

__all__ = ["PUBLIC_API", "RETURN", "dtype_rules", "public_api"]

F = TypeVar("F")

PUBLIC_API: Dict[str, Any] = {}


def public_api(name: Optional[str] = None, *, dtype_constraints: Optional[Constraints] = None,
               dtype_variables: Optional[Variables] = None,
               dtype_exceptions: Optional[Exceptions] = None) -> Callable[[F], F]:
    """Register a function or class as ``tripy.<name>`` (default: its own name). Functions get
    argument type checking against their annotations, and the dtype declaration (if any) checked."""

    def register(obj: F) -> F:
        api_name = name or getattr(obj, "__name__")
        if inspect.isfunction(obj):
            if dtype_constraints is not None:
                assert not hasattr(obj, "__tripy_method_name__"), (
                    f"tripy.{api_name} is also a Tensor method: declare its dtypes with @dtype_rules below "
                    "@TENSOR_METHOD_REGISTRY so that both spellings check them.")
                obj = dtype_rules(dtype_constraints, dtype_variables or {}, dtype_exceptions,
                                  name=f"tripy.{api_name}")(obj)
            obj = type_checked(obj, f"tripy.{api_name}")  # type: ignore[assignment, arg-type]
        else:
            assert dtype_constraints is None, "dtype declarations are for functions"
            # Constructors are checked too (layers, InputInfo, ...), except where a class opts out
            # because construction is on a hot path and validates its own input (tp.Tensor).
            init = vars(obj).get("__init__")
            if inspect.isclass(obj) and inspect.isfunction(init) and not getattr(obj, "_tripy_unchecked_init", False):
                setattr(obj, "__init__", type_checked(init, f"tripy.{api_name}"))
        PUBLIC_API[api_name] = obj
        return obj

    return register

