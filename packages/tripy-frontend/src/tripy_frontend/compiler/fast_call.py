"""The hot path of a compiled call, generated per executable.

Calling a small compiled program costs a few microseconds in the runtime, so a generic Python loop
over inputs and outputs would dominate it. Like ``dataclasses`` and ``attrs`` do for ``__init__``,
tripy writes a straight-line function for each executable's arity: no loops, no per-call lookups of
the executable's fixed properties (dtypes, baked-in buffers, output dtypes), which are bound once as
closure variables.

The generated ``__call__`` handles the common case itself: positional arguments that are evaluated
tensors of the right dtypes, with an input-shape signature that was validated before. Anything else
goes to the executable's general path, ``_call_slow`` (keywords, evaluation, the detailed checks and
error reports, compiling a new specialization). Each executable gets its own subclass holding its
``__call__`` (Python looks special methods up on the type), named and documented like the class.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Sequence, Tuple

from tripy_flatir import dtypes
from tripy_flatir.device import device as Device
from tripy_trace.ops.storage import Storage
from tripy_trace.tensor import TraceTensor
from tripy_trace.ops.storage import ResultStorage
from tripy_frontend.tensor import Tensor

# A validated input-shape signature -> (execute, finish, output shapes, launcher): the backend's launch
# split in two C-level steps (finish(execute(buffers)) runs the program), and the launcher itself, which
# maps runtime errors to reports.
Runs = Dict[Tuple[Tuple[int, ...], ...], Tuple[Callable[[List[Any]], Any], Callable[[Any], List[Any]],
                                              Tuple[Tuple[int, ...], ...], Any]]


def make_fast_call(input_dtypes: Sequence[dtypes.dtype], output_dtypes: Sequence[dtypes.dtype], returns_tuple: bool,
                   constants: Sequence[Any], device: Device, runs: Runs, call_site: Callable[[Any], Any],
                   sites: Dict[Any, Any]) -> Callable[..., Any]:
    """An executable's ``__call__``. `runs` maps each validated input-shape signature to how to run it
    (see ``Runs``); the executable fills it as new signatures are validated. `sites` caches call
    sites by (id of the code, offset) of the calling frame; `call_site(frame)` makes (and caches) one."""
    n, m = len(input_dtypes), len(output_dtypes)
    a = [f"a{i}" for i in range(n)]
    body = ["def __call__(self, *args, **kwargs):",
            f"    if kwargs or len(args) != {n}:",
            "        return self._call_slow(args, kwargs)"]
    if n:
        body.append(f"    {', '.join(a)}, = args")
        body.append("    try:")
        for i in range(n):
            body.append(f"        t{i} = a{i}.trace_tensor")
            body.append(f"        p{i} = t{i}.producer")
        body.append("    except AttributeError:")
        body.append("        return self._call_slow(args, kwargs)")
        checks = " or ".join(f"(p{i}.__class__ is not Storage and p{i}.__class__ is not ResultStorage) or "
                             f"t{i}.dtype is not d{i}" for i in range(n))
        body.append(f"    if {checks}:")
        body.append("        return self._call_slow(args, kwargs)")
    key = "(" + "".join(f"t{i}.shape, " for i in range(n)) + ")"
    body.append(f"    run = runs_get({key})")
    body.append("    if run is None:")
    body.append("        return self._call_slow(args, kwargs)")
    buffers = "[" + ", ".join(f"p{i}.data" for i in range(n)) + "]" + (" + constants" if constants else "")
    body.append("    try:")
    body.append(f"        results = run[1](run[0]({buffers}))")
    body.append("    except Exception as e:")
    body.append("        raise run[3].on_error(e) from None")
    body.append("    shapes = run[2]")
    body.append("    frame = getframe(1)")
    body.append("    site = sites_get((id(frame.f_code), frame.f_lasti))")
    body.append("    if site is None:")
    body.append("        site = call_site(frame)")
    for j in range(m):
        body += [f"    s{j} = shapes[{j}]",
                 f"    tt{j} = TraceTensor(None, site, s{j}, o{j}, device)",
                 f"    tt{j}.producer = ResultStorage(tt{j}, results[{j}], s{j}, o{j}, device)",
                 f"    r{j} = new_tensor(Tensor)",
                 f"    r{j}.trace_tensor = tt{j}"]
    body.append("    return (" + "".join(f"r{j}, " for j in range(m)) + ")" if returns_tuple else "    return r0")

    bound: Dict[str, Any] = {"Storage": Storage, "ResultStorage": ResultStorage, "TraceTensor": TraceTensor,
                             "Tensor": Tensor, "new_tensor": object.__new__, "runs_get": runs.get,
                             "constants": list(constants),
                             "device": device, "call_site": call_site, "sites_get": sites.get,
                             "getframe": sys._getframe}
    bound.update({f"d{i}": dt for i, dt in enumerate(input_dtypes)})
    bound.update({f"o{j}": dt for j, dt in enumerate(output_dtypes)})
    # A factory whose parameters become the function's closure variables (faster than globals).
    names = list(bound)
    source = (f"def factory({', '.join(names)}):\n" + "\n".join("    " + line for line in body)
              + "\n    return __call__\n")
    namespace: Dict[str, Any] = {"__name__": __name__}  # so that error reports see library code, not user code
    exec(compile(source, f"<tripy compiled call: {n} inputs, {m} outputs>", "exec"), namespace)
    call: Callable[..., Any] = namespace["factory"](**bound)
    return call
