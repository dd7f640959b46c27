"""Models imported from PyTorch (``tp.from_torch``) against the engines that take the same ``nn.Module``: PyTorch
eager, ``torch.compile``, ONNX Runtime (the ``torch.onnx`` export) and OpenVINO (``openvino.convert_model`` of the
module; where that fails, OpenVINO compiling the ONNX export, and the run says so). Random weights (seed 0),
float32, batch 1, one process, contenders interleaved, medians.

    bash benchmarks/peers/setup.sh                       # once: the peers' environment
    benchmarks/peers/.venv/bin/python benchmarks/peers/importers.py [--rounds 10] [--only bert,gpt2]

Models: ResNet-50 (1x3x224x224), a BERT-base-sized encoder and a GPT-2-small-sized decoder (sequence 128), built
from ``transformers`` configs. The second table is the time to get a runnable model: tripy's import + compile
(one static shape) beside each peer's conversion and session creation.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

import tripy as tp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_utils import NotAvailable, onnx_file, onnx_session, print_table  # noqa: E402


def _models() -> Dict[str, Tuple[Callable[[], Any], Callable[[Any], Tuple[Any, ...]], List[str]]]:
    import transformers as T

    def ids(torch: Any) -> Tuple[Any, ...]:
        return (torch.from_numpy(np.random.default_rng(0).integers(0, 30000, (1, 128))),)

    return {
        "resnet50": (
            lambda: T.ResNetModel(T.ResNetConfig()),
            lambda torch: (
                torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)),
            ),
            ["pixel_values"],
        ),
        "bert": (lambda: T.BertModel(T.BertConfig(), add_pooling_layer=False), ids, ["input_ids"]),
        "gpt2": (lambda: T.GPT2Model(T.GPT2Config(use_cache=False)), ids, ["input_ids"]),
    }


def _first(out: Any) -> np.ndarray:
    import torch

    leaves = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
    return leaves[0].detach().numpy() if leaves else np.asarray(out[0])


def _contenders(model: Any, args: Tuple[Any, ...], names: List[str], name: str) -> Dict[str, Tuple[float, Any]]:
    """name -> (seconds to get it ready, a call returning the first output as NumPy)."""
    import torch

    ready: Dict[str, Tuple[float, Any]] = {}
    started = time.perf_counter()
    imported = tp.from_torch(torch.export.export(model, args))
    exe = tp.compile(imported, args=imported.input_infos)
    tp_args = [tp.Tensor(a) for a in args]
    ready["tripy"] = (time.perf_counter() - started, lambda: np.from_dlpack(_tp_first(exe(*tp_args))))
    ready["PyTorch eager"] = (0.0, lambda: _first(_no_grad(model, args)))
    started = time.perf_counter()
    compiled = torch.compile(model)
    _no_grad(compiled, args)
    ready["torch.compile"] = (time.perf_counter() - started, lambda: _first(_no_grad(compiled, args)))
    for peer, make in (("ONNX Runtime", _onnxruntime), ("OpenVINO", _openvino)):
        try:
            started = time.perf_counter()
            run = make(model, args, names, name)
            ready[peer] = (time.perf_counter() - started, run)
        except NotAvailable as e:
            print(f"{peer}: n/a ({e})")
    return ready


def _tp_first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def _no_grad(model: Any, args: Tuple[Any, ...]) -> Any:
    import torch

    with torch.no_grad():
        return model(*args)


def _onnxruntime(model: Any, args: Tuple[Any, ...], names: List[str], name: str) -> Callable[[], Any]:
    session = onnx_session(model, args, names, f"importers-{name}")
    feeds = {n: a.numpy() for n, a in zip(names, args)}
    return lambda: session.run(None, feeds)[0]


def _openvino(model: Any, args: Tuple[Any, ...], names: List[str], name: str) -> Callable[[], Any]:
    try:
        import openvino as ov
    except ImportError as e:
        raise NotAvailable(f"not installed: {e} (optional: pip install openvino)") from None
    try:
        converted = ov.convert_model(model, example_input=args)
    except Exception as e:  # (its PyTorch frontend lacks some operators: GPT-2's aten::diff in OpenVINO 2026.4)
        print(
            f"OpenVINO: convert_model of the module failed ({str(e).strip().splitlines()[-1]}); "
            "it compiles the ONNX export instead"
        )
        converted = onnx_file(model, args, names, f"importers-{name}")
    config = {"INFERENCE_NUM_THREADS": os.cpu_count() or 1, "INFERENCE_PRECISION_HINT": "f32"}
    compiled = ov.Core().compile_model(converted, "CPU", config)
    inputs = [a.numpy() for a in args]
    return lambda: compiled(inputs)[compiled.outputs[0]]


def run(name: str, rounds: int) -> None:
    import torch

    build, make_args, names = _models()[name]
    torch.manual_seed(0)
    model = build().eval()
    args = make_args(torch)
    ready = _contenders(model, args, names, name)
    expected = _first(_no_grad(model, args))
    for peer, (_, call) in ready.items():
        got = np.asarray(call())
        error = float(np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-6))
        assert error < 1e-3, f"{name}: {peer}'s output differs from PyTorch's ({error:.1e} of its scale)"
    times: Dict[str, List[float]] = {peer: [] for peer in ready}
    for _ in range(rounds):
        for peer, (_, call) in ready.items():
            started = time.perf_counter()
            call()
            times[peer].append(time.perf_counter() - started)
    medians = {peer: statistics.median(t) * 1e3 for peer, t in times.items()}
    print_table(
        f"{name}, batch 1: ms per call (median of {rounds}, interleaved)",
        ["contender", "ms"],
        [[peer, f"{ms:.1f}"] for peer, ms in medians.items()],
        medians,
        lower_is_better=True,
    )
    setup = {peer: s for peer, (s, _) in ready.items() if s > 0}
    print_table(
        f"{name}: seconds until the model runs (tripy: import + compile)",
        ["contender", "s"],
        [[peer, f"{s:.1f}"] for peer, s in setup.items()],
        setup,
        lower_is_better=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--only", default="resnet50,bert,gpt2")
    options = parser.parse_args()
    for name in options.only.split(","):
        run(name, options.rounds)


if __name__ == "__main__":
    main()
