"""Convnets at batch 1 and 8 against ONNX Runtime, OpenVINO and PyTorch (eager), with the same random weights:
ResNet-18 (1x3x224x224 and 8x3x224x224, float32, inference), ResNet-50 (1x3x224x224, bottleneck blocks) and a
small U-Net (1x3x128x128: convolutions, GroupNorm, SiLU, transposed convolutions and skip concatenations, the
building blocks of Stable Diffusion's UNet and VAE), each written with tripy's layers and, for the peers, in PyTorch (exported to ONNX).

    bash benchmarks/peers/setup.sh                       # once: the peers' environment
    benchmarks/peers/.venv/bin/python benchmarks/peers/convnet.py [--rounds 10] [--only resnet18-b1,unet-b1]

"tripy (no kernels)", where tripy-kernels is installed (scripts/kernels-deps; "tripy" then runs its oneDNN
convolutions), is the same model with XLA's own convolutions (``TRIPY_KERNELS=0``), measured in the same run.
"tripy (previous)" is the same model compiled as tripy did before channels-last convolutions, BatchNorm folding,
YNNPACK convolutions and the thunk runtime from 256K kernel elements (``TRIPY_XLA_CPU_CHANNELS_LAST=0``, the
others patched back here): their gain, measured in the same run.
Contenders run in one process, interleaved, medians reported (see gpt2.py); outputs are cross-checked.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

import tripy as tp
from tripy_backend import cpu_plan, kernels
from tripy_frontend.nn import batchnorm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_utils import NotAvailable, onnx_session, openvino_model, openvino_run, print_table  # noqa: E402

WIDTHS = (64, 128, 256, 512)
RESNET50_BLOCKS = (3, 4, 6, 3)


def _shortcut(cin: int, cout: int, stride: int) -> Optional[tp.Sequential]:
    """torchvision's downsampling shortcut (a strided 1x1 convolution and a BatchNorm), where the block needs one."""
    if stride == 1 and cin == cout:
        return None
    return tp.Sequential(tp.Conv(cin, cout, (1, 1), stride=(stride, stride), bias=False), tp.BatchNorm(cout))


