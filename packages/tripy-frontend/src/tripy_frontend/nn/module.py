"""tp.Module: the base class of layers and models.

Parameters are plain ``tp.Tensor`` attributes; child modules are ``Module`` attributes. Both are also
found inside a ``list`` or a ``dict`` (with string keys) held by an attribute, one level deep, and are
named by their path: ``h.0.attn.c_attn.weight``. A layer's constructor fills its parameters with
placeholders that know their shape and dtype; ``load_state_dict`` (or assignment) gives them values.
"""

from __future__ import annotations

import difflib
import inspect
import math
import threading
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    ParamSpec,
    Protocol,
    Sequence,
    Set,
    Tuple,
    TypeVar,
)

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.nn import module_text
from tripy_frontend.nn.parameter import DefaultParameter, OptionalParameter, ParameterBase, static_shape
from tripy_frontend.tensor import DimensionSize, Tensor
from tripy_frontend.tracebacks import api_boundary

# How many keys of each kind an error report lists before it summarizes the rest.
_MAX_LISTED = 12

# How deeply module calls are nested on this thread.
_calls = threading.local()


def _is_parameter(value: Any) -> bool:

    return (isinstance(value, Tensor) and not isinstance(value, DimensionSize)) or isinstance(value, ParameterBase)


def _shapes_match(expected: Sequence[int], got: Sequence[int]) -> bool:
    return len(expected) == len(got) and all(e == g or e < 0 or g < 0 for e, g in zip(expected, got))


def _mismatch(name: str, expected: Any, got_shape: Optional[Sequence[int]], got_dtype: Any) -> List[str]:
    """Shape/dtype problems of a new value for parameter `name` (whose current value is `expected`)."""
    problems: List[str] = []
    if not _is_parameter(expected):
        return problems  # None or a non-tensor: any tensor may take its place
    exp_shape = static_shape(expected)
    if exp_shape is not None and got_shape is not None and not _shapes_match(exp_shape, got_shape):
        hint = ""
        if len(exp_shape) == 2 and tuple(got_shape) == tuple(reversed(exp_shape)):
            hint = " (it looks transposed; PyTorch Linear stores weight as [out_features, in_features])"
        problems.append(f"'{name}': expected shape {list(exp_shape)}, but got {list(got_shape)}{hint}")
    got_tripy = dtypes.from_numpy(got_dtype) if isinstance(got_dtype, np.dtype) else got_dtype
    if got_dtype is not None and expected.dtype is not got_tripy:
        hint = ""
        if isinstance(got_dtype, np.dtype) and expected.dtype.numpy_dtype is not None:
            hint = f" (convert it with .astype(np.{expected.dtype.numpy_dtype.name}))"
        elif isinstance(got_dtype, dtypes.dtype):
            hint = f" (convert it with tp.cast(value, tp.{expected.dtype}))"
        problems.append(f"'{name}': expected dtype {expected.dtype}, but got {got_dtype}{hint}")
    return problems


def _load_report(missing: List[str], unexpected: List[str], problems: List[str], expected: Set[str]) -> List[str]:
    """The details of a failed load_state_dict: the missing and unexpected keys (given under strict=True)
    and the mismatched values."""
    details = []
    if missing:
        details.append(_listing("Missing keys", missing, "in the module but not in the state dict"))
    if unexpected:
        lines = []
        for k in unexpected:
            close = difflib.get_close_matches(k, sorted(expected), n=1, cutoff=0.75)
            lines.append(f"{k}  (did you mean '{close[0]}'?)" if close else k)
        details.append(_listing("Unexpected keys", lines, "in the state dict but not in the module"))
    if problems:
        details.append(_listing("Mismatched values", problems))
    details.append("\nNothing was loaded: the module is unchanged.")
    if missing or unexpected:
        details.append("Pass strict=False to load a partial state dict.")
    return details


def _listing(title: str, items: Sequence[str], note: str = "") -> str:
    shown = [f"    {i}" for i in items[:_MAX_LISTED]]
    if len(items) > _MAX_LISTED:
        shown.append(f"    ... and {len(items) - _MAX_LISTED} more")
    return f"\n{title} ({len(items)}{'; ' + note if note else ''}):\n" + "\n".join(shown)


