"""What each operation of a compiled program computes: XLA's optimized HLO read back as data.

XLA:CPU's profiler names the HLO instruction (most often a fusion) it ran; this module says, for each name,
which FlatIR operations it computes (the ``op_name`` of each instruction's metadata, which is the name location
``tripy_flatir.locations`` gave the MLIR op, e.g. ``t2 = DotOp``), the user's line it comes from (through the
program's MLIR locations; XLA's own ``source_file``/``source_line`` metadata where the module has none), and how
many floating-point operations XLA's cost analysis counts for it (computed when first asked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from jax.extend.mlir import ir

from tripy_flatir import locations
from tripy_flatir.mlir_utils import context
from tripy_flatir.stack_info import SourceFrame
from tripy_backend import _xla

_HEADER = re.compile(r"^(?P<entry>ENTRY )?%?(?P<name>[\w.\-]+) \((?P<params>.*)\) -> (?P<result>.*) \{$")
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT )?%?(?P<name>[\w.\-]+) = (?P<type>.+?) (?P<opcode>[\w\-]+)"
    r"\((?P<operands>[^)]*)\)(?P<rest>.*)$"
)
_OP_NAME = re.compile(r'metadata=\{op_name="(?P<op>(?:[^"\\]|\\.)*)"')
_SOURCE = re.compile(r'source_file="(?P<file>(?:[^"\\]|\\.)*)" source_line=(?P<line>\d+)')
_CALLS = re.compile(r"calls=%?(?P<name>[\w.\-]+)")
_LAYOUT = re.compile(r"\{[^{}]*\}")
# Instructions that compute nothing of their own (XLA records none of them as an op that ran).
_NO_COST = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast"}


@dataclass
class HloOp:
    """One instruction of the optimized HLO: its name, the FlatIR ops it computes (its own first, then those
    fused into it), the user's line (None if unknown) and the text it was read from."""

    name: str
    computes: Tuple[str, ...]
    where: Optional[SourceFrame]
    text: str = field(repr=False)
    type: str = field(repr=False)
    opcode: str = field(repr=False)
    operands: List[str] = field(repr=False, default_factory=list)

    @property
    def main(self) -> Optional[str]:
        """The FlatIR op that stands for the instruction: a product or convolution it computes, else its own."""
        heavy = [name for name in self.computes if name.endswith(_HEAVY_OPS)]
        return (heavy + list(self.computes) + [None])[0]

    @property
    def tripy_ops(self) -> Tuple[str, ...]:
        """The FlatIR op classes it computes (``DotOp``, ``AddOp``, ...), each once."""
        return tuple(dict.fromkeys(name.split(" = ")[-1] for name in self.computes))


class HloProgram:
    """The instructions of one compiled program by name (``ops``), and each one's FLOPs on request (``flops``)."""

    def __init__(self, text: str, sources: Dict[str, locations.OpLocation], executable: Any = None) -> None:
        """The program of HLO `text` (XLA's ``HloModule::ToString``); `sources`: the MLIR ops' locations by name
        (``source_lines``); `executable`: its compiler, for the cost analysis (None: no FLOPs)."""
        self._executable = executable
        self._preamble, self._computations, self._entry = _split(text)
        self.ops: Dict[str, HloOp] = {}
        fused: Dict[str, List[str]] = {}
        for computation, (_, lines) in self._computations.items():
            fused[computation] = [m.group("op") for m in map(_OP_NAME.search, lines) if m]
        for _, lines in self._computations.values():
            for line in lines:
                op = _read(line, fused, sources)
                if op is not None:
                    self.ops[op.name] = op
        self._flops: Dict[str, Optional[float]] = {}

    @classmethod
    def of(cls, executable: Any, module_bytes: Optional[bytes]) -> "HloProgram":
        """The program of a compiled `executable`, located through its StableHLO (`module_bytes`, if known)."""
        sources = source_lines(module_bytes) if module_bytes is not None else {}
        return cls(_xla.optimized_hlo(executable), sources, executable)

    def flops(self, name: str) -> Optional[float]:
        """The floating-point operations XLA's cost analysis counts for one run of instruction `name` (None if
        it cannot tell)."""
        if name not in self._flops:
            op = self.ops.get(name)
            module = self._alone(op) if op is not None and op.opcode not in _NO_COST else None
            cost = _xla.hlo_cost(self._executable, module) if module and self._executable is not None else None
            self._flops[name] = float(cost["flops"]) if cost and cost.get("flops", -1) >= 0 else None
        return self._flops[name]

    def _alone(self, op: HloOp) -> str:
        """An HLO module whose entry runs `op` alone, on parameters of its operands' types (and every other
        computation of the program, which it may call)."""
        types = [self.ops[o].type if o in self.ops else None for o in op.operands]
        if any(t is None for t in types):
            return ""
        params = ", ".join(f"p{i}: {_LAYOUT.sub('', t)}" for i, t in enumerate(types))  # type: ignore[arg-type]
        body = [f"  %p{i} = {t} parameter({i})" for i, t in enumerate(types)]
        operands = ", ".join(f"%p{i}" for i in range(len(types)))
        rest = _INSTRUCTION.match(op.text).group("rest")  # type: ignore[union-attr]
        body.append(f"  ROOT %{op.name} = {op.type} {op.opcode}({operands}){rest}")
        others = [
            header + "\n" + "\n".join(lines) + "\n}"
            for c, (header, lines) in self._computations.items()
            if c != self._entry
        ]
        entry = f"ENTRY %profiled_op ({params}) -> {_LAYOUT.sub('', op.type)} {{\n" + "\n".join(body) + "\n}"
        return "\n\n".join(["HloModule profiled_op", self._preamble, *others, entry])


