"""``tp.profile``: where an executable's or an eager function's time goes, by the user's line (see
``tripy_backend.profiling``)."""

from __future__ import annotations

import time
from typing import Any, Callable, List, NoReturn, Tuple, Union

from tripy_backend.profiling import CallRuns, CompiledProgram, Profile, program_of_call, record
from tripy_backend.program import Program
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend import eager
from tripy_frontend.compiler.executable import Executable
from tripy_frontend.export import public_api
from tripy_frontend.tensor import Tensor

__all__ = ["Profile", "profile"]


@public_api(document_under="compile")
def profile(function: Union[Executable, Callable[..., Any]], *args: Any, calls: int = 10, warmup: int = 1) -> Profile:
    """Run ``function(*args)`` `calls` times under XLA's own profiler and say where the time went: each XLA
    operation (mostly a fusion of several of tripy's ops) as XLA:CPU ran it, attributed to the line of your code
    that made it. `warmup` calls run first, unprofiled (a program's first run pays one-time costs).

    `function` is a compiled executable (:func:`tripy.compile`), or any Python function: its tensors are then
    evaluated eagerly, and each call profiles the programs that evaluation ran (the tensors it returns are
    evaluated at the end of the call). Its programs are compiled afresh in the warmup calls, from its own
    graphs, so that their locations are its lines (a program cached before would carry those of the code that
    compiled it).

    ``print(profile)`` shows a table grouped by your lines, most time first: each line's share of the calls'
    time, its total, how many XLA operations of it ran (``calls``) and their mean time, GFLOP/s where XLA's cost
    analysis counts the operations' floating-point work, and under it the FlatIR ops and XLA operations of the
    line. A fusion counts at the line of the product or convolution it computes, else at that of its last op.
    The time outside XLA's operations (launching the programs, their buffers) has a row of its own, and the last
    line says which compiled programs ran in which calls (for a range program: which bucket).
    ``profile.rows()`` gives the table as data, ``profile.calls`` each call and ``profile.save("trace.json")``
    writes a Chrome trace (open it in https://ui.perfetto.dev), each XLA operation's event with its FlatIR ops
    (``tripy.ops``) and your line (``tripy.source``).

    XLA:CPU reports each operation's time from jaxlib 0.8 on; before that (its classic runtime) it reports
    each call's time only. Profiling costs nothing when it is not asked for: no code of it runs in a call.

    Args:
        function: A compiled function (:func:`tripy.compile`), or a function to profile in eager mode.
        *args: Its arguments (for an executable: its runtime inputs, positionally), as for a call.
        calls: How many calls to profile.
        warmup: How many calls to run first, unprofiled.

    Returns:
        The profile.

    .. code-block:: python

        def layer(x, w):
            return tp.relu(x @ w)

        exe = tp.compile(layer, args=[tp.InputInfo((64, 64), tp.float32), tp.InputInfo((64, 64), tp.float32)])
        prof = tp.profile(exe, tp.ones((64, 64)), tp.ones((64, 64)), calls=5)
        print(prof)
        assert len(prof.calls) == 5
        assert prof.total_us > 0

        eager = tp.profile(layer, tp.ones((64, 64)), tp.ones((64, 64)), calls=5)  # (no tp.compile: eager mode)
        assert eager.calls[0].program.startswith("eager program")
    """
    if calls < 1 or warmup < 0:
        raise_error(
            f"tp.profile needs calls >= 1 and warmup >= 0, not calls={calls}, warmup={warmup}.", _stack.capture()
        )
    if isinstance(function, Executable):
        return _profile_executable(function, args, calls, warmup)
    if not callable(function):
        raise_error(
            f"tp.profile takes a compiled executable or a function, not {type(function).__name__}.",
            _stack.capture(),
            ["Pass tp.compile(...)'s result, or a function whose tensors are evaluated eagerly."],
        )
    with eager.recorded_programs() as ran:
        for _ in range(warmup):
            _call(function, args)
        ran.clear()  # (the programs compiled and run by the warmup calls)
        return record(lambda: _run_eagerly(function, args, calls, ran))