class _Slot:
    """Where one parameter lives: an attribute of a module, or an entry of a list/dict attribute."""

    __slots__ = ("owner", "key")

    def __init__(self, owner: Any, key: Any) -> None:
        self.owner, self.key = owner, key

    def get(self) -> Any:
        if isinstance(self.owner, Module):
            return getattr(self.owner, self.key)
        return self.owner[self.key]

    def set(self, value: Any) -> None:
        if isinstance(self.owner, Module):
            object.__setattr__(self.owner, self.key, value)  # already checked by load_state_dict
        else:
            self.owner[self.key] = value


class _ForwardSignature:
    """Makes ``inspect.signature(module)`` give the signature of ``forward`` (or of an overridden
    ``__call__``), so ``tp.compile(module, ...)`` sees the real argument names."""

    def __get__(self, instance: Any, owner: Any) -> Optional[inspect.Signature]:
        if instance is None:
            return None
        cls = type(instance)
        if cls.forward is not Module.forward:
            return inspect.signature(instance.forward)
        if cls.__call__ is not Module.__call__:
            return inspect.signature(instance.__call__)
        return None


_P = ParamSpec("_P")
_R = TypeVar("_R", covariant=True)


class _HasForward(Protocol[_P, _R]):
    """A module as type checkers see it when it is called: calling it takes and returns what its
    ``forward`` does (``tp.Linear(3, 2)(x)`` is a Tensor)."""

    def forward(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...


@public_api(document_under="modules")
class Module:
    """Base class of neural-network modules. Subclasses implement :meth:`forward` (or ``__call__``);
    calling the module runs it.

    Parameters are the ``tp.Tensor`` attributes of a module; child modules are its ``Module``
    attributes. Either may also sit in a ``list`` or in a ``dict`` with string keys held by an
    attribute (one level deep). Names are paths, as in PyTorch: ``blocks.0.linear.weight``.

    .. code-block:: python

        class AddBias(tp.Module):
            def __init__(self):
                super().__init__()
                self.bias = tp.Tensor([1.0, 2.0])

            def forward(self, x):
                return x + self.bias

        add_bias = AddBias()
        out = add_bias(tp.Tensor([1.0, 1.0]))
        assert out.tolist() == [2.0, 3.0]
        assert list(add_bias.state_dict()) == ["bias"]
    """

    __signature__ = _ForwardSignature()

    def __init__(self) -> None:
        pass

    # ---- calling ------------------------------------------------------------------------------------
    if TYPE_CHECKING:  # (calling a module takes and returns what its forward does)

        def __call__(self: _HasForward[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R: ...
    else:

        @api_boundary
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            """Run :meth:`forward` after checking that every parameter has a value."""
            depth = getattr(_calls, "depth", 0)
            # The outermost call checks the whole tree (and names parameters by their full path); calls
            # nested in it only check their own parameters, which is cheap.
            unset = (
                [name for name, slot in self._parameter_slots() if isinstance(slot.get(), DefaultParameter)]
                if depth == 0
                else [name for name, owner, key in self._members(lambda v: isinstance(v, DefaultParameter))]
            )
            if unset:
                raise_error(
                    f"Some parameters of this {type(self).__name__} were never set: {', '.join(unset)}.",
                    _stack.capture(),
                    [
                        "Load them with module.load_state_dict(state_dict), assign tensors to them "
                        "(module.weight = tp.Tensor(array)), or call module.initialize_dummy_parameters() "
                        "to fill them with random values for testing."
                    ],
                )
            _calls.depth = depth + 1
            try:
                return self.forward(*args, **kwargs)
            finally:
                _calls.depth = depth

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of this module. Subclasses implement it; call the module itself to run it."""
        raise_error(
            f"{type(self).__name__} does not implement forward().",
            _stack.capture(),
            ["Subclasses of tp.Module define `def forward(self, ...)`; calling the module runs it."],
        )

    # ---- attributes --------------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Tensor) and _is_parameter(value):
            current = self.__dict__.get(name)
            problems = _mismatch(name, current, static_shape(value), value.dtype)
            if problems:
                raise_error(
                    f"Cannot assign a new value to parameter '{name}' of {type(self).__name__}: it does "
                    "not match the current one.",
                    _stack.capture(),
                    problems,
                    [value.stack_info],
                )
        object.__setattr__(self, name, value)

    def _members(self, accept: Callable[[Any], bool]) -> Iterator[Tuple[str, Any, Any]]:
        """(name, owner, key) of each accepted attribute value, and of accepted entries of list/dict attributes."""
        for name, value in vars(self).items():
            if accept(value):
                yield name, self, name
            elif isinstance(value, list):
                for i, obj in enumerate(value):
                    if accept(obj):
                        yield f"{name}.{i}", value, i
            elif isinstance(value, dict):
                for key, obj in value.items():
                    if isinstance(key, str) and accept(obj):
                        yield f"{name}.{key}", value, key

    def named_parameters(self) -> Iterator[Tuple[str, Any]]:
        """This module's own parameters (not those of its children) as ``(name, tensor)`` pairs, in the
        order they were assigned. Parameters not set yet appear as placeholders.

        .. code-block:: python

            class Scale(tp.Module):
                def __init__(self):
                    super().__init__()
                    self.alpha = tp.Tensor(1.0)
                    self.betas = [tp.Tensor(2.0), tp.Tensor(3.0)]

            assert [name for name, _ in Scale().named_parameters()] == ["alpha", "betas.0", "betas.1"]
        """
        for name, owner, key in self._members(_is_parameter):
            yield name, (owner[key] if owner is not self else getattr(self, key))

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        """The immediate child modules as ``(name, module)`` pairs.

        .. code-block:: python

            class Stack(tp.Module):
                def __init__(self):
                    super().__init__()
                    self.first = tp.Linear(2, 2)
                    self.rest = [tp.Linear(2, 2), tp.Linear(2, 2)]

            assert [name for name, _ in Stack().named_children()] == ["first", "rest.0", "rest.1"]
        """
        for name, owner, key in self._members(lambda v: isinstance(v, Module)):
            yield name, (owner[key] if owner is not self else getattr(self, key))

    def _parameter_slots(self, prefix: str = "") -> Iterator[Tuple[str, _Slot]]:
        for name, owner, key in self._members(_is_parameter):
            yield prefix + name, _Slot(owner, key)
        for child_name, child in self.named_children():
            yield from child._parameter_slots(f"{prefix}{child_name}.")

    # ---- state dicts ---------------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        """Every parameter of this module and its children, by full name.

        .. code-block:: python

            class Model(tp.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = tp.ones((2,))
                    self.proj = tp.Linear(2, 3)

            assert list(Model().state_dict()) == ["scale", "proj.weight", "proj.bias"]
        """
        return {name: slot.get() for name, slot in self._parameter_slots()}

    @api_boundary
    def load_state_dict(self, state_dict: Dict[str, Any], strict: bool = True) -> Tuple[Set[str], Set[str]]:
        """Set parameters from `state_dict` (names to NumPy arrays or ``tp.Tensor`` s).

        Every entry is checked first: with ``strict=True`` the names must match the module's exactly,
        and shapes and dtypes must always match. All problems are reported together in one error, and
        a failed load leaves the module unchanged. NumPy data is uploaded to the device once; the
        parameters then enter every program as arguments.

        Returns:
            ``(missing_keys, unexpected_keys)``: the sets of names the module has but `state_dict` lacks,
            and the names `state_dict` has but the module lacks (both empty when ``strict=True``).

        .. code-block:: python

            linear = tp.Linear(2, 3)
            weights = {"weight": np.ones((3, 2), dtype=np.float32), "bias": np.zeros((3,), dtype=np.float32)}
            missing, unexpected = linear.load_state_dict(weights)
            assert not missing and not unexpected
            assert np.array_equal(np.from_dlpack(linear(tp.Tensor([[1.0, 2.0]]))), [[3.0, 3.0, 3.0]])
        """
        if not isinstance(state_dict, dict):
            raise_error(
                f"load_state_dict expects a dict of names to arrays, but got {type(state_dict).__name__}.",
                _stack.capture(),
                ["For a .npz file, pass dict(np.load(path))."],
            )
        slots = dict(self._parameter_slots())
        expected = set(slots)
        optional = {n for n, s in slots.items() if isinstance(s.get(), OptionalParameter)}
        provided = [k for k in state_dict]
        missing = sorted(expected - optional - set(provided))
        unexpected = sorted(k for k in provided if k not in expected)

        problems: List[str] = []
        converted: Dict[str, Any] = {}
        for key in provided:
            if key not in expected:
                continue
            value = state_dict[key]
            current = slots[key].get()
            if isinstance(value, Tensor) and _is_parameter(value):
                problems += _mismatch(key, current, static_shape(value), value.dtype)
                converted[key] = value
                continue
            array = _as_array(value)
            if array is None:
                problems.append(f"'{key}': expected a NumPy array or a tp.Tensor, but got {type(value).__name__}")
                continue
            issues = _mismatch(key, current, array.shape, array.dtype if _is_parameter(current) else None)
            if not issues and dtypes.from_numpy(array.dtype) is None:
                issues = [f"'{key}': NumPy dtype {array.dtype} is not supported by tripy"]
            problems += issues
            converted[key] = array

        if problems or (strict and (missing or unexpected)):
            raise_error(
                f"load_state_dict: the state dict does not match this {type(self).__name__}.",
                _stack.capture(),
                _load_report(missing if strict else [], unexpected if strict else [], problems, expected),
            )

        # Upload and evaluate everything before touching the module, so a failure changes nothing. One
        # array given under several names (tied weights) is uploaded once and stays shared.
        new_values: Dict[str, Tensor] = {}
        uploaded: Dict[int, Tensor] = {}
        for key, value in converted.items():
            if id(value) not in uploaded:
                uploaded[id(value)] = (value if isinstance(value, Tensor) else Tensor(value)).eval()
            new_values[key] = uploaded[id(value)]
        for key, tensor in new_values.items():
            slots[key].set(tensor)
        return set(missing), set(unexpected)

    def initialize_dummy_parameters(self, seed: int = 0) -> None:
        """Give every parameter that has no value yet random values (for tests and benchmarks).

        Matrices and kernels get values uniform in ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]``; vectors get
        values in ``[0.5, 1.5]`` (so variances and scales stay positive).

        .. code-block:: python

            linear = tp.Linear(4, 2)
            linear.initialize_dummy_parameters()
            assert linear(tp.ones((3, 4))).shape == (3, 2)
        """
        rng = np.random.default_rng(seed)
        for _, slot in self._parameter_slots():
            p = slot.get()
            if not isinstance(p, DefaultParameter) or p.shape is None:
                continue
            shape = p.shape
            if len(shape) >= 2:
                bound = 1.0 / math.sqrt(max(1, math.prod(shape[1:])))
                data = rng.uniform(-bound, bound, size=shape)
            else:
                data = rng.uniform(0.5, 1.5, size=shape)
            if p.dtype.is_integer or p.dtype is dtypes.bool:
                data = np.zeros(shape)
            assert p.dtype.numpy_dtype is not None
            slot.set(Tensor(data.astype(p.dtype.numpy_dtype), dtype=p.dtype))

    # ---- text and comparison (nn/module_text.py) -----------------------------------------------------
    def __repr__(self) -> str:
        return module_text.repr_text(self)

    def __str__(self) -> str:
        return module_text.str_text(self)

    def __eq__(self, other: object) -> bool:
        """Modules of the same class with equal attributes are equal, as nvtripy's dataclass modules are
        (tensors compare by dtype, shape and values, which evaluates them). Like those, modules are not hashable."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        return module_text.equal(vars(self), vars(other))

    __hash__ = None  # type: ignore[assignment]


def _as_array(value: Any) -> Optional[np.ndarray]:
    """A state-dict value as a NumPy array (NumPy data, or anything supporting DLPack / the array protocol)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except Exception:
            pass
    if hasattr(value, "__array__"):
        try:
            return np.asarray(value)
        except Exception:
            return None
    return None
