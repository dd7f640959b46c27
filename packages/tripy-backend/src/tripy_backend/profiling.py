"""Where a compiled program's time goes, by the user's line: XLA's own profiler, joined with the program's HLO.

``record(run)`` runs ``run`` under XLA's profiler (``_xla.profiler_trace``); ``run`` says, for each call it made
(of an executable, or of a function evaluated eagerly), its wall-clock time and the compiled programs it ran, in
order (``program_of_call``). XLA:CPU records every HLO
instruction (mostly fusions) it runs, tagged with the run it belongs to; ``hlo_ops`` says which FlatIR ops and
which user line each instruction computes. The resulting ``Profile`` prints a table grouped by user line and
saves a Chrome trace (``chrome://tracing``, https://ui.perfetto.dev). Nothing here runs unless a profile is asked
for: a program's calls carry no profiling code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tripy_flatir import stack_info
from tripy_flatir.exceptions import raise_error
from tripy_flatir.stack_info import SourceFrame
from tripy_backend import background, _xla
from tripy_backend.hlo_ops import HloOp, HloProgram
from tripy_backend.program import Program


@dataclass
class CompiledProgram:
    """The compiled program that a call runs (`label` says which, e.g. the bucket of a range program)."""

    executable: Any
    module_bytes: Optional[bytes]
    label: str


def program_of_call(program: Program, shapes: Tuple[Tuple[int, ...], ...], what: str = "") -> CompiledProgram:
    """The compiled program that `program` runs for arguments of `shapes` (all its arguments, the baked-in
    data's included), compiled if it has to be (as the call itself would). `what` names a program that is not a
    range program's bucket (default: static, or specialized to the call's shapes)."""
    text = _first(shapes, 4)
    launcher = program.launcher(shapes)
    ranges = program.ranges
    if ranges is not None and not program.specialized(shapes) and ranges.covers(shapes):
        bucket, executable, bounded = ranges.running(shapes)  # (what the range's launcher runs)
        bounds = _first(ranges.bucket_shapes(bucket), 4)
        kind = "bounded bucket" if bounded else "exact bucket"
        return CompiledProgram(executable, program.module_bytes, f"{kind} {bounds} (inputs {text})")
    what = what or ("static program" if not program.is_dynamic else "program specialized to the call's shapes")
    return CompiledProgram(launcher.executable, program.module_bytes, f"{what} (inputs {text})")


@dataclass
class OpRun:
    """One run of one HLO instruction: which, in which call, when (us from the trace's start) and for how long."""

    op: HloOp
    call: int
    start_us: float
    time_us: float
    flops: Optional[float]


@dataclass
class Call:
    """One call (of an executable, or of a function evaluated eagerly): which compiled program(s) ran (joined by
    ``+``), XLA's time for their runs (us) and the ops they ran."""

    index: int
    program: str
    time_us: float
    ops: List[OpRun] = field(default_factory=list)
    wall_us: Optional[float] = None  # the call's time as the caller measured it (its Python included)


@dataclass
class Row:
    """The ops of one user line (or of none) over all calls."""

    where: Optional[SourceFrame]
    tripy_ops: List[str]
    xla_ops: List[str]
    calls: int
    total_us: float
    flops: Optional[float]

    @property
    def label(self) -> str:
        if self.where is None:
            return "(no user line)"
        code = self.where.code.strip()
        return f"{self.where.file}:{self.where.line}" + (f"  {code}" if code else "")


# What ``record``'s `run` gives for each call it made: its wall-clock time (us) and the compiled programs it ran.
CallRuns = Tuple[float, List[CompiledProgram]]


def record(run: Callable[[], List[CallRuns]]) -> "Profile":
    """Run `run` (which makes the calls to profile and gives, for each, its wall-clock time in us and the compiled
    programs it ran, in order) under XLA's profiler, once the background compiles are done (they run each new program
    once, which the profile would count)."""
    background.wait_all()
    made: List[CallRuns] = []
    try:
        trace = _xla.profiler_trace(lambda: made.extend(run()))
    except _xla.runtime_error_types() as e:  # (XLA's profiler runs one session at a time in a process)
        raise_error(
            f"XLA's profiler could not start: {str(e).strip()}",
            stack_info.capture(),
            ["Stop the other profiler first (e.g. jax.profiler.stop_trace()), or profile one thing at a time."],
        )
    hlo: Dict[int, HloProgram] = {}
    for _, programs in made:
        for p in programs:
            if id(p.executable) not in hlo:
                hlo[id(p.executable)] = HloProgram.of(p.executable, p.module_bytes)
    calls = _calls(trace, made, hlo)
    for call, (wall, _) in zip(calls, made):
        call.wall_us = wall
    return Profile(calls, trace)


def _calls(trace: Dict[str, Any], made: Sequence[CallRuns], hlo: Dict[int, HloProgram]) -> List[Call]:
    """The calls in `trace`: the k-th run of a compiled program in it is the k-th program that the calls ran."""
    events = sorted((e for e in trace.get("traceEvents", []) if e.get("ph") == "X"), key=lambda e: e["ts"])
    runs = [e for e in events if e["name"] in _xla.EXECUTE_EVENTS]
    expected = sum(len(programs) for _, programs in made)
    if len(runs) != expected:
        raise_error(
            f"tp.profile expected {expected} run(s) of compiled programs, but XLA's profiler saw {len(runs)}.",
            stack_info.capture(),
            [
                "Something else ran a program meanwhile: another thread, or a compiled executable (or JAX) called "
                "inside the profiled function. Profile an executable with tp.profile(executable, *args)."
            ],
        )
    by_run: Dict[str, List[Dict[str, Any]]] = {}
    for e in events:
        run_id = e.get("args", {}).get("run_id")
        if run_id is not None and "hlo_op" in e["args"]:
            by_run.setdefault(run_id, []).append(e)
    calls = []
    next_run = iter(runs)
    for index, (_, programs) in enumerate(made):
        call = Call(index, " + ".join(p.label for p in programs) or "no program ran", 0.0)
        for program, event in zip(programs, next_run):
            call.time_us += float(event["dur"])
            _add_ops(call, events, event, by_run, hlo[id(program.executable)])
            event.setdefault("args", {}).update({"tripy.call": index, "tripy.program": program.label})
        calls.append(call)
    return calls


def _add_ops(
    call: Call,
    events: List[Dict[str, Any]],
    run: Dict[str, Any],
    by_run: Dict[str, List[Dict[str, Any]]],
    program: HloProgram,
) -> None:
    """Add to `call` the instructions of one `run` of `program`: the events tagged with the run's ``run_id``,
    found within it (same thread, inside its time span) or elsewhere (an asynchronous dispatch runs them on
    XLA's worker threads). Where XLA tags none with a run (jaxlib 0.6's runtime for programs with convolutions),
    the instructions inside the run's time span, on any thread (``tp.profile`` runs one program at a time)."""
    during = [e for e in events if "hlo_op" in e.get("args", {}) and run["ts"] <= e["ts"] <= run["ts"] + run["dur"]]
    run_id = next(
        (e["args"]["run_id"] for e in during if e.get("tid") == run.get("tid") and "run_id" in e["args"]), None
    )
    ops = by_run.get(run_id, []) if run_id is not None else _innermost([e for e in during if "run_id" not in e["args"]])
    for e in ops:
        op = program.ops.get(e["args"]["hlo_op"])
        if op is not None:
            call.ops.append(OpRun(op, call.index, float(e["ts"]), float(e["dur"]), program.flops(op.name)))
        e["args"].update(_event_args(op, call.index))


def _innermost(events: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """`events` less those that hold another one on their thread (a ``call`` instruction around the instructions it
    calls), so that no time counts twice."""
    return [
        e
        for e in events
        if not any(
            f is not e
            and f.get("tid") == e.get("tid")
            and e["ts"] <= f["ts"]
            and f["ts"] + f["dur"] <= e["ts"] + e["dur"]
            for f in events
        )
    ]


def _event_args(op: Optional[HloOp], call: int) -> Dict[str, Any]:
    """What the saved trace adds to an instruction's event: the call, the FlatIR ops and the user's line."""
    args: Dict[str, Any] = {"tripy.call": call}
    if op is not None:
        args["tripy.ops"] = ", ".join(op.computes)
        if op.where is not None:
            args["tripy.source"] = f"{op.where.file}:{op.where.line}"
    return args


class Profile:
    """The profile of an executable's calls, or of a function's calls evaluated eagerly (made by
    :func:`tripy.profile`). ``print(profile)`` shows a table grouped by the user's line; ``rows()`` gives it as
    data; ``calls`` lists each call (which compiled programs ran, e.g. which bucket of a range program, their time
    and their XLA operations); ``save(path)`` writes a Chrome trace."""

    def __init__(self, calls: List[Call], trace: Dict[str, Any]) -> None:
        self.calls = calls
        self._trace = trace

    @property
    def total_us(self) -> float:
        """XLA's time for all the calls (the runs of the compiled programs), in microseconds."""
        return sum(c.time_us for c in self.calls)

    @property
    def ops_us(self) -> float:
        """The time of the XLA operations (fusions and other HLO instructions) that ran, in microseconds."""
        return sum(r.time_us for c in self.calls for r in c.ops)

    def rows(self, by: str = "line") -> List[Row]:
        """The table, most time first: one row per user line (`by` = ``"line"``; ops with no user line in a row of
        their own), or per XLA operation (``"op"``: each fusion on its own)."""
        if by not in ("line", "op"):
            raise_error(f'Profile rows are grouped by "line" or by "op", not by {by!r}.', stack_info.capture())
        rows: Dict[Any, Row] = {}
        for c in self.calls:
            for r in c.ops:
                where = (r.op.where.file, r.op.where.line) if r.op.where is not None else None
                key = where if by == "line" else (where, r.op.name)
                row = rows.setdefault(key, Row(r.op.where, [], [], 0, 0.0, 0.0))
                row.tripy_ops += [o for o in r.op.tripy_ops if o not in row.tripy_ops]
                row.xla_ops += [r.op.name] if r.op.name not in row.xla_ops else []
                row.calls += 1
                row.total_us += r.time_us
                row.flops = row.flops + r.flops if row.flops is not None and r.flops is not None else None
        return sorted(rows.values(), key=lambda r: -r.total_us)

    def save(self, path: str) -> None:
        """Write the profile as a Chrome trace (JSON; open it in https://ui.perfetto.dev or ``chrome://tracing``):
        XLA's events of every call, each XLA operation's with the FlatIR ops it computes (``tripy.ops``) and the
        user's line (``tripy.source``), each run's with its call and compiled program."""
        trace = {k: v for k, v in self._trace.items() if k != "metadata"}  # (Perfetto rejects XLA's metadata)
        with open(path, "w") as f:
            json.dump(trace, f)

    def table(self, by: str = "line") -> str:
        """The profile as text (``print(profile)`` is ``table()``): one row per user line, or per XLA operation
        with `by` = ``"op"`` (see ``rows``)."""
        return format_table(self, by)

    def __str__(self) -> str:
        return format_table(self)

    __repr__ = __str__


def format_table(profile: Profile, by: str = "line") -> str:
    """The profile as text: a header, one line per row of ``rows(by)``, the time outside XLA's operations, the
    programs that ran."""
    total = profile.total_us or 1.0
    walls = [c.wall_us for c in profile.calls if c.wall_us is not None]
    wall = f", {sum(walls) / len(walls):.1f} us per call as measured around it" if walls else ""
    lines = [
        f"Profile of {len(profile.calls)} call(s): {profile.total_us / 1e3:.3f} ms in XLA "
        f"({profile.total_us / max(1, len(profile.calls)):.1f} us per call{wall})",
        f"{'share':>7} {'total ms':>9} {'calls':>6} {'mean us':>9} {'GFLOP/s':>8}  user line / tripy ops / XLA ops",
    ]
    for row in profile.rows(by):
        rate = f"{row.flops / row.total_us / 1e3:.1f}" if row.flops and row.total_us else "-"
        lines.append(
            f"{row.total_us / total:7.1%} {row.total_us / 1e3:9.3f} {row.calls:6d} "
            f"{row.total_us / row.calls:9.1f} {rate:>8}  {row.label}"
        )
        lines.append(f"{'':45}[{_first(row.tripy_ops, 8)}] {_first(row.xla_ops, 6)}")
    outside = profile.total_us - profile.ops_us
    what = (
        "(outside XLA's ops: launch, buffers)"
        if profile.ops_us
        else "(the whole program: XLA:CPU reports no per-op times before jaxlib 0.8)"
    )
    lines.append(f"{outside / total:7.1%} {outside / 1e3:9.3f} {'':26}{what}")
    lines.append(f"{1:7.1%} {profile.total_us / 1e3:9.3f} {'':26}total")
    lines.append("Programs: " + "; ".join(_program_runs(profile.calls)))
    return "\n".join(lines)


def _first(items: Sequence[Any], count: int) -> str:
    """The first `count` of `items`, joined, and how many there are in all if that is more."""
    shown = ", ".join(str(list(i)) if isinstance(i, tuple) else str(i) for i in items[:count])
    return shown + (f", ... ({len(items)} in all)" if len(items) > count else "")


def _program_runs(calls: List[Call]) -> List[str]:
    """Which compiled program ran in which calls, e.g. ``calls 0-9: static program (inputs [8, 8])``."""
    groups: List[Tuple[int, int, str]] = []
    for c in calls:
        if groups and groups[-1][2] == c.program and groups[-1][1] == c.index - 1:
            groups[-1] = (groups[-1][0], c.index, c.program)
        else:
            groups.append((c.index, c.index, c.program))
    return [f"call {a}: {p}" if a == b else f"calls {a}-{b}: {p}" for a, b, p in groups]
