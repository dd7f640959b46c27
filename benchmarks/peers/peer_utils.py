"""Shared pieces of the peer benchmarks: optional peers, ONNX export, ONNX Runtime sessions and OpenVINO models, the
results table."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Sequence

CACHE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".cache")


class NotAvailable(Exception):
    """A peer that cannot run here; the message is the reason shown as ``n/a (reason)``."""


def onnx_file(module: Any, args: tuple, input_names: Sequence[str], name: str) -> str:
    """The ONNX export of `module` with example `args`, cached in ``.cache/<name>.onnx`` (weights are the seed-0
    random ones of every benchmark)."""
    try:
        import torch
    except ImportError as e:
        raise NotAvailable(f"not installed: {e}") from None
    os.makedirs(CACHE_DIR, exist_ok=True)
    path = os.path.join(CACHE_DIR, f"{name}.onnx")
    if not os.path.exists(path):
        tmp = path + ".tmp.onnx"
        with torch.inference_mode():
            torch.onnx.export(module, args, tmp, input_names=list(input_names), dynamo=True, external_data=False)
        os.replace(tmp, path)
    return path


def onnx_session(module: Any, args: tuple, input_names: Sequence[str], name: str) -> Any:
    """An ONNX Runtime session (all cores, all graph optimizations) for `module` exported with example `args`."""
    try:
        import onnxruntime as ort
    except ImportError as e:
        raise NotAvailable(f"not installed: {e}") from None
    path = onnx_file(module, args, input_names, name)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def openvino_model(module: Any, args: tuple, input_names: Sequence[str], name: str) -> Any:
    """OpenVINO's CPU plugin compiling the same ONNX export (all cores, float32 inference: no bfloat16 on CPUs
    that have it). Call it with a dict of inputs; ``openvino_run`` gives the first output."""
    try:
        import openvino as ov
    except ImportError as e:
        raise NotAvailable(f"not installed: {e} (optional: pip install openvino)") from None
    path = onnx_file(module, args, input_names, name)
    config = {"INFERENCE_NUM_THREADS": os.cpu_count() or 1, "INFERENCE_PRECISION_HINT": "f32"}
    return ov.Core().compile_model(path, "CPU", config)


def openvino_run(compiled: Any, inputs: Dict[str, Any]) -> List[Any]:
    """All outputs of an OpenVINO compiled model, in order."""
    results = compiled(inputs)
    return [results[out] for out in compiled.outputs]


def print_table(
    title: str, header: List[str], rows: List[List[str]], values: Dict[str, float], lower_is_better: bool
) -> None:
    """A Markdown table, with a last column giving tripy's ratio to each contender (>1.0x: tripy is faster)
    and a line with the ratio to the best peer."""
    mine = values.get("tripy")
    header = header + ["tripy vs it"]
    for row in rows:
        theirs = values.get(row[0])
        if mine and theirs and row[0] in values:
            row.append(f"{(theirs / mine if lower_is_better else mine / theirs):.2f}x")
        else:
            row.append("")
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    peers = {n: v for n, v in values.items() if not n.startswith("tripy")}  # (not "tripy (previous)" either)
    if mine and peers:
        best = (min if lower_is_better else max)(peers, key=peers.__getitem__)
        ratio = peers[best] / mine if lower_is_better else mine / peers[best]
        print(
            f"\ntripy vs the best peer ({best}): {ratio:.2f}x ({'>= 1.0x: tripy is ahead' if ratio >= 1 else 'behind'})"
        )
