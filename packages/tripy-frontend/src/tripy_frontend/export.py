"""The public API registry: everything ``tripy`` re-exports is registered here with @public_api.

Registered functions check their arguments against their annotations at the call boundary, so a
wrong argument type is reported at the user's line with the expected type, instead of failing deep
inside tripy.

Each op also declares, once, which data types it accepts::

    @public_api(dtype_constraints={"lhs": "T1", "rhs": "T1", RETURN: "T1"},
                dtype_variables={"T1": [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32]})
    def maximum(lhs, rhs): ...

``dtype_constraints`` maps parameter names to type variables; parameters that name the same variable
must have the same dtype, and ``dtype_variables`` lists the dtypes each variable may take. A parameter
may hold a Tensor, a sequence of Tensors (all of them share the variable) or a ``tripy.dtype`` value
(e.g. the ``dtype`` argument of ``tripy.quantize``); Python numbers and other values are not checked.
``dtype_exceptions`` lists combinations of variable bindings that are not supported even though each
dtype is, e.g. ``[{"T1": tp.float8, "T2": tp.int4}]``. ``RETURN`` maps to the variable (or a tuple of
variables, one per returned tensor) of the result; it documents the result and is checked by the tests,
not at run time. The declaration is checked at the call, and a violation is reported at the user's
line, naming the op, the argument, its dtype and the supported ones, and how to convert (tripy.cast).
Rules that depend on another argument's value (e.g. tripy.resize with mode="linear") stay in the op's
body. The declaration is stored on the function as ``__tripy_dtype_constraints__``,
``__tripy_dtype_variables__`` and ``__tripy_dtype_exceptions__``; tests/e2e/test_dtype_constraints.py
generates its dtype-parametrized tests from it.

Tensor methods (``TENSOR_METHOD_REGISTRY``, e.g. ``__add__``) are not wrapped by @public_api; they use
the same declaration through ``@dtype_rules(...)``, placed below the registry decorator (also for a
function that is both public and a method, so both spellings check it).
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import re
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

from tripy_flatir import dtypes
from tripy_frontend import config

F = TypeVar("F")

PUBLIC_API: Dict[str, Any] = {}

RETURN = "return"
"""The key of ``dtype_constraints`` for the result (``return`` cannot be a parameter name)."""

Constraints = Mapping[str, Union[str, Tuple[str, ...]]]
Variables = Mapping[str, Sequence[dtypes.dtype]]
Exceptions = Sequence[Mapping[str, dtypes.dtype]]


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
            obj = _type_checked(obj, f"tripy.{api_name}")  # type: ignore[assignment, arg-type]
        else:
            assert dtype_constraints is None, "dtype declarations are for functions"
            # Constructors are checked too (layers, InputInfo, ...), except where a class opts out
            # because construction is on a hot path and validates its own input (tp.Tensor).
            init = vars(obj).get("__init__")
            if inspect.isclass(obj) and inspect.isfunction(init) and not getattr(obj, "_tripy_unchecked_init", False):
                setattr(obj, "__init__", _type_checked(init, f"tripy.{api_name}"))
        PUBLIC_API[api_name] = obj
        return obj

    return register


def dtype_rules(dtype_constraints: Constraints, dtype_variables: Variables,
                dtype_exceptions: Optional[Exceptions] = None, name: Optional[str] = None) -> Callable[[F], F]:
    """Declare the dtypes a function accepts (see the module docstring) and check them at every call.
    `name` is how errors name the op (default ``tripy.<function name>``; operators pass e.g. ``"'+'"``)."""

    def decorate(func: F) -> F:
        what = name or f"tripy.{getattr(func, '__name__')}"
        checker = _dtype_checker(func, what, dtype_constraints, dtype_variables, dtype_exceptions or ())
        checked: Any = func if checker is None else _with_dtype_check(func, checker)
        checked.__tripy_dtype_constraints__ = dict(dtype_constraints)
        checked.__tripy_dtype_variables__ = {v: tuple(ds) for v, ds in dtype_variables.items()}
        checked.__tripy_dtype_exceptions__ = tuple(dict(e) for e in dtype_exceptions or ())
        checked.__tripy_dtype_check__ = None if checker is None else checker.check
        checked.__tripy_dtype_checker__ = checker
        checked.__tripy_unchecked__ = func
        return checked  # type: ignore[no-any-return]

    return decorate


def _with_dtype_check(func: Any, checker: "_DtypeCheck") -> Callable[..., Any]:
    """`func` with its dtype check in front. When `func` takes plain parameters (Tensor methods such as
    ``__add__``), the wrapper is generated with the same signature and the fast path inline: the
    operators are the hottest path of eager code."""
    params = list(inspect.signature(func).parameters.values())
    if checker.fast_condition is None or not params or any(
            p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD or p.name.startswith("_tripy") for p in params):
        check = checker.check

        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            check(args, kwargs)
            return func(*args, **kwargs)

        return checked
    names = [p.name for p in params]
    namespace: Dict[str, Any] = dict(checker.namespace, _tripy_func=func, _tripy_check=checker.check, _tripy_empty={})
    signature = []
    for i, p in enumerate(params):
        if p.default is inspect.Parameter.empty:
            signature.append(p.name)
        else:
            namespace[f"_tripy_default{i}"] = p.default
            signature.append(f"{p.name}=_tripy_default{i}")
    condition = checker.fast_condition([names[e[1]] for e in checker.entries])
    source = (f"def {func.__name__}({', '.join(signature)}):\n"
              f"    if not ({condition}):\n"
              f"        _tripy_check(({', '.join(names)},), _tripy_empty)\n"
              f"    return _tripy_func({', '.join(names)})\n")
    exec(source, namespace)  # noqa: S102 (generated from the declaration, not from user input)
    return functools.wraps(func)(namespace[func.__name__])


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


def _each(check: Check) -> Check:
    return lambda values: all(check(v) for v in values)


def _each_value(check: Check) -> Check:
    return lambda values: all(check(v) for v in values.values())


def _type_checked(obj: Callable[..., Any], api_name: str) -> Callable[..., Any]:
    # A function with a dtype declaration (@dtype_rules) is unwrapped, and one wrapper checks both.
    func: Callable[..., Any] = getattr(obj, "__tripy_unchecked__", obj)
    checker: Optional[_DtypeCheck] = getattr(obj, "__tripy_dtype_checker__", None)
    dtype_check = checker.check if checker is not None else None
    # A declaration with one checked parameter (most ops) has its fast path inline.
    one: Any = None
    if checker is not None and checker.fast_condition is not None and len(checker.entries) == 1:
        pname_, pos_, _, allowed_, _, _ = checker.entries[0]
        one = (pos_, pname_, allowed_, checker.namespace["_tripy_T"])
    plan: List[Tuple[int, str, Check, str]] = []
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
                kind = signature.parameters[pname].kind
                if check is not None and kind is inspect.Parameter.VAR_POSITIONAL:  # *args: check each one
                    check = _each(check)
                elif check is not None and kind is inspect.Parameter.VAR_KEYWORD:  # **kwargs: each value
                    check = _each_value(check)
                if check is not None:
                    pos = positional.index(pname) if pname in positional else 1 << 30
                    plan.append((pos, pname, check, _describe(hints[pname])))
        ready = True

    def signature_text() -> str:
        return api_name + re.sub(r"\btripy_\w+(?:\.\w+)*\.(\w+)", r"tripy.\1", str(signature))

    def fail(pname: str, expected: str, got: Any) -> typing.NoReturn:
        _report(f"{api_name}: argument '{pname}' must be {expected}, but got "
                f"{type(got).__name__}" + (f" ({got!r})" if _short(got) else "") + ".",
                [f"The signature is: {signature_text()}"])

    # Positional-only calls (the common case) are matched to names directly: Signature.bind costs a few
    # microseconds, which matters on the eager hot path.
    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params = list(signature.parameters.values())
    required = sum(1 for p in params if p.name in positional and p.default is inspect.Parameter.empty)
    npos = len(positional)
    # Fall back to Signature.bind (and its error messages) when a call may not bind.
    fast_ok = not any(p.kind is inspect.Parameter.VAR_POSITIONAL or
                      (p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty)
                      for p in params)

    @functools.wraps(obj)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not config.enable_input_validation:
            return func(*args, **kwargs)
        if not ready:
            build_plan()
        if plan:
            n = len(args)
            if fast_ok and not kwargs and required <= n <= npos:
                for pos, pname, check, expected in plan:
                    if pos < n and not check(args[pos]):
                        fail(pname, expected, args[pos])
            else:
                try:
                    values = signature.bind(*args, **kwargs).arguments
                except TypeError as e:
                    _report(f"{api_name}: {e}.", [f"The signature is: {signature_text()}"])
                for pos, pname, check, expected in plan:
                    if pname in values and not check(values[pname]):
                        fail(pname, expected, values[pname])
        if one is not None:
            v: Any = args[one[0]] if one[0] < len(args) else kwargs.get(one[1])
            if type(v) is not one[3] or v.trace_tensor.dtype not in one[2]:
                dtype_check(args, kwargs)  # type: ignore[misc]
        elif dtype_check is not None:
            dtype_check(args, kwargs)
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


# ---- dtype declarations ----------------------------------------------------------------------------
# The checks run at every op call, so the common cases (every checked argument a tensor of an allowed,
# matching dtype; a Python number next to a tensor) take unrolled fast paths of a few attribute reads.
# Anything else, and every error, goes through the general check.
Entry = Tuple[str, int, str, Optional[frozenset], bool, bool]
Binding = Tuple[dtypes.dtype, str, int, Any]  # (dtype, parameter, index in a sequence or -1, the value)
_NUMBERS = (int, float, bool)


class _DtypeCheck:
    """A precomputed dtype check: ``check(args, kwargs)`` raises on a violation. For declarations without
    sequences or exceptions, ``fast_condition(exprs)`` gives a Python expression over the argument
    expressions (one per entry) that is true when the call certainly passes (all tensors of allowed,
    matching dtypes), with the names it uses in ``namespace``; wrappers inline it."""

    __slots__ = ("check", "entries", "namespace", "fast_condition")

    def __init__(self, check: Callable[[tuple, dict], None], entries: List["Entry"], tensor_cls: Any,
                 simple: bool) -> None:
        self.check = check
        self.entries = entries
        # (__name__ marks the generated functions as library code, which error reports skip.)
        self.namespace: Dict[str, Any] = {"__name__": __name__, "_tripy_T": tensor_cls, "_tripy_N": _NUMBERS}
        for i, e in enumerate(entries):
            self.namespace[f"_tripy_A{i}"] = e[3]
        self.fast_condition: Optional[Callable[[List[str]], str]] = self.condition if simple else None

    def condition(self, exprs: List[str]) -> str:
        """The first argument of each dtype variable must be a tensor of an allowed dtype; later ones a
        tensor of the same dtype, or a Python number (``x * 0.5``: numbers take the tensor's dtype, and
        the full check passes them too)."""
        parts = []
        first_of: Dict[str, str] = {}
        for i, (x, e) in enumerate(zip(exprs, self.entries)):
            var, allowed = e[2], e[3]
            if var in first_of:
                parts.append(f"(type({x}) is _tripy_T and {x}.trace_tensor.dtype is {first_of[var]}.trace_tensor.dtype"
                             f" or type({x}) in _tripy_N)")
                continue
            first_of[var] = x
            parts.append(f"type({x}) is _tripy_T")
            if allowed is not None:
                parts.append(f"{x}.trace_tensor.dtype in _tripy_A{i}")
        return " and ".join(parts)


def _dtype_checker(func: Any, what: str, constraints: Constraints, variables: Variables,
                   exceptions: Exceptions) -> Optional[_DtypeCheck]:
    """Validate a declaration and precompute its check: None when no call can violate it."""
    params = inspect.signature(func).parameters
    positional = [p.name for p in params.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    names = {var for key, var in constraints.items() if key != RETURN}
    for key, var in constraints.items():
        if key == RETURN:
            for v in (var if isinstance(var, tuple) else (var,)):
                assert v in variables, f"{what}: the return value's dtype variable {v!r} is not in dtype_variables"
            continue
        assert key in params and params[key].kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                          inspect.Parameter.VAR_KEYWORD), \
            f"{what}: dtype_constraints names {key!r}, which is not a parameter"
        assert isinstance(var, str) and var in variables, f"{what}: dtype variable {var!r} of {key!r} is not declared"
    for var, listed in variables.items():
        assert listed and all(isinstance(d, dtypes.dtype) for d in listed), f"{what}: bad dtypes for {var!r}"
    for exc in exceptions:
        assert exc and all(v in names and isinstance(d, dtypes.dtype) for v, d in exc.items()), \
            f"{what}: a dtype exception must map declared variables (bound to parameters) to dtypes: {exc}"
    shared = {var for var in names if sum(1 for k, v in constraints.items() if k != RETURN and v == var) > 1}
    everything = frozenset(dtypes.ALL_DTYPES)
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        hints = {}
    # One entry per checked parameter: (name, position or a large number for keyword-only, variable, the
    # allowed dtypes or None for all of them, whether other parameters share the variable, whether it
    # takes a sequence of tensors (by its annotation), whose elements then share the variable too).
    entries: List[Entry] = []
    for key, var in constraints.items():
        if key == RETURN:
            continue
        assert isinstance(var, str)
        allowed: Optional[frozenset] = frozenset(variables[var])
        if allowed == everything:
            allowed = None
        pos = positional.index(key) if key in positional else 1 << 30
        is_seq = _is_sequence(hints.get(key))
        if allowed is not None or var in shared or exceptions or is_seq:  # else no call can violate it
            entries.append((key, pos, var, allowed, var in shared, is_seq))
    if not entries:
        return None
    # Ops are declared in modules that import Tensor, so it exists by now.
    from tripy_frontend.dimension_size import DimensionSize
    from tripy_frontend.tensor import Tensor

    general = _general_check(entries, what, variables, exceptions, Tensor, DimensionSize)
    simple = not exceptions and not any(e[5] for e in entries)
    if simple and len(entries) == 1:
        check = _check_one(entries[0], general, Tensor)
    elif simple and len(entries) == 2 and entries[0][2] == entries[1][2]:
        check = _check_pair(entries[0], entries[1], general, Tensor)
    elif not exceptions and len(entries) == 1:
        check = _check_sequence(entries[0], general, Tensor)
    else:
        check = general
    checker = _DtypeCheck(check, entries, Tensor, simple)
    if simple and len(entries) > 2:  # e.g. tripy.where: a generated fast path over (args, kwargs)
        exprs = [f"v{i}" for i in range(len(entries))]
        lines = ["def check(args, kwargs):", "    n = len(args)"]
        lines += [f"    v{i} = args[{pos}] if {pos} < n else kwargs.get({pname!r})"
                  for i, (pname, pos, _, _, _, _) in enumerate(entries)]
        lines += [f"    if {checker.condition(exprs)}:", "        return", "    _tripy_general(args, kwargs)"]
        namespace = dict(checker.namespace, _tripy_general=general)
        exec("\n".join(lines) + "\n", namespace)  # noqa: S102 (generated from the declaration)
        checker.check = namespace["check"]
    return checker


def _general_check(entries: List[Entry], what: str, variables: Variables, exceptions: Exceptions, tensor_cls: Any,
                   size_cls: Any) -> Callable[[tuple, dict], None]:
    def dtype_of(v: Any) -> Optional[dtypes.dtype]:
        cls = type(v)
        if cls is tensor_cls:
            return v.trace_tensor.dtype
        if cls is dtypes.dtype:
            return v
        if cls is size_cls:
            return dtypes.int32  # (reading .dtype would build a graph node for a static size)
        if isinstance(v, tensor_cls):
            return v.dtype
        return None

    def check(args: tuple, kwargs: dict) -> None:
        n = len(args)
        bound: Optional[Dict[str, Binding]] = None
        for pname, pos, var, allowed, is_shared, is_seq in entries:
            if pos < n:
                v = args[pos]
            elif kwargs and pname in kwargs:
                v = kwargs[pname]
            else:
                continue
            if is_seq and type(v) in (list, tuple):
                bound = check_sequence(pname, v, var, allowed, bound)
                continue
            dt = dtype_of(v)
            if dt is None:
                continue
            if allowed is not None and dt not in allowed:
                _unsupported(what, f"'{pname}'", dt, variables[var], v)
            if is_shared or exceptions:
                if bound is None:
                    bound = {}
                first = bound.get(var)
                if first is None:
                    bound[var] = (dt, pname, -1, v)
                elif first[0] is not dt:
                    _mismatch(what, _labelled(first), _labelled((dt, pname, -1, v)))
        if exceptions and bound:
            _check_exceptions(what, exceptions, {var: _labelled(b) for var, b in bound.items()})

    def check_sequence(pname: str, seq: Any, var: str, allowed: Optional[frozenset],
                       bound: Optional[Dict[str, Binding]]) -> Any:
        if bound is None:
            bound = {}
        first = bound.get(var)
        for i, item in enumerate(seq):
            dt = dtype_of(item)
            if dt is None:
                continue
            if allowed is not None and dt not in allowed:
                _unsupported(what, f"'{pname}[{i}]'", dt, variables[var], item)
            if first is None:
                first = bound[var] = (dt, pname, i, item)
            elif first[0] is not dt:
                _mismatch(what, _labelled(first), _labelled((dt, pname, i, item)))
        return bound

    return check


def _check_one(entry: Entry, general: Callable[[tuple, dict], None], tensor_cls: Any) -> Callable[[tuple, dict], None]:
    """One checked parameter (most ops)."""
    pname, pos, _, allowed, _, _ = entry
    assert allowed is not None

    def check(args: tuple, kwargs: dict) -> None:
        v: Any = args[pos] if pos < len(args) else kwargs.get(pname)
        if type(v) is tensor_cls:
            if v.trace_tensor.dtype not in allowed:
                general(args, kwargs)
        elif v is not None:
            general(args, kwargs)

    return check


def _check_pair(first: Entry, second: Entry, general: Callable[[tuple, dict], None],
                tensor_cls: Any) -> Callable[[tuple, dict], None]:
    """Two parameters that share a dtype variable (the binary ops), either of which may be a number."""
    name_a, pos_a, _, allowed, _, _ = first
    name_b, pos_b, _, _, _, _ = second

    def check(args: tuple, kwargs: dict) -> None:
        n = len(args)
        a: Any = args[pos_a] if pos_a < n else kwargs.get(name_a)
        b: Any = args[pos_b] if pos_b < n else kwargs.get(name_b)
        if type(a) is tensor_cls:
            da = a.trace_tensor.dtype
            if type(b) is tensor_cls:
                if da is b.trace_tensor.dtype and (allowed is None or da in allowed):
                    return
            elif type(b) in _NUMBERS and (allowed is None or da in allowed):
                return
        elif type(b) is tensor_cls and type(a) in _NUMBERS:
            if allowed is None or b.trace_tensor.dtype in allowed:
                return
        general(args, kwargs)

    return check


def _check_sequence(entry: Entry, general: Callable[[tuple, dict], None],
                    tensor_cls: Any) -> Callable[[tuple, dict], None]:
    """One parameter that takes a sequence of tensors (e.g. tripy.concatenate)."""
    pname, pos, _, allowed, _, _ = entry

    def check(args: tuple, kwargs: dict) -> None:
        seq: Any = args[pos] if pos < len(args) else kwargs.get(pname)
        if type(seq) in (list, tuple) and seq and type(seq[0]) is tensor_cls:
            dt = seq[0].trace_tensor.dtype
            if allowed is None or dt in allowed:
                for item in seq:
                    if type(item) is not tensor_cls or item.trace_tensor.dtype is not dt:
                        break
                else:
                    return
        general(args, kwargs)

    return check


def _labelled(binding: Binding) -> Tuple[dtypes.dtype, str, Any]:
    dt, pname, index, value = binding
    return dt, f"'{pname}'" if index < 0 else f"'{pname}[{index}]'", value


def _is_sequence(annotation: Any) -> bool:
    """Whether a parameter's annotation allows a sequence (of tensors)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        return any(_is_sequence(a) for a in typing.get_args(annotation))
    return origin in (list, tuple, collections.abc.Sequence)


