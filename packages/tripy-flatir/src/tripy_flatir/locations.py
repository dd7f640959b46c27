"""Provenance inside the MLIR module: each op's location names its FlatIR tensor and the user's line.

Every StableHLO op that ``FlatIRFunction.to_mlir`` emits carries a *name location* wrapping a *file
location* (as JAX does)::

    loc("t3 = AddOp"("/home/me/model.py":12:11 to :16))
    loc("t_inter4 = BroadcastOp"(fused<"to broadcast the left operand ...">["/home/me/model.py":12:11 to :16]))

the name saying which FlatIR tensor (and op) it computes, the file location where the user created the
tensor, and, for ops a lowering introduced, why (the fused location's metadata). The module carries
this with it (into the backend, the persistent cache, a saved ``tp.Executable``), so whoever holds it
can map a verifier, compiler or run-time error, whose text mentions the location, back to the user's
line with ``report()``: no callback into the layer that built the module, and no FlatIR kept alive.
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from tripy_flatir.exceptions import format_frame
from tripy_flatir.stack_info import SourceFrame

if TYPE_CHECKING:
    from tripy_flatir.ops.base import BaseFlatIROp


def op_location(op: "BaseFlatIROp", file_locations: Optional[Dict[Any, Any]] = None) -> Any:
    """The MLIR location of `op` (see the module docstring). Call inside an MLIR context. Ops made at one
    place share its file location: pass one dict as `file_locations` for a whole module to build each once."""
    from jax.extend.mlir import ir

    out = op.outputs[0]
    name = f"{out.name} = {type(op).__name__}"
    info = out.stack_info
    if not info:
        return ir.Location.name(name)
    key = (id(info), out.reason)  # (the StackInfo is kept alive by the tensor while the module is built)
    file = file_locations.get(key) if file_locations is not None else None
    if file is None:
        frame = info.user_frame
        if frame is None:
            return ir.Location.name(name)
        file = _file_location(frame, out.reason)
        if file_locations is not None:
            file_locations[key] = file
    return ir.Location.name(name, childLoc=file)


def _file_location(frame: SourceFrame, reason: Optional[str]) -> Any:
    from jax.extend.mlir import ir

    start, end = frame.column_range or (0, 0)
    file = ir.Location.file(frame.file, frame.line, start + 1, frame.line, end + 1)
    return ir.Location.fused([file], metadata=ir.StringAttr.get(reason)) if reason else file


# The text form of op_location()'s locations, as MLIR prints them (in diagnostics and compiler errors).
_LOCATION = re.compile(
    r'loc\("(?P<tensor>[^" ]+) = (?P<op>\w+)"'
    r'(?:\((?:fused<"(?P<reason>(?:[^"\\]|\\.)*)">\[)?"(?P<file>(?:[^"\\]|\\.)+)":'
    r"(?P<line>\d+):(?P<col>\d+)(?: to (?:\d+)?:(?P<end>\d+))?)?"
)


@dataclass
class OpLocation:
    """Where an MLIR op came from: its FlatIR tensor and op, the user's line (if known), and why a
    lowering introduced it (if one did)."""

    tensor: str
    op: str
    frame: Optional[SourceFrame]
    reason: Optional[str]


def parse(text: str) -> Optional[OpLocation]:
    """The first op location in `text` (an MLIR location or an error message that prints one)."""
    m = _LOCATION.search(text)
    if m is None:
        return None
    frame = None
    if m.group("file"):
        file, line, col = _unescape(m.group("file")), int(m.group("line")), int(m.group("col"))
        end = int(m.group("end")) if m.group("end") else col
        code = linecache.getline(file, line).rstrip("\n")
        frame = SourceFrame(file, line, "", code, (col - 1, end - 1) if end > col else None)
    reason = _unescape(m.group("reason")) if m.group("reason") else None
    return OpLocation(m.group("tensor"), m.group("op"), frame, reason)


_FILE_POSITION = re.compile(r"(?P<file>[^\s:\"]+\.py):(?P<line>\d+):(?P<col>\d+): error")


def _file_position(text: str) -> Optional[SourceFrame]:
    """The user's line in an error that names only a file position."""
    m = _FILE_POSITION.search(text)
    if m is None:
        return None
    file, line, col = m.group("file"), int(m.group("line")), int(m.group("col"))
    return SourceFrame(file, line, "", linecache.getline(file, line).rstrip("\n"), (col - 1, col))


def _unescape(text: str) -> str:
    """MLIR prints a quote or backslash in a string as ``\\22`` / ``\\5C`` (hex escapes)."""
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def report(headline: str, messages: Iterable[str], located_at: Iterable[str] = ()) -> str:
    """An error report for compiler/runtime `messages`: the user's line first, then the messages, then
    the FlatIR op and why tripy introduced it. The op is the first location found in `located_at` (e.g.
    the diagnostics' locations), else in the messages (compiler errors print the location of the op)."""
    messages = list(messages)
    where = next((loc for loc in map(parse, [*located_at, *messages]) if loc is not None), None)
    lines: List[str] = []
    if where is not None and where.frame is not None:
        lines += [format_frame(where.frame), ""]
    elif where is None:  # e.g. shape refinement prints only the file location: "model.py:6:15: error: ..."
        frame = _file_position("\n".join(messages))
        if frame is not None:
            lines += [format_frame(frame), ""]
    lines.append(f"{headline}:")
    lines += ["    " + m.strip().replace("\n", "\n    ") for m in messages]
    if where is not None:
        lines.append(f"\nThis error occurred in the FlatIR operation {where.op} that computes {where.tensor}.")
        if where.reason:
            lines.append(f"Note: tripy introduced this operation {where.reason}.")
        if where.frame is not None:
            lines.append("\nThis originated from the expression shown at the top.")
    return "\n".join(lines)


def describe(location: Any) -> str:
    """A short label for a diagnostic's location: its FlatIR tensor, or 'unknown'."""
    loc = parse(str(location))
    return loc.tensor if loc is not None else "unknown"
