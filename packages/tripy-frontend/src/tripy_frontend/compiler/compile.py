"""tp.compile: trace a function once with symbolic runtime inputs and build a tp.Executable."""

from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tripy_backend import module_to_bytecode
from tripy_flatir import stack_info as _stack
from tripy_flatir import dtypes
from tripy_flatir.device import CPU
from tripy_flatir.exceptions import TripyException, raise_error, warn
from tripy_flatir.logging import logger
from tripy_flatir.sharding import annotate
from tripy_trace.ops.placeholder import Placeholder
from tripy_trace.ops.storage import Storage
from tripy_trace.pipeline import lower
from tripy_trace.ops.sharding_constraint import ShardingConstraint
from tripy_trace.trace import Trace, topological_order
from tripy_frontend.compiler.dimension_input_info import DimensionInputInfo
from tripy_frontend.compiler import spmd
from tripy_frontend.compiler.executable import Executable, R
from tripy_frontend.compiler.hoisting import hoist_constants
from tripy_frontend.compiler.input_info import InputInfo
from tripy_frontend.compiler.nested_inputs import flatten, has_nested_inputs
from tripy_frontend.compiler.tracing import tracing
from tripy_frontend.tensor import Tensor, shape_of
from tripy_frontend.export import public_api


@public_api(document_under="compile")
def compile(
    func: Callable[..., R],
    optimization_level: int = 3,
    *,
    args: Sequence[Any] = (),
    kwargs: Optional[Dict[str, Any]] = None,
    wait: bool = False,
) -> Executable[R]:
    """Compile a function or :class:`tripy.Module` into an :class:`Executable`.

    The function is called once, with a symbolic tensor for each :class:`InputInfo` in `args` /
    `kwargs`; those become the executable's runtime inputs (in the function's parameter order).
    Every other argument (Python numbers, tensors, anything else) is baked in: tensors that hold
    data enter the program as arguments bound inside the executable, never as literals in it.
    As in nvtripy, a tensor given in place of an InputInfo (``args=[tp.ones((2, 3))]``) is baked in
    too; since that is usually a forgotten InputInfo, tripy warns when the executable ends up taking no
    inputs, and a call with the wrong inputs says which arguments were baked in.

    Dims given as ``(min, opt, max)`` are dynamic: the program is shape-polymorphic, and
    ``x.shape[d]`` is a run-time :class:`DimensionSize` that tripy ops (reshape, full, slicing,
    arithmetic) accept, so one trace is right for every shape in range. Static dims fold to constants
    (and convert to Python numbers: ``D = C // 2; s = 1 / math.sqrt(D)``). The whole range is compiled
    once, so no call inside it compiles: a few bounded programs (buckets such as powers of two, ``opt``
    and ``max``) whose padding is masked where an op would read it, convolutions and pooling over a dynamic
    image size included, and a static program for the ``opt`` shapes; a cheap program also gets static programs
    for each shape its calls bring. ``tp.compile`` returns as soon as every shape in range can run: once the
    largest bucket's program, made to run the whole range, is compiled; the other programs compile in the
    background, at low priority (the ``opt`` program first), and each call runs the best program ready for its
    shapes (a call never waits for a compile). ``wait=True``, :meth:`Executable.wait` and
    :meth:`Executable.save` wait for the whole plan. What
    bounded dims cannot express (a sort or top-k along a dynamic dim, a pad by a size-dependent amount) gets
    a static program per shape, for at most 64 shapes; the ``compile`` log names the plan and any sizes left
    to compile at their first call. The "Eager and compiled" guide says what each op family costs.

    The function must be free of side effects on tensor values: it cannot print or convert to
    Python values (``int()``, ``bool()``, ``.tolist()``) anything that depends on a runtime input.
    It must return a tensor or a tuple/list of tensors.

    Args:
        func: The function or module to compile.
        optimization_level: 0-5, as in nvtripy: higher levels may compile longer to run faster. On
            XLA:CPU, levels 0-3 generate code with LLVM -O2 (0-2 on XLA's thunk runtime), higher ones with
            XLA's default -O3 (the Performance guide's "XLA:CPU options" says why). Eager evaluation compiles
            at 2.
        args: Positional arguments for `func`: :class:`InputInfo` s for runtime inputs (also inside lists,
            tuples and dicts, which the executable then takes alike; their other entries are baked in, and a
            call may pass them again or leave them out), :class:`DimensionInputInfo` s for runtime shape
            values (the function gets a :class:`DimensionSize`), anything else is baked in.
        kwargs: Keyword arguments for `func`, likewise.
        wait: Return only once every program of the declared ranges' plan is compiled (by default the rest of
            the plan compiles in the background; see above).

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
    nesting = None
    if callable(func) and has_nested_inputs(args, kwargs):  # (compiled as a function of the InputInfo leaves)
        func, args, nesting = flatten(func, args, kwargs)
        kwargs = None
    signature = _check_arguments(func, optimization_level, args, kwargs, where)
    fname = getattr(func, "__qualname__", None) or type(func).__name__
    inputs = _RuntimeInputs(where)
    kwargs = dict(kwargs or {})
    call_args, call_kwargs = _symbolic_arguments(inputs, signature, args, kwargs, where)

    # (Each stage is logged as it starts on the "compile" topic; on a terminal, a bar once it takes a second.)
    named_args = list(zip(_positional_names(signature, len(args)), args)) + list(kwargs.items())
    hints = _missing_input_info_hints(named_args)
    with logger.progress(f"tripy.compile({fname})", 4) as progress:
        with progress.step(f"tracing {fname}"), tracing(fname):
            result = _trace_call(func, call_args, call_kwargs, fname, where, hints)
        outputs, returns_tuple = _outputs_of(result, fname, where, hints)
        if hints and not inputs.names:  # (nvtripy bakes them in silently; an executable of no inputs is rarely meant)
            warn(
                "tripy.compile: no argument is a tp.InputInfo, so the executable takes no inputs.\n" + "\n".join(hints),
                where,
            )
        with progress.step("evaluating what depends on baked-in data only"):  # (finished after lowering)
            hoisted = hoist_constants([o.trace_tensor for o in outputs])
        trace, device = _trace_of(outputs, inputs.placeholders, fname, where)
        stored = [t.producer for t in trace.inputs[len(inputs.placeholders) :]]
        constraints = [op for op in topological_order(trace.outputs) if isinstance(op, ShardingConstraint)]
        layouts = spmd.program_layouts(inputs.names, inputs.infos, stored, constraints, where)
        with progress.step("lowering to StableHLO"):
            _, module = lower(trace)
            if layouts is not None:  # one program for the whole mesh (XLA's SPMD partitioner splits it)
                annotate(module, layouts, spmd.num_devices(layouts))
        out_specs = [(o.dtype, tuple(o.shape)) for o in trace.outputs]
        with progress.step("compiling"):
            return Executable._create(
                module_to_bytecode(module),
                inputs.names,
                inputs.infos,
                [tuple(t.shape) for t in trace.inputs[len(inputs.placeholders) :]],
                _once(hoisted, stored),
                out_specs,
                returns_tuple,
                device,
                optimization_level,
                f"tripy.compile({fname})",
                layouts=layouts,
                nesting=nesting,
                hints=hints,
                wait=wait,
            )


def _once(hoisted: Callable[[], None], stored: Sequence[Any]) -> Callable[[], List[Any]]:
    """The buffers of the baked-in data `stored`, once the hoisted results among them are evaluated (`hoisted`
    waits for them: see ``compiler/hoisting.py``; the compiler compiles meanwhile): made at the first call, which
    the others, on any thread (a range's first runs, in the background), wait for."""
    lock = threading.Lock()
    made: List[List[Any]] = []

    def buffers() -> List[Any]:
        with lock:
            if not made:
                hoisted()
                made.append([op.data for op in stored])
            return made[0]

    return buffers


def _symbolic_arguments(
    inputs: "_RuntimeInputs",
    signature: Optional[inspect.Signature],
    args: Sequence[Any],
    kwargs: Dict[str, Any],
    where: Any,
) -> Tuple[List[Any], Dict[str, Any]]:
    """The arguments `func` is traced with: a placeholder tensor for each InputInfo (named after its parameter),
    the other arguments as given."""
    call_args = [
        inputs.make(name, a) if isinstance(a, InputInfo) else a
        for name, a in zip(_positional_names(signature, len(args)), args)
    ]
    call_kwargs = {
        k: inputs.make(k, kwargs[k]) if isinstance(kwargs[k], InputInfo) else kwargs[k]
        for k in _keyword_order(signature, kwargs)
    }
    if len(set(inputs.names)) != len(inputs.names):
        raise_error(f"tripy.compile: two runtime inputs have the same name: {inputs.names}.", where)
    return call_args, call_kwargs


def _check_arguments(
    func: Any, level: Any, args: Sequence[Any], kwargs: Optional[Dict[str, Any]], where: Any
) -> Optional[inspect.Signature]:
    """Validate tp.compile's own arguments; the signature of `func` (None if Python cannot tell it)."""
    if not callable(func):
        raise_error(f"tripy.compile: func must be a function or a tripy.Module, but got {type(func).__name__}.", where)
    if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 5:
        raise_error(f"tripy.compile: optimization_level must be an int in [0, 5], but got {level!r}.", where)
    if not all(isinstance(k, str) for k in kwargs or {}):
        raise_error("tripy.compile: kwargs must map parameter names (strings) to values.", where)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*args, **(kwargs or {}))
    except TypeError as e:
        fname = getattr(func, "__qualname__", None) or type(func).__name__
        raise_error(f"tripy.compile: args/kwargs do not match the signature of '{fname}{signature}': {e}.", where)
    return signature


