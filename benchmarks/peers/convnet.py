"""A ResNet-18 (1x3x224x224, float32, inference) written with tripy's layers, against PyTorch (eager), ONNX
Runtime and OpenVINO (the same network exported from PyTorch to ONNX), with the same random weights.

    bash benchmarks/peers/setup.sh                       # once: the peers' environment
    benchmarks/peers/.venv/bin/python benchmarks/peers/convnet.py [--rounds 10]

Contenders run in one process, interleaved, medians reported (see gpt2.py); outputs are cross-checked.
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
from peer_utils import NotAvailable, onnx_session, openvino_model, openvino_run, print_table  # noqa: E402

WIDTHS = (64, 128, 256, 512)


class BasicBlock(tp.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = tp.Conv(cin, cout, (3, 3), padding=((1, 1), (1, 1)), stride=(stride, stride), bias=False)
        self.bn1 = tp.BatchNorm(cout)
        self.conv2 = tp.Conv(cout, cout, (3, 3), padding=((1, 1), (1, 1)), bias=False)
        self.bn2 = tp.BatchNorm(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = tp.Sequential(tp.Conv(cin, cout, (1, 1), stride=(stride, stride), bias=False),
                                            tp.BatchNorm(cout))

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        out = self.bn2(self.conv2(tp.relu(self.bn1(self.conv1(x)))))
        return tp.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet18(tp.Module):
    """torchvision's resnet18 structure and parameter names."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = tp.Conv(3, 64, (7, 7), padding=((3, 3), (3, 3)), stride=(2, 2), bias=False)
        self.bn1 = tp.BatchNorm(64)
        cin = 64
        for i, width in enumerate(WIDTHS):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", tp.Sequential(BasicBlock(cin, width, stride), BasicBlock(width, width, 1)))
            cin = width
        self.fc = tp.Linear(512, num_classes)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        x = tp.relu(self.bn1(self.conv1(x)))
        x = tp.maxpool(x, (3, 3), stride=(2, 2), padding=((1, 1), (1, 1)))
        for i in range(len(WIDTHS)):
            x = getattr(self, f"layer{i + 1}")(x)
        x = tp.mean(x, dim=(2, 3))  # global average pool
        return self.fc(x)


def random_weights(model: tp.Module, seed: int = 0) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    state = {}
    for name, p in model.state_dict().items():
        if name.endswith("running_var"):
            value = rng.uniform(0.5, 1.5, p.shape)
        elif ".bn" in name or name.startswith("bn") or "downsample.1" in name:
            value = rng.normal(1.0 if name.endswith("weight") else 0.0, 0.1, p.shape)
        else:  # He initialization keeps the activations' scale through the 18 layers
            fan_in = int(np.prod(p.shape[1:])) or 1
            value = rng.normal(0.0, np.sqrt(2.0 / fan_in), p.shape)
        state[name] = value.astype(np.float32)
    return state


def torch_resnet18(state: Dict[str, np.ndarray]) -> Any:
    try:
        import torch
    except ImportError as e:
        raise NotAvailable(f"not installed: {e}") from None
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            out = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
            return torch.relu(out + (x if self.downsample is None else self.downsample(x)))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            cin = 64
            for i, width in enumerate(WIDTHS):
                setattr(self, f"layer{i + 1}", nn.Sequential(Block(cin, width, 1 if i == 0 else 2), Block(width, width, 1)))
                cin = width
            self.fc = nn.Linear(512, 1000)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
            for i in range(len(WIDTHS)):
                x = getattr(self, f"layer{i + 1}")(x)
            return self.fc(x.mean(dim=(2, 3)))

    torch.set_num_threads(os.cpu_count() or 1)
    net = Net().eval()
    missing, unexpected = net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()}, strict=False)
    assert not unexpected and all(k.endswith("num_batches_tracked") for k in missing), (missing, unexpected)
    return net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--settle", type=float, default=0.2, help="pause before each timed run (s)")
    args = parser.parse_args()
    print(f"ResNet-18, 1x3x224x224, float32, random weights, CPU with {os.cpu_count()} cores")
    model = ResNet18()
    state = random_weights(model)
    model.load_state_dict(state)
    x = np.random.default_rng(1).normal(size=(1, 3, 224, 224)).astype(np.float32)

    runs: Dict[str, Callable[[], Any]] = {}
    missing: Dict[str, str] = {}
    start = time.perf_counter()
    exe = tp.compile(model, args=[tp.InputInfo(x.shape, tp.float32)])
    tx = tp.Tensor(x)
    runs["tripy"] = lambda: np.from_dlpack(exe(tx))
    print(f"  tripy: compiled in {time.perf_counter() - start:.1f} s", flush=True)
    try:
        import torch

        net = torch_resnet18(state)
        xt = torch.from_numpy(x)

        def run_torch() -> Any:
            with torch.inference_mode():
                return net(xt).numpy()
        runs["pytorch"] = run_torch
        session = onnx_session(net, (xt,), ["x"], "resnet18")
        runs["onnxruntime"] = lambda: session.run(None, {"x": x})[0]
    except (ImportError, NotAvailable) as e:
        for name in ("pytorch", "onnxruntime"):
            if name not in runs:
                missing[name] = f"not installed: {e}"
    try:
        compiled = openvino_model(net, (xt,), ["x"], "resnet18")
        runs["openvino"] = lambda: openvino_run(compiled, {"x": x})[0]
    except (NameError, NotAvailable) as e:  # (NameError: no torch to export with)
        missing["openvino"] = str(e) if isinstance(e, NotAvailable) else "no torch for the ONNX export"

    outputs = {name: np.asarray(run()) for name, run in runs.items()}
    for name, out in outputs.items():
        diff = float(np.abs(out - outputs["tripy"]).max() / np.abs(outputs["tripy"]).max())
        if diff > 1e-3:
            raise SystemExit(f"tripy and {name} disagree (max relative difference {diff:.2e})")
    times: Dict[str, List[float]] = {name: [] for name in runs}
    names = list(runs)
    for _ in range(2):
        for run in runs.values():
            run()
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            time.sleep(args.settle)
            t0 = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(t) for name, t in times.items()}
    rows = [[name, f"{t * 1e3:.1f}"] for name, t in med.items()] + [[n, f"n/a ({why})"] for n, why in missing.items()]
    print_table(f"ResNet-18 (1x3x224x224), median of {args.rounds}", ["contender", "ms"], rows, med, lower_is_better=True)


if __name__ == "__main__":
    main()