class BasicBlock(tp.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = tp.Conv(cin, cout, (3, 3), padding=((1, 1), (1, 1)), stride=(stride, stride), bias=False)
        self.bn1 = tp.BatchNorm(cout)
        self.conv2 = tp.Conv(cout, cout, (3, 3), padding=((1, 1), (1, 1)), bias=False)
        self.bn2 = tp.BatchNorm(cout)
        self.downsample = _shortcut(cin, cout, stride)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        out = self.bn2(self.conv2(tp.relu(self.bn1(self.conv1(x)))))
        return tp.relu(out + (x if self.downsample is None else self.downsample(x)))


class _ResNet(tp.Module):
    """torchvision's ResNet stem, stages (`stages`: each stage's blocks) and head, with its parameter names."""

    def __init__(self, stages: List[List[tp.Module]], features: int, num_classes: int) -> None:
        super().__init__()
        self.conv1 = tp.Conv(3, 64, (7, 7), padding=((3, 3), (3, 3)), stride=(2, 2), bias=False)
        self.bn1 = tp.BatchNorm(64)
        for i, blocks in enumerate(stages):
            setattr(self, f"layer{i + 1}", tp.Sequential(*blocks))
        self.fc = tp.Linear(features, num_classes)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        x = tp.relu(self.bn1(self.conv1(x)))
        x = tp.maxpool(x, (3, 3), stride=(2, 2), padding=((1, 1), (1, 1)))
        for i in range(len(WIDTHS)):
            x = getattr(self, f"layer{i + 1}")(x)
        x = tp.mean(x, dim=(2, 3))  # global average pool
        return self.fc(x)


class ResNet18(_ResNet):
    """torchvision's resnet18 structure and parameter names."""

    def __init__(self, num_classes: int = 1000) -> None:
        stages, cin = [], 64
        for i, width in enumerate(WIDTHS):
            stages.append([BasicBlock(cin, width, 1 if i == 0 else 2), BasicBlock(width, width, 1)])
            cin = width
        super().__init__(stages, cin, num_classes)


class Bottleneck(tp.Module):
    """torchvision's ResNet-50 block (v1.5: the stride on the 3x3 convolution), expansion 4."""

    def __init__(self, cin: int, width: int, stride: int) -> None:
        super().__init__()
        cout = 4 * width
        self.conv1 = tp.Conv(cin, width, (1, 1), bias=False)
        self.bn1 = tp.BatchNorm(width)
        self.conv2 = tp.Conv(width, width, (3, 3), padding=((1, 1), (1, 1)), stride=(stride, stride), bias=False)
        self.bn2 = tp.BatchNorm(width)
        self.conv3 = tp.Conv(width, cout, (1, 1), bias=False)
        self.bn3 = tp.BatchNorm(cout)
        self.downsample = _shortcut(cin, cout, stride)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        out = tp.relu(self.bn2(self.conv2(tp.relu(self.bn1(self.conv1(x))))))
        out = self.bn3(self.conv3(out))
        return tp.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet50(_ResNet):
    """torchvision's resnet50 structure and parameter names: bottleneck blocks, 3-4-6-3."""

    def __init__(self, num_classes: int = 1000) -> None:
        stages, cin = [], 64
        for i, (width, blocks) in enumerate(zip(WIDTHS, RESNET50_BLOCKS)):
            first = Bottleneck(cin, width, 1 if i == 0 else 2)
            stages.append([first] + [Bottleneck(4 * width, width, 1) for _ in range(blocks - 1)])
            cin = 4 * width
        super().__init__(stages, cin, num_classes)


def random_weights(model: tp.Module, seed: int = 0) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    state = {}
    for name, p in model.state_dict().items():
        if name.endswith("running_var"):
            value = rng.uniform(0.5, 1.5, p.shape)
        elif ".bn" in name or name.startswith("bn") or "downsample.1" in name or ".norm" in name:
            value = rng.normal(1.0 if name.endswith("weight") else 0.0, 0.1, p.shape)
        elif len(p.shape) == 1:  # a convolution's bias
            value = rng.normal(0.0, 0.1, p.shape)
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

    stages, cin = [], 64
    for i, width in enumerate(WIDTHS):
        stages.append([Block(cin, width, 1 if i == 0 else 2), Block(width, width, 1)])
        cin = width
    return _loaded(_torch_resnet(torch, stages, cin), state)


def torch_resnet50(state: Dict[str, np.ndarray]) -> Any:
    import torch

    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin: int, width: int, stride: int) -> None:
            super().__init__()
            cout = 4 * width
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            out = torch.relu(self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))
            out = self.bn3(self.conv3(out))
            return torch.relu(out + (x if self.downsample is None else self.downsample(x)))

    stages, cin = [], 64
    for i, (width, blocks) in enumerate(zip(WIDTHS, RESNET50_BLOCKS)):
        stages.append([Block(cin, width, 1 if i == 0 else 2)] + [Block(4 * width, width, 1) for _ in range(blocks - 1)])
        cin = 4 * width
    return _loaded(_torch_resnet(torch, stages, cin), state)


def _torch_resnet(torch: Any, stages: List[List[Any]], features: int) -> Any:
    """torchvision's ResNet stem, `stages` (each stage's blocks) and head, with its parameter names."""
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            for i, blocks in enumerate(stages):
                setattr(self, f"layer{i + 1}", nn.Sequential(*blocks))
            self.fc = nn.Linear(features, 1000)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
            for i in range(len(stages)):
                x = getattr(self, f"layer{i + 1}")(x)
            return self.fc(x.mean(dim=(2, 3)))

    return Net()


def _loaded(net: Any, state: Dict[str, np.ndarray]) -> Any:
    """`net` in eval mode with `state` loaded (BatchNorm's ``num_batches_tracked`` left out), on every core."""
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    net = net.eval()
    missing, unexpected = net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()}, strict=False)
    assert not unexpected and all(k.endswith("num_batches_tracked") for k in missing), (missing, unexpected)
    return net