def _split(text: str) -> Tuple[str, Dict[str, Tuple[str, List[str]]], str]:
    """(the tables between the module's first line and its first computation, each computation's header line and
    instruction lines by name, the entry computation's name)."""
    preamble: List[str] = []
    computations: Dict[str, Tuple[str, List[str]]] = {}
    entry = ""
    current: Optional[List[str]] = None
    for line in text.splitlines()[1:]:
        header = _HEADER.match(line)
        if header is not None:
            current = []
            computations[header.group("name")] = (line, current)
            entry = header.group("name") if header.group("entry") else entry
        elif line.startswith("}"):
            current = None
        elif current is not None:
            current.append(line)
        elif not line.startswith("HloModule"):
            preamble.append(line)
    return "\n".join(preamble).strip(), computations, entry


def _read(line: str, fused: Dict[str, List[str]], sources: Dict[str, locations.OpLocation]) -> Optional[HloOp]:
    """The instruction on `line` of the HLO text (None for a line that is not one)."""
    m = _INSTRUCTION.match(line)
    if m is None:
        return None
    own = _OP_NAME.search(line)
    computes: List[str] = [own.group("op")] if own else []
    calls = _CALLS.search(m.group("rest"))
    if calls is not None:
        computes += fused.get(calls.group("name"), [])
    computes = list(dict.fromkeys(computes))
    operands = [o.strip().split(" ")[-1].lstrip("%") for o in m.group("operands").split(",") if o.strip()]
    return HloOp(
        m.group("name"),
        tuple(computes),
        _where(computes, line, sources),
        line,
        m.group("type"),
        m.group("opcode"),
        operands,
    )


# FlatIR ops that hold most of a fusion's work: a fusion of one is placed at its line, not at its root op's.
_HEAVY_OPS = ("DotOp", "ConvolutionOp")


def _where(computes: List[str], line: str, sources: Dict[str, locations.OpLocation]) -> Optional[SourceFrame]:
    """The user's line of the instruction: that of a product or convolution it computes, else of its own op (the
    root of a fusion), else of the first fused op that has one."""
    heavy = [name for name in computes if name.endswith(_HEAVY_OPS)]
    for name in heavy + computes:
        loc = sources.get(name)
        if loc is not None and loc.frame is not None:
            return loc.frame
    m = _SOURCE.search(line)
    if m is not None:
        return SourceFrame(locations._unescape(m.group("file")), int(m.group("line")), "", "", None)
    return None


def source_lines(module_bytes: bytes) -> Dict[str, locations.OpLocation]:
    """Each MLIR op's location in a module, by its name (``t2 = DotOp``, the ``op_name`` XLA keeps)."""
    out: Dict[str, locations.OpLocation] = {}
    with context():
        module = ir.Module.parse(module_bytes)
        for op in _walk(module.operation):
            loc = locations.parse(str(op.location))
            if loc is not None:
                out.setdefault(f"{loc.tensor} = {loc.op}", loc)
    return out


def _walk(op: Any) -> Iterator[Any]:
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child
                yield from _walk(child.operation)
