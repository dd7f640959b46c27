"""The public API registry: everything ``tripy`` re-exports is registered here with @public_api.

Registered functions check their arguments against their annotations at the call boundary, so a
wrong argument type is reported at the user's line with the expected type, instead of failing deep
inside tripy.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import re
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import numpy as np

F = TypeVar("F")

PUBLIC_API: Dict[str, Any] = {}


def public_api(name: Optional[str] = None) -> Callable[[F], F]:
    """Register a function or class as ``tripy.<name>`` (default: its own name). Functions get
    argument type checking against their annotations."""

    def register(obj: F) -> F:
        api_name = name or getattr(obj, "__name__")
        if inspect.isfunction(obj):
            obj = _type_checked(obj, f"tripy.{api_name}")  # type: ignore[assignment]
        PUBLIC_API[api_name] = obj
        return obj

    return register


# ---- argument checks -------------------------------------------------------------------------------
Check = Callable[[Any], bool]


def _describe(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if annotation is type(None):
        return "None"
    if origin is typing.Union:
        return " or ".join(_describe(a) for a in typing.get_args(annotation))
    if origin in (list, tuple, collections.abc.Sequence):
        args = typing.get_args(annotation)
        inner = _describe(args[0]) if args and args[0] is not Ellipsis else "Any"
        return f"a sequence of {inner}"
    if origin is typing.Literal:
        return " or ".join(repr(a) for a in typing.get_args(annotation))
    mod = getattr(annotation, "__module__", "")
    qual = getattr(annotation, "__qualname__", str(annotation))
    if mod.startswith("tripy") and qual in ("Tensor", "dtype", "device", "DimensionSize", "Module"):
        return f"tripy.{qual}"
    return qual


def _checker(annotation: Any) -> Optional[Check]:
    """A predicate for values matching `annotation`, or None if the annotation is not checked."""
    if annotation is Any or annotation is inspect.Parameter.empty or isinstance(annotation, (str, TypeVar)):
        return None
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        parts = [_checker(a) for a in typing.get_args(annotation)]
        if any(p is None for p in parts):
            return None
        return lambda v: any(p(v) for p in parts)  # type: ignore[misc]
    if origin is typing.Literal:
        allowed = typing.get_args(annotation)
        return lambda v: v in allowed
    if origin in (list, tuple, collections.abc.Sequence):
        args = typing.get_args(annotation)
        elem = _checker(args[0]) if args and args[0] is not Ellipsis else None
        if origin is tuple and len(args) >= 1 and args[-1] is not Ellipsis:
            elem = None  # fixed-size tuples: only check that it is a sequence
        if elem is None:
            return lambda v: isinstance(v, (list, tuple))
        return lambda v: isinstance(v, (list, tuple)) and all(elem(x) for x in v)  # type: ignore[misc]
    if origin is not None:
        return None
    if annotation is type(None):
        return lambda v: v is None
    if annotation is bool:
        return lambda v: isinstance(v, (bool, np.bool_))
    if annotation is int:
        return lambda v: isinstance(v, (int, np.integer)) and not isinstance(v, bool)
    if annotation is float:
        return lambda v: isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    if isinstance(annotation, type):
        return lambda v: isinstance(v, annotation)
    return None


def _type_checked(func: Callable[..., Any], api_name: str) -> Callable[..., Any]:
    plan: List[Tuple[str, Check, str]] = []
    ready = False
    signature = inspect.signature(func)

    def build_plan() -> None:
        nonlocal ready
        try:
            hints = typing.get_type_hints(func)
        except Exception:
            hints = {}
        for pname in signature.parameters:
            if pname in hints:
                check = _checker(hints[pname])
                if check is not None:
                    plan.append((pname, check, _describe(hints[pname])))
        ready = True

    def signature_text() -> str:
        return api_name + re.sub(r"\btripy_\w+(?:\.\w+)*\.(\w+)", r"tripy.\1", str(signature))

    # Positional-only calls (the common case) are matched to names directly: Signature.bind costs a few
    # microseconds, which matters on the eager hot path.
    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params = list(signature.parameters.values())
    required = sum(1 for p in params if p.name in positional and p.default is inspect.Parameter.empty)
    # Fall back to Signature.bind (and its error messages) when a call may not bind.
    fast_ok = not any(p.kind is inspect.Parameter.VAR_POSITIONAL or
                      (p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty)
                      for p in params)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not ready:
            build_plan()
        if plan:
            if fast_ok and not kwargs and required <= len(args) <= len(positional):
                values = dict(zip(positional, args))
            else:
                try:
                    values = signature.bind(*args, **kwargs).arguments
                except TypeError as e:
                    _report(f"{api_name}: {e}.", [f"The signature is: {signature_text()}"])
            for pname, check, expected in plan:
                if pname in values and not check(values[pname]):
                    got = values[pname]
                    _report(f"{api_name}: argument '{pname}' must be {expected}, but got "
                            f"{type(got).__name__}" + (f" ({got!r})" if _short(got) else "") + ".",
                            [f"The signature is: {signature_text()}"])
        return func(*args, **kwargs)

    return wrapper


def _short(value: Any) -> bool:
    try:
        return len(repr(value)) <= 60 and not hasattr(value, "trace_tensor")
    except Exception:
        return False


def _report(message: str, details: List[str]) -> typing.NoReturn:
    from tripy_flatir import stack_info
    from tripy_flatir.exceptions import raise_error

    raise_error(message, stack_info.capture(), details)
