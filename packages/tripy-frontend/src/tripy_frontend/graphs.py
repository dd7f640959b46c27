"""A program's Trace, FlatIR and StableHLO as graphs in Model Explorer's JSON format (``tp.visualize``).

Each level is one graph (``{"id": ..., "nodes": [...]}``, as Model Explorer's ``graph_builder.Graph`` writes
it): a node per operation, with its inputs as edges, each output's shape and dtype, and the user's line it came
from (its ``source`` attribute; nodes of one line are grouped, as a layer named after the file and line). A
FlatIR node and the StableHLO op lowered from it share an id (``t2 = DotOp``: the name location the op carries,
and the ``op_name`` XLA keeps), so a profile's times (``node_data``) overlay both. Pure data: no Model Explorer
needed to build them.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from jax.extend.mlir import ir

from tripy_backend.profiling import Profile
from tripy_flatir import locations
from tripy_flatir.function import FlatIRFunction
from tripy_flatir.mlir_utils import context, main_function
from tripy_flatir.stack_info import SourceFrame, StackInfo
from tripy_trace.trace import Trace

Node = Dict[str, Any]
Edge = Tuple[str, int]  # (the producing node's id, which of its outputs)


def node(
    id: str,
    label: str,
    frame: Optional[SourceFrame],
    attrs: Dict[str, str],
    inputs: Sequence[Edge],
    outputs: Sequence[Tuple[str, str]],
) -> Node:
    """One node: `attrs` shown when selected (plus ``source``, the user's line), an edge from each of `inputs`,
    and each output's (shape, dtype)."""
    if frame is not None:
        attrs = {**attrs, "source": f"{frame.file}:{frame.line}" + (f"  {frame.code.strip()}" if frame.code else "")}
    return {
        "id": id,
        "label": label,
        "namespace": f"{os.path.basename(frame.file)}:{frame.line}" if frame is not None else "",
        "attrs": [{"key": k, "value": v} for k, v in attrs.items()],
        "incomingEdges": [
            {"sourceNodeId": src, "sourceNodeOutputId": str(k), "targetNodeInputId": str(i)}
            for i, (src, k) in enumerate(inputs)
        ],
        "outputsMetadata": [
            {"id": str(k), "attrs": [{"key": "shape", "value": shape}, {"key": "dtype", "value": dt}]}
            for k, (shape, dt) in enumerate(outputs)
        ],
    }


def _frame(info: Optional[StackInfo]) -> Optional[SourceFrame]:
    return info.user_frame if info else None


def trace_graph(trace: Trace) -> Dict[str, Any]:
    """The Trace: a node per op (one per call the user made), named by its first output tensor."""
    where: Dict[int, Edge] = {}
    nodes = []
    for op in trace.ops:
        first = op.outputs[0]
        for k, out in enumerate(op.outputs):
            where[id(out)] = (first.name, k)
        outputs = [(str(list(o.shape)), str(o.dtype)) for o in op.outputs]
        nodes.append(
            node(
                first.name,
                op.name(),
                _frame(first.stack_info),
                {"trace": str(op)},
                [where[id(i)] for i in op.inputs if id(i) in where],
                outputs,
            )
        )
    return {"id": "Trace", "nodes": nodes}


def flat_ir_graph(func: FlatIRFunction) -> Dict[str, Any]:
    """The FlatIR: a node per input and per op (one per StableHLO op), named as its MLIR op is."""
    where: Dict[int, Edge] = {}
    nodes = []
    for t in func.inputs:
        where[id(t)] = (t.name, 0)
        nodes.append(node(t.name, "input", _frame(t.stack_info), {}, [], [(str(list(t.shape)), str(t.dtype))]))
    for op in func.ops:
        first = op.outputs[0]
        name = f"{first.name} = {type(op).__name__}"
        for k, out in enumerate(op.outputs):
            where[id(out)] = (name, k)
        attrs = {"flat_ir": str(op)}
        if first.reason:
            attrs["why"] = f"tripy introduced it {first.reason}"
        nodes.append(
            node(
                name,
                type(op).__name__,
                _frame(first.stack_info),
                attrs,
                [where[id(i)] for i in op.inputs if id(i) in where],
                [(str(list(o.shape)), str(o.dtype)) for o in op.outputs],
            )
        )
    return {"id": "FlatIR", "nodes": nodes}


def stablehlo_graph(module_bytes: bytes) -> Dict[str, Any]:
    """The StableHLO module's main function: a node per argument and per op (ops in regions, e.g. a reduction's
    body, are part of their op's node), named by the op's location."""
    with context():
        module = ir.Module.parse(module_bytes)
        block = main_function(module).regions[0].blocks[0]
        where: Dict[Any, Edge] = {}
        nodes = []
        for i, arg in enumerate(block.arguments):
            where[arg] = (f"arg{i}", 0)
            nodes.append(node(f"arg{i}", "argument", None, {}, [], [_type(arg.type)]))
        for k, op in enumerate(block.operations):
            loc = locations.parse(str(op.location))
            name = f"{loc.tensor} = {loc.op}" if loc is not None else f"{op.operation.name} #{k}"
            for r, result in enumerate(op.results):
                where[result] = (name, r)
            attrs = {"why": f"tripy introduced it {loc.reason}"} if loc is not None and loc.reason else {}
            nodes.append(
                node(
                    name,
                    op.operation.name,
                    loc.frame if loc is not None else None,
                    attrs,
                    [where[v] for v in op.operands if v in where],
                    [_type(r.type) for r in op.results],
                )
            )
    return {"id": "StableHLO", "nodes": nodes}


def _type(t: Any) -> Tuple[str, str]:
    """(shape, element type) of an MLIR tensor type, e.g. ``tensor<64x?xf32>`` -> ("[64, ?]", "f32")."""
    text = str(t)
    if not text.startswith("tensor<"):
        return text, ""
    *dims, element = text[len("tensor<") : -1].split(",")[0].split("x")
    return "[" + ", ".join(dims) + "]", element


def node_data(profile: Profile, graph_ids: Sequence[str]) -> Dict[str, Any]:
    """Model Explorer's node data for a profile: each XLA operation's mean time per call in microseconds, on the
    node of the op that stands for it (``HloOp.main``: the product or convolution of a fusion, else its last op),
    so that a group's sum is its time."""
    times: Dict[str, float] = {}
    for call in profile.calls:
        for run in call.ops:
            if run.op.main is not None:
                times[run.op.main] = times.get(run.op.main, 0.0) + run.time_us / max(1, len(profile.calls))
    results = {name: {"value": round(us, 3)} for name, us in times.items()}
    gradient = [{"stop": 0, "bgColor": "#fff5eb"}, {"stop": 1, "bgColor": "#d94801"}]
    return {g: {"name": "XLA time per call (us)", "results": results, "gradient": gradient} for g in graph_ids}


def profiled_nodes(data: Dict[str, Any], graphs: List[Dict[str, Any]]) -> int:
    """How many nodes of `graphs` the node data `data` gives a value to."""
    return sum(1 for g in graphs if g["id"] in data for n in g["nodes"] if n["id"] in data[g["id"]]["results"])