class _RuntimeInputs:
    """The runtime inputs of a trace: a placeholder tensor for each InputInfo, with its name, in order."""

    def __init__(self, where: Any) -> None:
        self.where = where
        self.names: List[str] = []
        self.infos: List[InputInfo] = []
        self.placeholders: List[Tensor] = []
        self.named_bounds: Dict[str, Tuple[Tuple[int, int, int], str]] = {}  # dim name -> (bounds, first use)

    def make(self, name: str, info: InputInfo) -> Tensor:
        """The traced function's argument for `info`: a placeholder tensor, or for a DimensionInputInfo
        its value, dim 0 of the placeholder that carries it."""
        for d, dim_name in info.dimension_names.items():
            b = info.shape_bounds
            bounds = (b.min[d], b.opt[d], b.max[d])
            here = f"dim {d} of '{name}'"
            if dim_name in self.named_bounds and self.named_bounds[dim_name][0] != bounds:
                other_bounds, other = self.named_bounds[dim_name]
                raise_error(
                    f"tripy.compile: the named dimension '{dim_name}' has bounds {other_bounds} for {other} "
                    f"but {bounds} for {here}.",
                    self.where,
                    ["Dims that share a name must have the same (min, opt, max)."],
                )
            self.named_bounds.setdefault(dim_name, (bounds, here))
        op = Placeholder.build([], self.where, shape=info.trace_shape, dtype=info.dtype, device=CPU)
        t = Tensor._from_trace_tensor(op.outputs[0])
        self.names.append(name)
        self.infos.append(info)
        self.placeholders.append(t)
        return shape_of(t)[0] if isinstance(info, DimensionInputInfo) else t


