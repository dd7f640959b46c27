"""A GroupNorm on XLA:CPU: one of the backend's GroupNorm passes against the same programs without it.

``--pass sums-as-products`` (the default): channels-last (as tripy runs a convnet on the CPU), a GroupNorm sums
``[N, H, W, groups, channels]`` over ``H, W`` and the channels of each group. XLA:CPU takes such a sum, where a
summed dim is longer than 32, as a windowed sum (``TreeReductionRewriter``), slow over dims that a kept dim
separates; the pass makes it a product with ones (see ``tripy_backend/passes/sums_as_products.py``). The pass
``group-norms``, which would take the GroupNorms first where tripy-kernels is installed, is left out of both.

``--pass group-norms`` (needs tripy-kernels: ``scripts/kernels-deps``): each GroupNorm, with its scale, shift and
SiLU, as one call to the kernels' handler (``tripy_backend/passes/group_norms.py``), against XLA's ops for it (with
``sums-as-products``).

Compiled both ways in one process, calls interleaved:

* the sums alone (a GroupNorm's mean) for several image sizes and groups (``sums-as-products`` only);
* a convolution, GroupNorm and SiLU block (a U-Net's), where the mean's sum and the variance's (of the squared
  deviations from the mean, which XLA stores before its windowed sum) become products;
* the small U-Net of ``benchmarks/peers/convnet.py``.

Printed: microseconds per call without and with the pass, and the speedup.

    uv run python benchmarks/groupnorms.py [--pass group-norms] [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Dict, List, Tuple

import jaxlib
import numpy as np

import tripy as tp
from tripy_backend import kernels, pipeline

from _harness import interleaved

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))

PASSES = {"sums-as-products": "group-norms", "group-norms": None}  # pass -> the pass left out of both ways


def both(make: Callable[[], Any], shape: Tuple[int, ...], measured: str) -> Dict[str, Any]:
    """`make()` compiled for `shape` without the pass `measured`, then with it."""
    full, exes = pipeline.XLA, {}
    try:
        for way, dropped in (("without", (measured, PASSES[measured])), ("with", (PASSES[measured],))):
            pipeline.XLA = tuple(p for p in full if p.name not in dropped)
            exes[way] = tp.compile(make(), args=[tp.InputInfo(shape, tp.float32)])
    finally:
        pipeline.XLA = full
    return exes


def block(channels: int, groups: int) -> Callable[[], Any]:
    def make() -> Any:
        conv, norm = tp.Conv(channels, channels, (3, 3), padding=((1, 1), (1, 1))), tp.GroupNorm(groups, channels)
        for layer in (conv, norm):
            layer.initialize_dummy_parameters()
        return lambda x: tp.silu(norm(conv(x)))

    return make


def unet() -> Any:
    from convnet import UNet, random_weights

    model = UNet()
    model.load_state_dict(random_weights(model))
    return model


def workloads(measured: str) -> List[Tuple[str, Callable[[], Any], Tuple[int, ...]]]:
    sums = [
        ("mean of [1, 128, 128, 8, 4]", (1, 128, 128, 8, 4)),
        ("mean of [1, 64, 64, 32, 10]", (1, 64, 64, 32, 10)),
        ("mean of [8, 56, 56, 8, 8]", (8, 56, 56, 8, 8)),
        ("mean of [2, 64, 64, 32, 20]", (2, 64, 64, 32, 20)),
    ]
    rows: List[Tuple[str, Callable[[], Any], Tuple[int, ...]]] = [
        (name, lambda: lambda x: tp.mean(x, dim=(1, 2, 4)), shape) for name, shape in sums
    ]
    if measured == "group-norms":
        rows = [("conv + GroupNorm(8) + SiLU, 4 x 32 x 64 x 64", block(32, 8), (4, 32, 64, 64))]
    rows += [
        ("conv + GroupNorm(8) + SiLU, 32 x 128 x 128", block(32, 8), (1, 32, 128, 128)),
        ("conv + GroupNorm(32) + SiLU, 320 x 32 x 32", block(320, 32), (1, 320, 32, 32)),
        ("U-Net (benchmarks/peers/convnet.py)", unet, (1, 3, 128, 128)),
    ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pass", dest="measured", choices=sorted(PASSES), default="sums-as-products")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    if args.measured == "group-norms" and not (kernels.enabled() and kernels.has(kernels.GROUP_NORM)):
        sys.exit("benchmarks/groupnorms.py: --pass group-norms needs tripy-kernels (scripts/kernels-deps)")
    rng = np.random.default_rng(0)
    print(f"the pass {args.measured}, without and with it (jaxlib {jaxlib.__version__})")
    print(f"{'workload':46s} {'without us':>11s} {'with us':>9s} {'speedup':>8s}")
    for name, make, shape in workloads(args.measured):
        exes = both(make, shape, args.measured)
        x = tp.Tensor(rng.standard_normal(shape).astype(np.float32))
        outs = {k: np.from_dlpack(e(x)) for k, e in exes.items()}
        scale = float(np.abs(outs["without"]).max()) or 1.0
        assert np.abs(outs["with"] - outs["without"]).max() <= 1e-4 * scale, name
        times = interleaved({k: (lambda e=e: e(x).eval()) for k, e in exes.items()}, 3, args.rounds)
        ratio = times["without"] / times["with"]
        print(f"{name:46s} {times['without'] * 1e6:11.1f} {times['with'] * 1e6:9.1f} {ratio:7.2f}x", flush=True)


if __name__ == "__main__":
    main()
