"""Compile once for a range: the range executable (bounded programs, see tripy_backend.ranges) against
a program compiled for exactly each shape.

Per size: median per-call time of the range executable and of an executable compiled for exactly that
shape (interleaved), their ratio, the geomean over the sizes and the worst case; then tp.compile time
of the range against one static compile. Workloads: an MLP (64 -> 128 -> 64, GELU) for batch 1..64;
vision families (a small CNN, convolution, pooling, resize, flip, top-k) over a batch range, where bounded
programs keep them padded, and over image-size and sorted-dim ranges, where each size gets a static
program of its own; and GPT-2 small (`examples/gpt2`, batch 1, greedy next-token step) for sequence
lengths 1..1024.

    uv run python benchmarks/compile_once.py                   # MLP (every batch size 1..64), vision
    uv run python benchmarks/compile_once.py --gpt2 1 5 100    # GPT-2 small at these lengths too (slow)
    uv run python benchmarks/compile_once.py --only "image side"   # the workloads with this in their names
    uv run python benchmarks/compile_once.py --bounded         # bounded programs even for cheap programs
    uv run python benchmarks/compile_once.py --ready [softmax mlp gpt2 resnet18]   # the compile-time table

``--ready``: how soon ``tp.compile`` of a range returns (every shape can run; the rest of the plan compiles in the
background) and how soon the whole plan is ready, against one static compile of the same program in the same
run, and the per-call time of the range executable against a program compiled for exactly each size, before the
plan is ready (while it compiles) and after (geomean over the sizes). Workloads: softmax over 1..64 rows, an MLP
(64-128-64) over batch 1..64, GPT-2 small over 1..1024 tokens, ResNet-18 over batch 1..32. On a tripy whose
``tp.compile`` waits for the whole plan (no ``Executable.wait``), return and ready times are the same.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time
from typing import Any, Callable, List, Sequence, Tuple

import numpy as np

import tripy as tp
import tripy_backend
from tripy_backend import range_plan
from _harness import median_time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "gpt2"))


ONLY: List[str] = []  # --only: the workloads whose names contain one of these


def _interleaved(exe: Any, exact: Any, x: Any, repeats: int) -> Tuple[float, float]:
    """Mean over 3 interleaved rounds of the median time of `exe(x)` and of `exact(x)`, each until its result can
    be read (XLA may still be running a padded call's program when the call returns)."""
    r = e = 0.0
    for _ in range(3):
        r += median_time(lambda: np.asarray(exe(x)), repeats)
        e += median_time(lambda: np.asarray(exact(x)), repeats)
    return r / 3, e / 3


def compare(
    name: str,
    func: Any,
    info: Callable[[Any], tp.InputInfo],
    lo: int,
    opt: int,
    hi: int,
    sizes: Sequence[int],
    make_input: Callable[[int], np.ndarray],
    repeats: int,
) -> None:
    if ONLY and not any(word in name for word in ONLY):
        return
    start = time.perf_counter()
    ranged = tp.compile(func, args=[info((lo, opt, hi))], wait=True)  # (the whole plan: --ready times its parts)
    range_compile = time.perf_counter() - start
    start = time.perf_counter()
    tp.compile(func, args=[info(opt)])
    static_compile = time.perf_counter() - start
    print(
        f"\n{name}: tp.compile for sizes {lo}..{hi}: {range_compile:.2f} s; one static compile (size {opt}): "
        f"{static_compile:.2f} s ({range_compile / static_compile:.1f}x)"
    )
    ratios: List[Tuple[float, int, float, float]] = []
    first_calls: List[Tuple[float, int]] = []  # (first call / later calls, size) of the range executable
    compiled_in_calls = 0
    for n in sizes:
        x = tp.Tensor(make_input(n))
        before = tripy_backend.compilation_count()
        first = median_time(lambda: np.asarray(ranged(x)), 1)
        compiled_in_calls += tripy_backend.compilation_count() - before
        exact = tp.compile(func, args=[info(n)])  # (after the first call: a compile leaves the CPU caches cold)
        exact(x).eval()
        r, e = _interleaved(ranged, exact, x, repeats)
        ratios.append((r / e, n, r, e))
        first_calls.append((first / r, n))
    geomean = math.exp(sum(math.log(r) for r, _, _, _ in ratios) / len(ratios))
    worst = max(ratios)
    for r, n, rt, et in ratios if len(ratios) <= 16 else []:
        print(f"  size {n:5d}: range {rt * 1e6:10.1f} us, exact {et * 1e6:10.1f} us, {r:.2f}x")
    print(
        f"  per call, range / exact shape over {len(ratios)} sizes: geomean {geomean:.2f}x (target <= 1.5x), "
        f"worst {worst[0]:.2f}x at size {worst[1]} ({worst[2] * 1e6:.0f} us vs {worst[3] * 1e6:.0f} us)"
    )
    slowest_first = max(first_calls)
    typical_first = statistics.median(r for r, _ in first_calls)
    print(
        f"  compilations during the range executable's calls: {compiled_in_calls}; its first call at a size "
        f"took {typical_first:.1f}x its later calls (median over sizes), at most {slowest_first[0]:.1f}x "
        f"(size {slowest_first[1]})"
    )


class MLP(tp.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = tp.Linear(64, 128)
        self.fc2 = tp.Linear(128, 64)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        return self.fc2(tp.gelu(self.fc1(x)))


class SmallCNN(tp.Module):
    """Conv, BatchNorm, ReLU, maxpool, Linear on 3x32x32 images (enough work that it is not a cheap program:
    its batch runs padded in bounded programs)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = tp.Conv(3, 32, (3, 3), padding=((1, 1), (1, 1)))
        self.bn = tp.BatchNorm(32)
        self.fc = tp.Linear(32 * 16 * 16, 10)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        y = tp.maxpool(tp.relu(self.bn(self.conv(x))), (2, 2), (2, 2))
        return self.fc(tp.reshape(y, (y.shape[0], 32 * 16 * 16)))


def vision(rng: np.random.Generator, repeats: int) -> None:
    def images(channels: int) -> Callable[[int], np.ndarray]:
        return lambda n: rng.standard_normal((n, channels, 32, 32)).astype(np.float32)

    def square(n: int) -> np.ndarray:
        return rng.standard_normal((2, 3, n, n)).astype(np.float32)

    def batch(channels: int) -> Callable[[Any], tp.InputInfo]:
        return lambda b: tp.InputInfo((b, channels, 32, 32), tp.float32)

    def side(s: Any) -> tp.InputInfo:
        d = tp.NamedDimension("side", *s) if isinstance(s, tuple) else s
        return tp.InputInfo((2, 3, d, d), tp.float32)

    cnn = SmallCNN()
    cnn.initialize_dummy_parameters()
    conv = tp.Conv(16, 32, (3, 3), padding=((1, 1), (1, 1)))
    conv.initialize_dummy_parameters()
    conv3 = tp.Conv(3, 16, (3, 3), padding=((1, 1), (1, 1)))
    conv3.initialize_dummy_parameters()
    batches = [1, 3, 5, 12, 20, 32]
    compare("small CNN (3x32x32 images), batch 1..32", cnn, batch(3), 1, 4, 32, batches, images(3), repeats)
    compare("conv 3x3 (16 -> 32 channels, 32x32), batch 1..32", conv, batch(16), 1, 4, 32, batches, images(16), repeats)
    compare(
        "maxpool 2x2 (3x32x32), batch 1..32",
        lambda x: tp.maxpool(x, (2, 2), (2, 2)),
        batch(3),
        1,
        4,
        32,
        batches,
        images(3),
        repeats,
    )
    compare(
        "resize linear x2 (3x32x32), batch 1..32",
        lambda x: tp.resize(x, scales=(1, 1, 2, 2)),
        batch(3),
        1,
        4,
        32,
        batches,
        images(3),
        repeats,
    )
    compare(
        "flip H and W (3x32x32), batch 1..32",
        lambda x: tp.flip(x, dim=(2, 3)),
        batch(3),
        1,
        4,
        32,
        batches,
        images(3),
        repeats,
    )
    sides = [16, 19, 23, 24, 28, 32]
    for name, func in (
        ("conv 3x3 (3 -> 16)", conv3),
        ("maxpool 2x2", lambda x: tp.maxpool(x, (2, 2), (2, 2))),
        ("avgpool 3x3, padded", lambda x: tp.avgpool(x, (3, 3), (1, 1), ((1, 1), (1, 1)))),
        ("pad 2 (constant)", lambda x: tp.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)))),
        ("resize linear x2", lambda x: tp.resize(x, scales=(1, 1, 2, 2))),
        ("resize nearest x2", lambda x: tp.resize(x, scales=(1, 1, 2, 2), mode="nearest")),
        ("flip H and W", lambda x: tp.flip(x, dim=(2, 3))),
    ):
        compare(f"{name}, image side 16..32", func, side, 16, 24, 32, sides, square, repeats)
    compare(
        "topk (k=4) over a dynamic dim 8..64",
        lambda x: tp.topk(x, 4, dim=1)[0],
        lambda n: tp.InputInfo((16, n), tp.float32),
        8,
        16,
        64,
        [8, 13, 16, 30, 47, 64],
        lambda n: rng.standard_normal((16, n)).astype(np.float32),
        repeats,
    )


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _call_ratio(exe: Any, exact: Any, x: Any, repeats: int) -> float:
    r, e = _interleaved(exe, exact, x, repeats)
    return r / e


def readiness(
    name: str,
    make: Callable[[], Any],
    info: Callable[[Any], tp.InputInfo],
    lo: int,
    opt: int,
    hi: int,
    sizes: Sequence[int],
    make_input: Callable[[int], np.ndarray],
    repeats: int,
) -> List[str]:
    """One row of the ``--ready`` table (see the module docstring). `make()` gives the workload, with weights of its
    own each time: the static and the range compile are each timed as the first compile of their weights (tp.compile
    keeps what it evaluates from baked-in data, such as transposed weights, for later executables of the same ones),
    after the process has compiled the programs that evaluate each one's baked-in data (once per process)."""
    func = make()
    # (first: their compiles do not compete, and they take the process's one-time costs off the timed compiles,
    # among them the compile of the program that evaluates the static compile's baked-in data: opt's first; the
    # range's, where it differs, with a range compile of weights of its own)
    exacts = {n: tp.compile(func, args=[info(n)]) for n in dict.fromkeys([opt, *sizes])}
    tp.compile(make(), args=[info((lo, opt, hi))], wait=True)
    inputs = {n: tp.Tensor(make_input(n)) for n in sizes}
    func = make()
    gc.collect()  # (the earlier workloads' garbage: not this compile's work)
    start = time.perf_counter()
    tp.compile(func, args=[info(opt)])
    static = time.perf_counter() - start
    func = make()
    gc.collect()
    start = time.perf_counter()
    exe = tp.compile(func, args=[info((lo, opt, hi))])
    returned = time.perf_counter() - start
    if hasattr(exe, "wait"):
        exe.wait()
    ready = time.perf_counter() - start
    # Before the plan is ready: a new executable, called at once while its plan compiles.
    early = tp.compile(func, args=[info((lo, opt, hi))])
    before = []
    for n in sizes:
        if getattr(early, "ready", True):
            break
        before.append(_call_ratio(early, exacts[n], inputs[n], max(1, repeats // 4)))
    for n in sizes:  # (a cheap program's calls bring their shapes' static programs: once ready, they run)
        exe(inputs[n]).eval()
    if hasattr(exe, "wait"):
        exe.wait()
    after = [_call_ratio(exe, exacts[n], inputs[n], repeats) for n in sizes]
    if hasattr(early, "wait"):  # (its plan's compiles must not run into the next workload's timings)
        early.wait()
    row = [
        name,
        f"{static:.2f} s",
        f"{returned:.2f} s ({returned / static:.2f}x)",
        f"{ready:.2f} s ({ready / static:.1f}x)",
        f"{_geomean(before):.2f}x over {len(before)}" if before else "(ready at once)",
        f"{_geomean(after):.2f}x (worst {max(after):.2f}x)",
    ]
    print("  ".join(row), flush=True)
    return row


def ready_table(names: Sequence[str], repeats: int) -> None:
    rng = np.random.default_rng(0)
    tp.compile(lambda a: a + 1.0, args=[tp.InputInfo((2, 2), tp.float32)])  # (XLA's one-time set-up)
    rows = []
    rows_of = {
        "softmax": lambda: readiness(
            "softmax, rows 1..64",
            lambda: lambda a: tp.softmax(a, dim=1),
            lambda b: tp.InputInfo((b, 10), tp.float32),
            1,
            8,
            64,
            list(range(1, 65, 3)) + [64],
            lambda n: rng.standard_normal((n, 10)).astype(np.float32),
            repeats,
        ),
        "mlp": lambda: readiness(
            "MLP 64-128-64, batch 1..64",
            lambda: _dummy(MLP()),
            lambda b: tp.InputInfo((b, 64), tp.float32),
            1,
            8,
            64,
            list(range(1, 65, 3)) + [64],
            lambda n: rng.standard_normal((n, 64)).astype(np.float32),
            repeats,
        ),
        "gpt2": lambda: _gpt2_row(rng, repeats),
        "resnet18": lambda: _resnet_row(rng, repeats),
    }
    for name in names:
        rows.append(rows_of[name]())
    header = [
        "workload",
        "static compile",
        "tp.compile returns",
        "whole plan ready",
        "per call, before ready",
        "per call, once ready",
    ]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    print()
    for r in [header] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def _dummy(module: Any) -> Any:
    module.initialize_dummy_parameters()
    return module


def _gpt2_row(rng: np.random.Generator, repeats: int) -> List[str]:
    from model import GPT, GPTConfig, random_state_dict

    config = GPTConfig()

    def make() -> Any:
        model = GPT(config)
        model.load_state_dict(random_state_dict(config))
        return lambda idx: tp.argmax(model(idx), dim=-1)

    return readiness(
        "GPT-2 small, tokens 1..1024",
        make,
        lambda t: tp.InputInfo((1, t), tp.int32),
        1,
        64,
        config.block_size,
        [1, 5, 17, 64, 100, 300, 700, 1000],
        lambda n: rng.integers(0, config.vocab_size, (1, n)).astype(np.int32),
        max(3, repeats // 10),
    )


def _resnet_row(rng: np.random.Generator, repeats: int) -> List[str]:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
    from convnet import ResNet18, random_weights

    def make() -> Any:
        model = ResNet18()
        model.load_state_dict(random_weights(model))
        return model

    return readiness(
        "ResNet-18, batch 1..32",
        make,
        lambda b: tp.InputInfo((b, 3, 224, 224), tp.float32),
        1,
        8,
        32,
        [1, 2, 3, 5, 8, 13, 20, 32],
        lambda n: rng.standard_normal((n, 3, 224, 224)).astype(np.float32),
        max(3, repeats // 10),
    )


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpt2", type=int, nargs="*", help="also GPT-2 small at these sequence lengths")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--ready", nargs="*", help="the compile-time table for these workloads (default: all four)")
    parser.add_argument("--only", nargs="*", default=[], help="only the workloads whose names contain one of these")
    parser.add_argument(
        "--bounded",
        action="store_true",
        help="bounded programs only: no static programs for the sizes nearest opt, cheap or not",
    )
    args = parser.parse_args(list(argv) or None)
    if args.ready is not None:
        ready_table(args.ready or ["softmax", "mlp", "gpt2", "resnet18"], args.repeats)
        return
    ONLY[:] = args.only
    if args.bounded:
        range_plan.EXACT_SIZES = 0
    rng = np.random.default_rng(0)

    mlp = MLP()
    mlp.initialize_dummy_parameters()
    compare(
        "MLP 64-128-64",
        mlp,
        lambda b: tp.InputInfo((b, 64), tp.float32),
        1,
        8,
        64,
        range(1, 65),
        lambda n: rng.standard_normal((n, 64)).astype(np.float32),
        args.repeats,
    )
    vision(rng, args.repeats)

    if args.gpt2:
        from model import GPT, GPTConfig, random_state_dict

        config = GPTConfig()
        model = GPT(config)
        model.load_state_dict(random_state_dict(config))

        def step(idx: tp.Tensor) -> tp.Tensor:
            return tp.argmax(model(idx), dim=-1)

        compare(
            "GPT-2 small",
            step,
            lambda t: tp.InputInfo((1, t), tp.int32),
            1,
            64,
            config.block_size,
            args.gpt2,
            lambda n: rng.integers(0, config.vocab_size, (1, n)).astype(np.int32),
            max(3, args.repeats // 10),
        )


if __name__ == "__main__":
    main(sys.argv[1:])