def _profile_executable(executable: Executable, args: Tuple[Any, ...], calls: int, warmup: int) -> Profile:
    if executable.device.kind != "cpu":
        _not_on_cpu(str(executable.device))
    if executable._layouts is not None or executable._nesting is not None:
        raise_error(
            "tp.profile takes an executable of one device whose inputs are tensors given positionally.",
            _stack.capture(),
            ["Profile an executable compiled without sharding or nested inputs."],
        )
    for _ in range(warmup):
        executable(*args)
    shapes = _program_shapes(executable, args)
    program = program_of_call(executable._program, shapes)
    return record(lambda: _run(executable, args, calls, program))


def _not_on_cpu(device: str) -> NoReturn:
    raise_error(
        f"tp.profile profiles programs on the CPU; this one runs on {device}.",
        _stack.capture(),
        ["It reads the events of XLA:CPU's runtime; on a GPU, use the GPU vendor's profiler."],
    )


def _run(executable: Executable, args: Tuple[Any, ...], calls: int, program: CompiledProgram) -> List[CallRuns]:
    """Call `executable` `calls` times: each call's wall-clock time (us) and the program it ran."""
    made: List[CallRuns] = []
    for _ in range(calls):
        start = time.perf_counter()
        executable(*args)
        made.append(((time.perf_counter() - start) * 1e6, [program]))
    return made


def _run_eagerly(function: Callable[..., Any], args: Tuple[Any, ...], calls: int, ran: List[Any]) -> List[CallRuns]:
    """Call `function` `calls` times, evaluating what it returns: each call's wall-clock time (us) and the eager
    programs it ran (`ran`: every program eager evaluation runs, as ``eager.recorded_programs`` lists them)."""
    made: List[CallRuns] = []
    for _ in range(calls):
        first = len(ran)
        start = time.perf_counter()
        _call(function, args)
        wall = (time.perf_counter() - start) * 1e6
        made.append((wall, [_eager_program(p) for p in ran[first:]]))
    return made


def _call(function: Callable[..., Any], args: Tuple[Any, ...]) -> None:
    """Call `function` and evaluate the tensors it returns (alone, in a tuple, list or dict)."""
    result = function(*args)
    values = list(result.values()) if isinstance(result, dict) else result
    for value in values if isinstance(values, (list, tuple)) else [values]:
        if isinstance(value, Tensor):
            value.eval()


def _eager_program(program: Program) -> CompiledProgram:
    """What ``record`` needs of an eager `program` (static: one compiled program, for its inputs' shapes)."""
    if program.device.kind != "cpu":
        _not_on_cpu(str(program.device))
    return program_of_call(program, tuple(program.input_shapes), what="eager program")


def _program_shapes(executable: Executable, args: Tuple[Any, ...]) -> Tuple[Tuple[int, ...], ...]:
    """The shapes of the compiled program's arguments in a call with `args`: the runtime inputs' (for a shape
    value, of the empty tensor that carries it), then the baked-in data's."""
    if len(args) != executable._num_inputs:
        raise_error(
            f"tp.profile: the executable takes {executable._num_inputs} inputs, but {len(args)} were given.",
            _stack.capture(),
            [f"Give them positionally, as for a call: {executable._signature_text()}."],
        )
    shapes = []
    for i, a in enumerate(args):
        dimension = executable._dimension_inputs.get(i)
        if dimension is not None:
            shapes.append(tuple(dimension.carrier(executable._names[i], a).shape))
        else:
            executable._check_argument(i, a)  # (a tensor of the right dtype and shape, as a call checks)
            assert isinstance(a, Tensor)
            a.eval()
            shapes.append(tuple(a.trace_tensor.shape))
    return tuple(shapes) + executable._constant_shapes