class ConvBlock(tp.Module):
    """Two 3x3 convolutions, each followed by GroupNorm (8 groups) and SiLU."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1 = tp.Conv(cin, cout, (3, 3), padding=((1, 1), (1, 1)))
        self.norm1 = tp.GroupNorm(8, cout)
        self.conv2 = tp.Conv(cout, cout, (3, 3), padding=((1, 1), (1, 1)))
        self.norm2 = tp.GroupNorm(8, cout)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        return tp.silu(self.norm2(self.conv2(tp.silu(self.norm1(self.conv1(x))))))


class UNet(tp.Module):
    """Two levels down (strided convolutions), two up (transposed convolutions), skip concatenations."""

    def __init__(self, c: int = 32) -> None:
        super().__init__()
        self.enc1, self.down1 = ConvBlock(3, c), tp.Conv(c, 2 * c, (3, 3), padding=((1, 1), (1, 1)), stride=(2, 2))
        self.enc2, self.down2 = (
            ConvBlock(2 * c, 2 * c),
            tp.Conv(2 * c, 4 * c, (3, 3), padding=((1, 1), (1, 1)), stride=(2, 2)),
        )
        self.mid = ConvBlock(4 * c, 4 * c)
        self.up2, self.dec2 = tp.ConvTranspose(4 * c, 2 * c, (2, 2), stride=(2, 2)), ConvBlock(4 * c, 2 * c)
        self.up1, self.dec1 = tp.ConvTranspose(2 * c, c, (2, 2), stride=(2, 2)), ConvBlock(2 * c, c)
        self.out = tp.Conv(c, 3, (1, 1))

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(self.down1(e1))
        m = self.mid(self.down2(e2))
        d2 = self.dec2(tp.concatenate([self.up2(m), e2], dim=1))
        d1 = self.dec1(tp.concatenate([self.up1(d2), e1], dim=1))
        return self.out(d1)


def torch_unet(state: Dict[str, np.ndarray], c: int = 32) -> Any:
    import torch

    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int) -> None:
            super().__init__()
            self.conv1, self.norm1 = nn.Conv2d(cin, cout, 3, 1, 1), nn.GroupNorm(8, cout)
            self.conv2, self.norm2 = nn.Conv2d(cout, cout, 3, 1, 1), nn.GroupNorm(8, cout)

        def forward(self, x: Any) -> Any:
            return F.silu(self.norm2(self.conv2(F.silu(self.norm1(self.conv1(x))))))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc1, self.down1 = Block(3, c), nn.Conv2d(c, 2 * c, 3, 2, 1)
            self.enc2, self.down2 = Block(2 * c, 2 * c), nn.Conv2d(2 * c, 4 * c, 3, 2, 1)
            self.mid = Block(4 * c, 4 * c)
            self.up2, self.dec2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2), Block(4 * c, 2 * c)
            self.up1, self.dec1 = nn.ConvTranspose2d(2 * c, c, 2, 2), Block(2 * c, c)
            self.out = nn.Conv2d(c, 3, 1)

        def forward(self, x: Any) -> Any:
            e1 = self.enc1(x)
            e2 = self.enc2(self.down1(e1))
            m = self.mid(self.down2(e2))
            d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
            return self.out(self.dec1(torch.cat([self.up1(d2), e1], 1)))

    net = Net().eval()
    net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    return net


# name -> (tripy model, PyTorch model from the same state, input shape)
WORKLOADS: Dict[str, Tuple[Callable[[], tp.Module], Callable[[Dict[str, np.ndarray]], Any], Tuple[int, ...]]] = {
    "resnet18-b1": (ResNet18, lambda s: torch_resnet18(s), (1, 3, 224, 224)),
    "resnet18-b8": (ResNet18, lambda s: torch_resnet18(s), (8, 3, 224, 224)),
    "resnet50-b1": (ResNet50, torch_resnet50, (1, 3, 224, 224)),
    "unet-b1": (UNet, torch_unet, (1, 3, 128, 128)),
}


@contextlib.contextmanager
def previous_code() -> Iterator[None]:
    """Compile as tripy did before: convolutions in the layout of the program, BatchNorm not folded, XLA:CPU's
    default choice of YNNPACK fusions, the thunk runtime from 1M kernel elements, no native kernels."""
    old_env, old_fold, old_accepts = (
        os.environ.get("TRIPY_XLA_CPU_CHANNELS_LAST"),
        batchnorm.scaled_convolution,
        cpu_plan._xla.accepts_cpu_option,
    )
    old_kernels = cpu_plan.CONVOLUTION_KERNEL_ELEMENTS
    os.environ["TRIPY_XLA_CPU_CHANNELS_LAST"] = "0"
    batchnorm.scaled_convolution = lambda x, scale: None  # type: ignore[assignment]
    cpu_plan._xla.accepts_cpu_option = lambda name, value: False  # type: ignore[assignment]
    cpu_plan.CONVOLUTION_KERNEL_ELEMENTS = 1 << 20
    try:
        with no_kernels():
            yield
    finally:
        batchnorm.scaled_convolution, cpu_plan._xla.accepts_cpu_option = old_fold, old_accepts  # type: ignore[assignment]
        cpu_plan.CONVOLUTION_KERNEL_ELEMENTS = old_kernels
        if old_env is None:
            del os.environ["TRIPY_XLA_CPU_CHANNELS_LAST"]
        else:
            os.environ["TRIPY_XLA_CPU_CHANNELS_LAST"] = old_env


@contextlib.contextmanager
def no_kernels() -> Iterator[None]:
    """Compile without tripy-kernels' oneDNN convolutions (``TRIPY_KERNELS=0``): XLA's own."""
    old = os.environ.get(kernels.ENV_VAR)
    os.environ[kernels.ENV_VAR] = "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ[kernels.ENV_VAR]
        else:
            os.environ[kernels.ENV_VAR] = old


def contenders(name: str) -> Tuple[Dict[str, Callable[[], Any]], Dict[str, str]]:
    """(name -> a call running one inference, name -> why a peer is missing) for one workload."""
    make, make_torch, shape = WORKLOADS[name]
    model = make()
    state = random_weights(model)
    model.load_state_dict(state)
    x = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    tx = tp.Tensor(x)
    runs: Dict[str, Callable[[], Any]] = {}
    missing: Dict[str, str] = {}
    start = time.perf_counter()
    exe = tp.compile(model, args=[tp.InputInfo(shape, tp.float32)])
    runs["tripy"] = lambda: np.from_dlpack(exe(tx))
    with previous_code():
        before = tp.compile(model, args=[tp.InputInfo(shape, tp.float32)])
    runs["tripy (previous)"] = lambda: np.from_dlpack(before(tx))
    if kernels.enabled():  # (tripy-kernels installed: "tripy" is with its oneDNN convolutions, this without)
        with no_kernels():
            plain = tp.compile(model, args=[tp.InputInfo(shape, tp.float32)])
        runs["tripy (no kernels)"] = lambda: np.from_dlpack(plain(tx))
    print(f"  {name}: tripy compiled in {time.perf_counter() - start:.1f} s", flush=True)
    try:
        import torch

        net, xt = make_torch(state), torch.from_numpy(x)

        def run_torch() -> Any:
            with torch.inference_mode():
                return net(xt).numpy()

        runs["pytorch"] = run_torch
        session = onnx_session(net, (xt,), ["x"], name)
        runs["onnxruntime"] = lambda: session.run(None, {"x": x})[0]
        compiled = openvino_model(net, (xt,), ["x"], name)
        runs["openvino"] = lambda: openvino_run(compiled, {"x": x})[0]
    except (ImportError, NotAvailable) as e:
        for peer in ("pytorch", "onnxruntime", "openvino"):
            if peer not in runs:
                missing[peer] = str(e)
    return runs, missing


def measure(runs: Dict[str, Callable[[], Any]], rounds: int, settle: float) -> Dict[str, float]:
    """Cross-check the outputs, then median seconds per call, contenders interleaved in rotating order."""
    outputs = {name: np.asarray(run()) for name, run in runs.items()}
    for name, out in outputs.items():
        diff = float(np.abs(out - outputs["tripy"]).max() / np.abs(outputs["tripy"]).max())
        if diff > 1e-3:
            raise SystemExit(f"tripy and {name} disagree (max relative difference {diff:.2e})")
    for _ in range(2):
        for run in runs.values():
            run()
    times: Dict[str, List[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            time.sleep(settle)
            t0 = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--settle", type=float, default=0.2, help="pause before each timed run (s)")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    args = parser.parse_args()
    import jaxlib

    print(f"Convnets, float32, random weights, CPU with {os.cpu_count()} cores, jaxlib {jaxlib.__version__}")
    summary = []
    for name in args.only.split(","):
        runs, missing = contenders(name)
        med = measure(runs, args.rounds, args.settle)
        rows = [[n, f"{t * 1e3:.1f}"] for n, t in med.items()] + [[n, f"n/a ({why})"] for n, why in missing.items()]
        print_table(
            f"{name} ({'x'.join(map(str, WORKLOADS[name][2]))}), median of {args.rounds}",
            ["contender", "ms"],
            rows,
            med,
            lower_is_better=True,
        )
        peers = [t for n, t in med.items() if n in ("onnxruntime", "openvino")]
        best = f"{med['tripy'] / min(peers):.2f}x" if peers else "n/a"
        summary.append(
            [name]
            + [
                f"{med[n] * 1e3:.1f}" if n in med else "n/a"
                for n in ("tripy", "tripy (no kernels)", "tripy (previous)", "onnxruntime", "openvino", "pytorch")
            ]
            + [best]
        )
    print(
        "\n| workload | tripy ms | tripy (no kernels) ms | tripy (previous) ms | ONNX Runtime ms | OpenVINO ms | "
        "PyTorch ms | tripy / best of ONNX Runtime and OpenVINO |\n|---|---|---|---|---|---|---|---|"
    )
    for row in summary:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
