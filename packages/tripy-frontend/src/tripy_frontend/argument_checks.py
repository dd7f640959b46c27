"""Argument checking at the public-API boundary: each registered function (and class constructor) checks
its arguments against their annotations, and reports a wrong one at the user's line with the expected
type and the signature. A function with a dtype declaration (``dtype_rules.py``) has its dtype rule
checked in the same wrapper.

The wrapper runs at every op call, so positional calls (the common case) are matched to parameter names
directly.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import re
import typing
from typing import Any, Callable, List, Optional, Tuple, TypeVar

import numpy as np

from tripy_flatir.exceptions import TripyException, raise_error
from tripy_flatir import stack_info
from tripy_frontend import config
from tripy_frontend.tracebacks import strip_tripy_frames

Check = Callable[[Any], bool]
# One checked parameter: (position, name, a class whose exact instances pass without calling the check, the
# check, what it expects in words).
Step = Tuple[int, str, type, Check, str]


class _NoClass:
    """The exact type of no value (for a parameter whose annotation is not a class)."""


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


def _each(check: Check) -> Check:
    return lambda values: all(check(v) for v in values)


def _each_value(check: Check) -> Check:
    return lambda values: all(check(v) for v in values.values())


class _Signature:
    """What the argument check of one function needs: its parameters, in checking order, with a check
    and a description of what each accepts (worked out at the first call: annotations may name classes
    defined later), and how to report a wrong one."""

    def __init__(self, func: Callable[..., Any], api_name: str) -> None:
        self.func = func
        self.api_name = api_name
        self.signature = inspect.signature(func)
        params = list(self.signature.parameters.values())
        self.positional = [
            p.name
            for p in params
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        self.required = sum(1 for p in params if p.name in self.positional and p.default is inspect.Parameter.empty)
        # Positional-only calls (the common case) are matched to names directly: Signature.bind costs a few
        # microseconds, which matters on the eager hot path. It is used when a call may not bind.
        self.fast_ok = not any(
            p.kind is inspect.Parameter.VAR_POSITIONAL
            or (p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty)
            for p in params
        )
        self.plan: Optional[List[Step]] = None

    def make_plan(self) -> List[Step]:
        try:
            hints = typing.get_type_hints(self.func)
        except Exception:
            hints = {}
        plan = []
        for pname, param in self.signature.parameters.items():
            check = _checker(hints[pname]) if pname in hints else None
            if check is None:
                continue
            if param.kind is inspect.Parameter.VAR_POSITIONAL:  # *args: check each one
                check = _each(check)
            elif param.kind is inspect.Parameter.VAR_KEYWORD:  # **kwargs: each value
                check = _each_value(check)
            pos = self.positional.index(pname) if pname in self.positional else 1 << 30
            exact = hints[pname] if isinstance(hints[pname], type) else _NoClass  # (an instance of it passes)
            plan.append((pos, pname, exact, check, _describe(hints[pname])))
        self.plan = plan
        return plan

    def check_bound(self, args: tuple, kwargs: dict) -> None:
        """The general check: bind the arguments to the parameters as Python would (with its error messages)."""
        plan = self.plan if self.plan is not None else self.make_plan()
        try:
            values = self.signature.bind(*args, **kwargs).arguments
        except TypeError as e:
            _report(f"{self.api_name}: {e}.", [f"The signature is: {self.text()}"])
        for pos, pname, _, check, expected in plan:
            if pname in values and not check(values[pname]):
                self.fail(pname, expected, values[pname])

    def text(self) -> str:
        return self.api_name + re.sub(r"\btripy_\w+(?:\.\w+)*\.(\w+)", r"tripy.\1", str(self.signature))

    def fail(self, pname: str, expected: str, got: Any) -> typing.NoReturn:
        _report(
            f"{self.api_name}: argument '{pname}' must be {expected}, but got "
            f"{type(got).__name__}" + (f" ({got!r})" if _short(got) else "") + ".",
            [f"The signature is: {self.text()}"],
        )


def type_checked(obj: Callable[..., Any], api_name: str) -> Callable[..., Any]:
    """`obj` with its arguments checked against its annotations and, for a function declared with
    ``dtype_rules``, its dtype rule: one wrapper checks both."""
    func: Callable[..., Any] = getattr(obj, "__tripy_unchecked__", obj)
    rule: Any = getattr(obj, "__tripy_dtype_rule__", None)
    dtype_check = rule.check if rule is not None else None
    sig = _Signature(func, api_name)
    fast_ok, required, npos = sig.fast_ok, sig.required, len(sig.positional)
    plan: Optional[List[Step]] = None

    @functools.wraps(obj)
    def wrapper(*args: Any, **kwargs: Any) -> Any:  # (also an API boundary: see tracebacks.py)
        nonlocal plan
        try:
            if not config.enable_input_validation:
                return func(*args, **kwargs)
            if plan is None:
                plan = sig.make_plan()
            if plan:
                n = len(args)
                if fast_ok and not kwargs and required <= n <= npos:  # (positional arguments: no binding)
                    for pos, pname, exact, check, expected in plan:
                        if pos < n and type(args[pos]) is not exact and not check(args[pos]):
                            sig.fail(pname, expected, args[pos])
                else:
                    sig.check_bound(args, kwargs)
            if dtype_check is not None:
                dtype_check(args, kwargs)
            return func(*args, **kwargs)
        except TripyException as e:
            strip_tripy_frames(e)
            raise

    return wrapper


def _short(value: Any) -> bool:
    try:
        return len(repr(value)) <= 60 and not hasattr(value, "trace_tensor")
    except Exception:
        return False


def _report(message: str, details: List[str]) -> typing.NoReturn:

    raise_error(message, stack_info.capture(), details)
