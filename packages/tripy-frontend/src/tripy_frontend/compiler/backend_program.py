"""The backend program of an executable (``tripy_backend.Program``), compiled when the executable is made:
for the whole declared range of a dynamic program, so that calls in range do not compile."""

from __future__ import annotations

from typing import Any, Callable, Dict, Sequence, Tuple

from tripy_backend import Program
from tripy_backend import compile as backend_compile
from tripy_flatir.device import device as Device
from tripy_frontend.compiler.input_info import InputInfo, range_dims


def build_program(
    module_bytes: bytes,
    names: Sequence[str],
    infos: Sequence[InputInfo],
    constant_shapes: Sequence[Tuple[int, ...]],
    constants: Callable[[], Sequence[Any]],
    device: Device,
    optimization_level: int,
    what: str,
    saved: Any,
    num_devices: int = 1,
    wait: bool = False,
) -> Program:
    """The backend program. A dynamic one is compiled for the whole declared range (bounded programs, see
    ``tripy_backend.ranges``), so no call inside the range compiles: this returns once a program runs every shape
    in range, and the rest of the plan compiles in the background unless `wait`. If it cannot be, it is compiled
    for the `opt` shapes, so that compile errors surface now rather than at the first call. `constants()` gives the
    baked-in data's buffers (`constant_shapes`), asked for only where a program runs here (see ``compile_range``)."""
    fixed = [tuple(s) for s in constant_shapes]
    program = backend_compile(
        module_bytes,
        [info.trace_shape for info in infos] + fixed,
        device,
        optimization_level,
        name=what,
        saved=saved,
        num_devices=num_devices,
        runtime_inputs=len(infos),
    )
    if program.is_dynamic:
        dims, variables = range_dims(names, infos)
        all_dims = dims + fixed
        dtypes = [info.dtype.numpy_dtype for info in infos]
        if not program.compile_range(all_dims, variables, dtypes, constants, wait):
            error = program.range_error(all_dims, variables, _labels(names, infos))  # (sizes the program refuses)
            if error is not None:
                raise error
            program.launcher(tuple(info.shape_bounds.opt for info in infos) + tuple(fixed))
    return program


def _labels(names: Sequence[str], infos: Sequence[InputInfo]) -> Dict[str, str]:
    """Each range variable (``range_dims``) in words: "dim 1 of input 'x'", or a named dim and its first use."""
    labels: Dict[str, str] = {}
    for name, info in zip(names, infos):
        b = info.shape_bounds
        for d in range(info.rank):
            if b.min[d] != b.max[d]:
                var = info.dimension_names.get(d, f"{name}[{d}]")
                where = f"dim {d} of input '{name}'"
                labels.setdefault(var, where if var == f"{name}[{d}]" else f"the dimension '{var}' ({where})")
    return labels
