"""The fast path of a compiled call, generated per executable (``codegen.make_function``).

Calling a small compiled program costs a few microseconds in the runtime, so a generic Python loop
over inputs and outputs would dominate it. tripy writes a straight-line function for each executable's
arity: no loops, no per-call lookups of the executable's fixed properties (dtypes, baked-in buffers,
output dtypes), which are bound once as closure variables. Measured by
``benchmarks/compiled_call_overhead.py`` (workload 3 of ``benchmarks/run_all.py``).

The generated ``call(*args, **kwargs)`` (``Executable.__call__`` hands it out) handles the common case itself: positional arguments that
are evaluated tensors of the right dtypes, with an input-shape signature that was validated before.
Anything else goes to the executable's general path, ``_call_slow`` (keywords, evaluation, the detailed
checks and error reports, compiling a new specialization). Results become tensors through
``results.new_tensor``, as on the general path.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Sequence, Tuple

from tripy_flatir import dtypes
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException
from tripy_frontend import codegen, results
from tripy_frontend.compiler.call_site import SITES, call_site
from tripy_frontend.tracebacks import strip_tripy_frames

# A validated input-shape signature -> (execute, finish, output shapes, launcher): the backend's launch
# split in two C-level steps (finish(execute(buffers)) runs the program), and the launcher itself, which
# maps runtime errors to reports.
Runs = Dict[
    Tuple[Tuple[int, ...], ...],
    Tuple[Callable[[List[Any]], Any], Callable[[Any], List[Any]], Tuple[Tuple[int, ...], ...], Any],
]


def _input_checks(n: int) -> List[str]:
    """Unpack the `n` arguments and fall back to the general path unless each is stored data in one buffer
    (``holds_buffer``) of its dtype."""
    if not n:
        return []
    body = [f"{', '.join(f'a{i}' for i in range(n))}, = args", "try:"]
    for i in range(n):
        body += [f"    t{i} = a{i}.trace_tensor", f"    p{i} = t{i}.producer"]
    body += ["except AttributeError:", "    return call_slow(args, kwargs)"]
    checks = " or ".join(f"not p{i}.holds_buffer or t{i}.dtype is not d{i}" for i in range(n))
    return body + [f"if {checks}:", "    return call_slow(args, kwargs)"]


def make_fast_call(
    input_dtypes: Sequence[dtypes.dtype],
    output_dtypes: Sequence[dtypes.dtype],
    returns_tuple: bool,
    constants: Sequence[Any],
    device: Device,
    runs: Runs,
    call_slow: Callable[[Tuple[Any, ...], Dict[str, Any]], Any],
) -> Callable[..., Any]:
    """An executable's ``call(*args, **kwargs)``. `runs` maps each validated input-shape signature to how
    to run it (see ``Runs``); the executable fills it as new signatures are validated. `call_slow(args,
    kwargs)` is the general path. The call is an API boundary (see ``tracebacks.py``)."""
    n, m = len(input_dtypes), len(output_dtypes)
    body = [f"if kwargs or len(args) != {n}:", "    return call_slow(args, kwargs)"]
    body += _input_checks(n)
    buffers = "[" + ", ".join(f"p{i}.data" for i in range(n)) + "]" + (" + constants" if constants else "")
    body += [
        f"run = runs_get(({''.join(f't{i}.shape, ' for i in range(n))}))",
        "if run is None:",
        "    return call_slow(args, kwargs)",
        "try:",
        f"    buffers = run[1](run[0]({buffers}))",
        "except Exception as e:",
        "    raise run[3].on_error(e) from None",
        "shapes = run[2]",
        "frame = getframe(1)",  # (the caller's)
        "site = sites_get((id(frame.f_code), frame.f_lasti))",
        "if site is None:",
        "    site = call_site(frame)",
    ]
    body += [f"r{j} = new_tensor(buffers[{j}], shapes[{j}], o{j}, device, site)" for j in range(m)]
    body.append("return (" + "".join(f"r{j}, " for j in range(m)) + ")" if returns_tuple else "return r0")
    body = (
        ["def call(*args, **kwargs):", "    try:"]
        + ["        " + line for line in body]
        + ["    except TripyException as e:", "        strip_tripy_frames(e)", "        raise"]
    )

    bound: Dict[str, Any] = {
        "new_tensor": results.new_tensor,
        "runs_get": runs.get,
        "constants": list(constants),
        "device": device,
        "call_site": call_site,
        "sites_get": SITES.get,
        "getframe": sys._getframe,
        "call_slow": call_slow,
        "TripyException": TripyException,
        "strip_tripy_frames": strip_tripy_frames,
    }
    bound.update({f"d{i}": dt for i, dt in enumerate(input_dtypes)})
    bound.update({f"o{j}": dt for j, dt in enumerate(output_dtypes)})
    # A factory whose parameters become the function's closure variables (faster than globals).
    source = f"def factory({', '.join(bound)}):\n" + "\n".join("    " + line for line in body) + "\n    return call\n"
    factory = codegen.make_function("factory", source, {}, f"<tripy compiled call: {n} inputs, {m} outputs>")
    return factory(**bound)  # type: ignore[no-any-return]