def _keyword_order(signature: Optional[inspect.Signature], kwargs: Dict[str, Any]) -> List[str]:
    """Keyword inputs in parameter order (then any **kwargs in the order given)."""
    if signature is None:
        return list(kwargs)
    order = {n: i for i, n in enumerate(signature.parameters)}
    return sorted(kwargs, key=lambda k: order.get(k, len(order)))


def _missing_input_info_hints(named_args: List[Tuple[str, Any]]) -> List[str]:
    """Hints for arguments that look like a forgotten tp.InputInfo: a tensor (baked in, as nvtripy does)
    or a tuple of ints (a shape?)."""
    hints = []
    for name, value in named_args:
        if isinstance(value, (Tensor, np.ndarray)):
            what = "a tripy.Tensor" if isinstance(value, Tensor) else "a NumPy array"
            dtype = value.dtype if isinstance(value, Tensor) else dtypes.from_numpy(value.dtype) or dtypes.float32
            shape = tuple(value.trace_tensor.shape) if isinstance(value, Tensor) else tuple(value.shape)
            hints.append(
                f"'{name}' was given to tripy.compile as {what}, so its value is baked into the executable "
                f"as a constant and the executable does not take it. To pass it at each call, give "
                f"tp.InputInfo({shape}, tp.{dtype}) instead."
            )
        elif isinstance(value, (tuple, list)) and value and all(type(v) is int for v in value):
            hints.append(
                f"'{name}' was given to tripy.compile as {value!r}, which is baked in as a Python value. "
                f"To declare a runtime input of that shape, give tp.InputInfo({tuple(value)!r}, "
                f"tp.float32)."
            )
    return hints


def _trace_call(
    func: Callable[..., Any], args: List[Any], kwargs: Dict[str, Any], fname: str, where: Any, hints: List[str]
) -> Any:
    """`func` called on the symbolic inputs; a Python error it raises is reported as tripy's, with `hints`,
    when some argument looks like a forgotten tp.InputInfo (``args=[(2, 3)]``)."""
    try:
        return func(*args, **kwargs)
    except TripyException:
        raise
    except Exception as e:
        if not hints:
            raise
        raise_error(f"tripy.compile: calling '{fname}' raised {type(e).__name__}: {e}", where, hints)


def _outputs_of(result: Any, fname: str, where: Any, hints: Sequence[str] = ()) -> Tuple[List[Tensor], bool]:
    """The traced function's result as (output tensors, whether it returned a tuple or list)."""
    if isinstance(result, Tensor):
        return [result], False
    if isinstance(result, (list, tuple)) and result and all(isinstance(r, Tensor) for r in result):
        return list(result), True
    got = type(result).__name__
    if isinstance(result, (list, tuple)):
        got = f"a {got} of " + (", ".join(type(r).__name__ for r in result) or "nothing")
    raise_error(
        f"tripy.compile: '{fname}' must return a tripy.Tensor or a non-empty tuple or list of them, "
        f"but it returned {got}.",
        where,
        list(hints),
    )


def _trace_of(outputs: List[Tensor], placeholders: List[Tensor], fname: str, where: Any) -> Tuple[Trace, Any]:
    """The trace of the program (runtime inputs first, then the baked-in stored data) and its device."""
    trace = Trace([o.trace_tensor for o in outputs], [p.trace_tensor for p in placeholders])
    for t in trace.inputs[len(placeholders) :]:
        if not isinstance(t.producer, Storage):
            raise_error(
                "tripy.compile: the function uses a runtime input that is not one of its own (a tensor from "
                "another tripy.compile trace?).",
                where,
                [],
                [t.stack_info],
            )
    devices = {o.device for o in trace.outputs}
    if len(devices) > 1:
        raise_error(
            f"tripy.compile: the outputs of '{fname}' are on different devices: {', '.join(str(d) for d in devices)}.",
            where,
        )
    return trace, trace.outputs[0].device


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
