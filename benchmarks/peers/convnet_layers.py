"""Where ResNet-18's time goes, per convolution layer: each distinct convolution of ResNet-18 at batch 1 (with its
BatchNorm folded and ReLU, as in the whole network) compiled alone by tripy and by ONNX Runtime and OpenVINO (the
PyTorch layer exported to ONNX), interleaved in one process, medians; and how often the network runs each.

    benchmarks/peers/.venv/bin/python benchmarks/peers/convnet_layers.py [--rounds 20]

A single layer's program also converts its input and output between [N, C, H, W] and each engine's own layout,
which the whole network does once; the table shows where the engines' kernels differ, not the network's sum.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

import numpy as np

import tripy as tp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_utils import NotAvailable, onnx_session, openvino_model, openvino_run  # noqa: E402

# (in channels, out channels, kernel, stride, input size, how many times ResNet-18 runs it)
LAYERS = [
    (3, 64, 7, 2, 224, 1),
    (64, 64, 3, 1, 56, 4),
    (64, 128, 3, 2, 56, 1),
    (128, 128, 3, 1, 28, 3),
    (64, 128, 1, 2, 56, 1),
    (128, 256, 3, 2, 28, 1),
    (256, 256, 3, 1, 14, 3),
    (128, 256, 1, 2, 28, 1),
    (256, 512, 3, 2, 14, 1),
    (512, 512, 3, 1, 7, 3),
    (256, 512, 1, 2, 14, 1),
]


def layer_runs(cin: int, cout: int, k: int, stride: int, size: int) -> Dict[str, Callable[[], Any]]:
    rng = np.random.default_rng(0)
    pad = k // 2
    conv, bn = (
        tp.Conv(cin, cout, (k, k), padding=((pad, pad),) * 2, stride=(stride, stride), bias=False),
        tp.BatchNorm(cout),
    )
    w = (rng.normal(size=(cout, cin, k, k)) * np.sqrt(2 / (cin * k * k))).astype(np.float32)
    stats = {
        n: rng.uniform(0.5, 1.5, cout).astype(np.float32) for n in ("weight", "bias", "running_mean", "running_var")
    }
    conv.load_state_dict({"weight": w})
    bn.load_state_dict(stats)
    x = rng.normal(size=(1, cin, size, size)).astype(np.float32)
    exe = tp.compile(lambda t: tp.relu(bn(conv(t))), args=[tp.InputInfo(x.shape, tp.float32)])
    tx = tp.Tensor(x)
    runs: Dict[str, Callable[[], Any]] = {"tripy": lambda: np.from_dlpack(exe(tx))}
    try:
        import torch

        net = torch.nn.Sequential(
            torch.nn.Conv2d(cin, cout, k, stride, pad, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.ReLU()
        ).eval()
        net[0].weight.data = torch.from_numpy(w)
        for n, v in stats.items():
            getattr(net[1], n).data = torch.from_numpy(v)
        name = f"conv_{cin}_{cout}_{k}_{stride}_{size}"
        session = onnx_session(net, (torch.from_numpy(x),), ["x"], name)
        runs["onnxruntime"] = lambda: session.run(None, {"x": x})[0]
        compiled = openvino_model(net, (torch.from_numpy(x),), ["x"], name)
        runs["openvino"] = lambda: openvino_run(compiled, {"x": x})[0]
    except (ImportError, NotAvailable) as e:
        print(f"  peers n/a: {e}")
    return runs


def median_ms(runs: Dict[str, Callable[[], Any]], rounds: int) -> Dict[str, float]:
    for run in runs.values():
        run()
    times: Dict[str, List[float]] = {n: [] for n in runs}
    names = list(runs)
    for r in range(rounds):
        for n in names[r % len(names) :] + names[: r % len(names)]:
            t0 = time.perf_counter()
            runs[n]()
            times[n].append(time.perf_counter() - t0)
    return {n: statistics.median(t) * 1e3 for n, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    import jaxlib

    print(
        f"ResNet-18's convolutions (+BatchNorm, ReLU) alone, batch 1, {os.cpu_count()} cores, jaxlib {jaxlib.__version__}"
    )
    print(
        "\n| layer (in->out, kxk/stride, size) | times in net | tripy ms | ONNX Runtime ms | OpenVINO ms | tripy / best |"
    )
    print("|---|---|---|---|---|---|")
    total: Dict[str, float] = {}
    for cin, cout, k, stride, size, count in LAYERS:
        med = median_ms(layer_runs(cin, cout, k, stride, size), args.rounds)
        for n, t in med.items():
            total[n] = total.get(n, 0.0) + t * count
        peers = [t for n, t in med.items() if n != "tripy"]
        ratio = f"{med['tripy'] / min(peers):.2f}x" if peers else "n/a"
        cells = [f"{med[n]:.2f}" if n in med else "n/a" for n in ("tripy", "onnxruntime", "openvino")]
        print(
            f"| {cin}->{cout}, {k}x{k}/{stride}, {size} | {count} | " + " | ".join(cells) + f" | {ratio} |", flush=True
        )
    cells = [f"{total[n]:.1f}" if n in total else "n/a" for n in ("tripy", "onnxruntime", "openvino")]
    print("| sum over the network | 20 | " + " | ".join(cells) + " | |")


if __name__ == "__main__":
    main()
