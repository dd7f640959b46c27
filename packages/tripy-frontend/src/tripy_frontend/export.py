"""``@public_api``: how a function or class becomes ``tripy.<name>``.

``@public_api()`` puts a function or class into ``PUBLIC_API`` (``public_names.py``) under ``tripy.<name>`` and, at the call
boundary, checks its arguments against their annotations (``argument_checks.py``) and the data types it
declares (``dtype_constraints`` / ``dtype_variables``: see ``dtype_rules.py``), so a wrong argument is
reported at the user's line with what was expected, instead of failing deep inside tripy.
"""

from __future__ import annotations

import inspect
from typing import Callable, Optional, TypeVar

from tripy_frontend.argument_checks import type_checked
from tripy_frontend.dtype_rules import RETURN, Constraints, Exceptions, Variables, dtype_rules
from tripy_frontend.public_names import DOCUMENT_UNDER, PUBLIC_API, public_class

__all__ = ["PUBLIC_API", "RETURN", "dtype_rules", "public_api"]

F = TypeVar("F")


def public_api(
    name: Optional[str] = None,
    *,
    document_under: str,
    dtype_constraints: Optional[Constraints] = None,
    dtype_variables: Optional[Variables] = None,
    dtype_exceptions: Optional[Exceptions] = None,
) -> Callable[[F], F]:
    """Register a function or class as ``tripy.<name>`` (default: its own name), documented on the API
    reference's page `document_under` (a page of ``docs/_ext/reference_groups.PAGES``, e.g. ``"ops_elementwise"``).
    Functions get argument type checking against their annotations, and the dtype declaration (if any) checked."""

    def register(obj: F) -> F:
        api_name = name or getattr(obj, "__name__")
        if inspect.isclass(obj):
            assert dtype_constraints is None, "dtype declarations are for functions"
            return public_class(document_under, api_name)(obj)
        if inspect.isfunction(obj):
            if dtype_constraints is not None:
                assert not hasattr(obj, "__tripy_method_name__"), (
                    f"tripy.{api_name} is also a Tensor method: declare its dtypes with @dtype_rules below "
                    "@TENSOR_METHOD_REGISTRY so that both spellings check them."
                )
                obj = dtype_rules(dtype_constraints, dtype_variables or {}, dtype_exceptions, name=f"tripy.{api_name}")(
                    obj
                )
            obj = type_checked(obj, f"tripy.{api_name}")  # type: ignore[assignment, arg-type]
        PUBLIC_API[api_name] = obj
        DOCUMENT_UNDER[api_name] = document_under
        return obj

    return register