def _is_operator(what: str) -> bool:
    return what.startswith("'")


def _origin(value: Any) -> List[Any]:
    """Where a tensor argument was created (not for sizes from ``t.shape``, which have no such place)."""
    from tripy_frontend.dimension_size import DimensionSize
    from tripy_frontend.tensor import Tensor

    if not isinstance(value, Tensor) or isinstance(value, DimensionSize):
        return []
    return [value.stack_info] if value.stack_info is not None else []


def _unsupported(what: str, label: str, dt: dtypes.dtype, allowed: Sequence[dtypes.dtype],
                 value: Any) -> typing.NoReturn:
    where = "" if _is_operator(what) else f" for argument {label}"
    fix = ("Pass one of these dtypes." if isinstance(value, dtypes.dtype) else
           f"Use tripy.cast() to convert, e.g. tripy.cast(x, tripy.{allowed[0]}).")
    _report_dtype(f"{what} does not support dtype {dt}{where}.",
                  [f"Supported dtypes: {', '.join(d.name for d in allowed)}.", fix], _origin(value))


def _mismatch(what: str, first: Tuple[dtypes.dtype, str, Any],
              second: Tuple[dtypes.dtype, str, Any]) -> typing.NoReturn:
    names = "Operands" if _is_operator(what) else f"{first[1]} and {second[1]}"
    prefix = f"{names} of {what}" if _is_operator(what) else f"{what}: {names}"
    _report_dtype(f"{prefix} must have the same data type, but got {first[0]} and {second[0]}.",
                  [f"Use tripy.cast() to convert one of them, e.g. tripy.cast(x, tripy.{first[0]})."],
                  _origin(first[2]) + _origin(second[2]))


def _check_exceptions(what: str, exceptions: Exceptions, bound: Dict[str, Tuple[dtypes.dtype, str, Any]]) -> None:
    for exc in exceptions:
        if all(var in bound and bound[var][0] is dt for var, dt in exc.items()):
            parts = [f"dtype {bound[var][0]} for {'' if _is_operator(what) else 'argument '}{bound[var][1]}"
                     for var in exc]
            _report_dtype(f"{what} does not support {' together with '.join(parts)}.",
                          ["This combination of data types is not supported; use tripy.cast() to convert."],
                          [o for var in exc for o in _origin(bound[var][2])])


def _report_dtype(message: str, details: List[str], origins: List[Any]) -> typing.NoReturn:
    from tripy_flatir import stack_info
    from tripy_flatir.exceptions import raise_error

    raise_error(message, stack_info.capture(), details, origins)
