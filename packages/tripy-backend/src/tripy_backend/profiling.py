"""Where a compiled program's time goes, by the user's line: XLA's own profiler, joined with the program's HLO.

``record(run, programs)`` runs ``run`` under XLA's profiler (``_xla.profiler_trace``); `programs` lists, for each
call that ``run`` makes, the compiled program it runs (``program_of_call``). XLA:CPU records every HLO
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
from tripy_backend import _xla
from tripy_backend.hlo_ops import HloOp, HloProgram
from tripy_backend.program import Program


@dataclass
class CompiledProgram:
    """The compiled program that a call runs (`label` says which, e.g. the bucket of a range program)."""

    executable: Any
    module_bytes: Optional[bytes]
    label: str


def program_of_call(program: Program, shapes: Tuple[Tuple[int, ...], ...]) -> CompiledProgram:
    """The compiled program that `program` runs for arguments of `shapes` (all its arguments, the baked-in
    data's included), compiled if it has to be (as the call itself would)."""
    text = _first(shapes, 4)
    launcher = program.launcher(shapes)
    ranges = program.ranges
    if ranges is not None and not program.specialized(shapes) and ranges.covers(shapes):
        bucket, executable, bounded = ranges.running(shapes)  # (what the range's launcher runs)
        bounds = _first(ranges.bucket_shapes(bucket), 4)
        kind = "bounded bucket" if bounded else "exact bucket"
        return CompiledProgram(executable, program.module_bytes, f"{kind} {bounds} (inputs {text})")
    what = "static program" if not program.is_dynamic else "program specialized to the call's shapes"
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
    """One call of the program: which compiled program ran, XLA's time for the run (us) and the ops it ran."""

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


def record(run: Callable[[], List[float]], programs: Sequence[CompiledProgram]) -> "Profile":
    """Run `run` (which calls the program once for each of `programs`, in order, and gives each call's wall-clock
    time in us) under XLA's profiler."""
    walls: List[float] = []
    try:
        trace = _xla.profiler_trace(lambda: walls.extend(run()))
    except _xla.runtime_error_types() as e:  # (XLA's profiler runs one session at a time in a process)
        raise_error(
            f"XLA's profiler could not start: {str(e).strip()}",
            stack_info.capture(),
            ["Stop the other profiler first (e.g. jax.profiler.stop_trace()), or profile one thing at a time."],
        )
    hlo: Dict[int, HloProgram] = {}
    for p in programs:
        if id(p.executable) not in hlo:
            hlo[id(p.executable)] = HloProgram.of(p.executable, p.module_bytes)
    calls = _calls(trace, programs, hlo)
    for call, wall in zip(calls, walls):
        call.wall_us = wall
    return Profile(calls, trace)


def _calls(trace: Dict[str, Any], programs: Sequence[CompiledProgram], hlo: Dict[int, HloProgram]) -> List[Call]:
    """The calls in `trace`: the k-th run of a compiled program is the k-th call. Each run's instructions are
    the events tagged with its ``run_id``, found within it (same thread, inside its time span) or elsewhere
    (an asynchronous dispatch runs them on XLA's worker threads)."""
    events = sorted((e for e in trace.get("traceEvents", []) if e.get("ph") == "X"), key=lambda e: e["ts"])
    runs = [e for e in events if e["name"] in _xla.EXECUTE_EVENTS]
    by_run: Dict[str, List[Dict[str, Any]]] = {}
    for e in events:
        run_id = e.get("args", {}).get("run_id")
        if run_id is not None and "hlo_op" in e["args"]:
            by_run.setdefault(run_id, []).append(e)
    calls = []
    for index, (program, event) in enumerate(zip(programs, runs)):
        program_hlo = hlo[id(program.executable)]
        call = Call(index, program.label, float(event["dur"]))
        inside = [
            e
            for e in events
            if e.get("tid") == event.get("tid")
            and "hlo_op" in e.get("args", {})
            and event["ts"] <= e["ts"] <= event["ts"] + event["dur"]
        ]
        ops = by_run.get(inside[0]["args"]["run_id"], []) if inside else []
        for e in ops:
            op = program_hlo.ops.get(e["args"]["hlo_op"])
            if op is not None:
                call.ops.append(OpRun(op, index, float(e["ts"]), float(e["dur"]), program_hlo.flops(op.name)))
            e["args"].update(_event_args(op, index))
        event.setdefault("args", {}).update({"tripy.call": index, "tripy.program": program.label})
        calls.append(call)
    return calls


def _event_args(op: Optional[HloOp], call: int) -> Dict[str, Any]:
    """What the saved trace adds to an instruction's event: the call, the FlatIR ops and the user's line."""
    args: Dict[str, Any] = {"tripy.call": call}
    if op is not None:
        args["tripy.ops"] = ", ".join(op.computes)
        if op.where is not None:
            args["tripy.source"] = f"{op.where.file}:{op.where.line}"
    return args


class Profile:
    """The profile of an executable's calls (made by :func:`tripy.profile`). ``print(profile)`` shows a table
    grouped by the user's line; ``rows()`` gives it as data; ``calls`` lists each call (which compiled program ran,
    e.g. which bucket of a range program, its time and its XLA operations); ``save(path)`` writes a Chrome trace."""

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
