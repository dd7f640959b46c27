"""tp.compile: trace a function once with symbolic runtime inputs and build a tp.Executable."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tripy_backend import module_to_bytecode
from tripy_flatir import stack_info as _stack
from tripy_flatir.device import CPU
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.placeholder import Placeholder
from tripy_trace.ops.storage import Storage
from tripy_trace.trace import Trace
from tripy_frontend.compiler.executable import Executable, _build_program
from tripy_frontend.compiler.input_info import InputInfo
from tripy_frontend.export import public_api
from tripy_frontend.tensor import Tensor


@public_api()
def compile(func: Callable[..., Any], optimization_level: int = 3, *, args: Sequence[Any] = (),
            kwargs: Optional[Dict[str, Any]] = None) -> Executable:
    """Compile a function or :class:`tripy.Module` into an :class:`Executable`.

    The function is called once, with a symbolic tensor for each :class:`InputInfo` in `args` /
    `kwargs`; those become the executable's runtime inputs (in the function's parameter order).
    Every other argument (Python numbers, tensors, anything else) is baked in: tensors that hold
    data enter the program as arguments bound inside the executable, never as literals in it.

    Dims given as ``(min, opt, max)`` are dynamic: the program is shape-polymorphic, and
    ``x.shape[d]`` is a run-time :class:`DimensionSize` that tripy ops (reshape, full, slicing,
    arithmetic) accept, so one trace is right for every shape in range. Static dims fold to constants
    (and convert to Python numbers: ``D = C // 2; s = 1 / math.sqrt(D)``). The whole range is compiled
    here, once: XLA bounded programs for a few buckets (powers of two, ``opt`` and ``max``), each
    masking the padding up to its bound, so no call inside the range compiles.

    The function must be free of side effects on tensor values: it cannot print or convert to
    Python values (``int()``, ``bool()``, ``.tolist()``) anything that depends on a runtime input.
    It must return a tensor or a tuple/list of tensors.

    Args:
        func: The function or module to compile.
        optimization_level: 0-5, as in nvtripy: higher levels may compile longer to run faster. On
            XLA:CPU every level compiles for XLA's classic CPU runtime (matrix products through oneDNN;
            GPT-2 small runs ~2.6x faster than under XLA's default runtime); 0-3 generate code with
            LLVM -O2, 4-5 with -O3 (~1.7x longer compiles; in our measurements not faster). Eager
            evaluation compiles at 3.
        args: Positional arguments for `func`: :class:`InputInfo` s for runtime inputs, anything else is baked in.
        kwargs: Keyword arguments for `func`, likewise.

    Returns:
        The executable, which takes the runtime inputs (as tensors) and returns what `func` returns.

    .. code-block:: python

        def add(a, b):
            return a + b

        exe = tp.compile(add, args=[tp.InputInfo(((1, 2, 4), 2), tp.float32), tp.InputInfo(((1, 2, 4), 2), tp.float32)])
        small = exe(tp.ones((1, 2)), tp.ones((1, 2)))
        big = exe(tp.ones((4, 2)), tp.ones((4, 2)))
        assert small.tolist() == [[2.0, 2.0]] and big.shape == (4, 2)

    .. code-block:: python

        # Baking in a tensor
        b = tp.Tensor([10.0, 20.0])
        exe = tp.compile(lambda a, b: a + b, args=[tp.InputInfo((2,), tp.float32), b])
        assert exe(tp.Tensor([1.0, 2.0])).tolist() == [11.0, 22.0]
    """
    where = _stack.capture()
    if not callable(func):
        raise_error(f"tripy.compile: func must be a function or a tripy.Module, but got {type(func).__name__}.", where)
    level = optimization_level
    if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 5:
        raise_error(f"tripy.compile: optimization_level must be an int in [0, 5], but got {level!r}.", where)
    args = list(args)
    kwargs = dict(kwargs or {})
    if not all(isinstance(k, str) for k in kwargs):
        raise_error("tripy.compile: kwargs must map parameter names (strings) to values.", where)
    fname = getattr(func, "__qualname__", None) or type(func).__name__

    signature: Optional[inspect.Signature]
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as e:
            raise_error(f"tripy.compile: args/kwargs do not match the signature of '{fname}{signature}': {e}.", where)

    # Names of the runtime inputs, from the function's parameters.
    positional_names = _positional_names(signature, len(args))
    named_bounds: Dict[str, Tuple[Tuple[int, int, int], str]] = {}
    names: List[str] = []
    infos: List[InputInfo] = []
    placeholders: List[Tensor] = []

    def runtime_input(name: str, info: InputInfo) -> Tensor:
        for d, dim_name in info.dimension_names.items():
            b = info.shape_bounds
            bounds = (b.min[d], b.opt[d], b.max[d])
            here = f"dim {d} of '{name}'"
            if dim_name in named_bounds and named_bounds[dim_name][0] != bounds:
                other_bounds, other = named_bounds[dim_name]
                raise_error(f"tripy.compile: the named dimension '{dim_name}' has bounds {other_bounds} for {other} "
                            f"but {bounds} for {here}.", where,
                            ["Dims that share a name must have the same (min, opt, max)."])
            named_bounds.setdefault(dim_name, (bounds, here))
        op = Placeholder.build([], where, shape=info.trace_shape, dtype=info.dtype, device=CPU)
        t = Tensor._from_trace_tensor(op.outputs[0])
        names.append(name)
        infos.append(info)
        placeholders.append(t)
        return t

    call_args = [runtime_input(positional_names[i], a) if isinstance(a, InputInfo) else a for i, a in enumerate(args)]
    if signature is not None:  # keyword inputs in parameter order (then any **kwargs in the order given)
        order = {n: i for i, n in enumerate(signature.parameters)}
        keys = sorted(kwargs, key=lambda k: order.get(k, len(order)))
    else:
        keys = list(kwargs)
    call_kwargs = {k: runtime_input(k, kwargs[k]) if isinstance(kwargs[k], InputInfo) else kwargs[k] for k in keys}
    if len(set(names)) != len(names):
        raise_error(f"tripy.compile: two runtime inputs have the same name: {names}.", where)

    result = func(*call_args, **call_kwargs)

    if isinstance(result, Tensor):
        outputs, returns_tuple = [result], False
    elif isinstance(result, (list, tuple)) and result and all(isinstance(r, Tensor) for r in result):
        outputs, returns_tuple = list(result), True
    else:
        got = type(result).__name__
        if isinstance(result, (list, tuple)):
            got = f"a {got} of " + (", ".join(type(r).__name__ for r in result) or "nothing")
        raise_error(f"tripy.compile: '{fname}' must return a tripy.Tensor or a non-empty tuple or list of them, "
                    f"but it returned {got}.", where)

    trace = Trace([o.trace_tensor for o in outputs], [p.trace_tensor for p in placeholders])
    for t in trace.inputs[len(placeholders):]:
        if not isinstance(t.producer, Storage):
            raise_error("tripy.compile: the function uses a runtime input that is not one of its own (a tensor from "
                        "another tripy.compile trace?).", where, [], [t.stack_info])
    devices = {o.device for o in trace.outputs}
    if len(devices) > 1:
        raise_error(f"tripy.compile: the outputs of '{fname}' are on different devices: "
                    f"{', '.join(str(d) for d in devices)}.", where)
    device = trace.outputs[0].device

    from tripy_frontend.eager import lower

    flat, module = lower(trace)
    module_bytes = module_to_bytecode(module)
    constants = [t.producer.data for t in trace.inputs[len(placeholders):]]  # type: ignore[union-attr]
    program = _build_program(module_bytes, names, infos, constants, device, flat.error_report, level,
                             f"tripy.compile({fname})")
    out_specs = [(o.dtype, tuple(o.shape)) for o in trace.outputs]
    return Executable._create(program, module_bytes, names, infos, constants, out_specs, returns_tuple, device)


def _positional_names(signature: Optional[inspect.Signature], count: int) -> List[str]:
    """The parameter name that each of `count` positional arguments binds to (``<name>_<i>`` for the
    entries of ``*args``; ``arg<i>`` when the signature is unknown)."""
    if signature is None:
        return [f"arg{i}" for i in range(count)]
    names: List[str] = []
    taken = set(signature.parameters)
    for p in signature.parameters.values():
        if len(names) >= count:
            break
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            k = 0
            while len(names) < count:
                name = f"{p.name}_{k}"
                while name in taken:
                    name += "_"
                names.append(name)
                k += 1
    return names + [f"arg{i}" for i in range(len(names), count)]
