"""Where a GPT-2 decoding step's time goes: its 49 weight products with one row, in tripy against NumPy.

A decoding step of GPT-2 small multiplies one token's activations by every weight matrix (per layer
2304x768, 768x768, 3072x768, 768x3072, then the 50257x768 LM head): ~500 MB of float32 to stream from
memory per token, which bounds tokens/s. This script runs only those products, chained as in the model,
three ways in one process, interleaved:

* ``tp.Linear``: tripy layers with biases, compiled, as ``examples/gpt2`` runs them (a program of one-row
  products: its weights stay ``[out, in]`` and each product is kept out of XLA's fusions, see
  ``tripy_backend/cpu_plan.py``);
* ``x @ W^T``: tripy, weights passed as arguments in ``[out, in]`` layout, no bias;
* NumPy: ``x @ W.T + b`` (its BLAS, e.g. OpenBLAS);
* narrow weights, compiled: ``tp.Linear(..., quant_dtype=tp.int8, weight_quant_dim=0)`` (int8, a scale per
  output channel: 1 byte per weight) and ``x @ W^T`` with ``W`` stored as bfloat16 and cast to float32 in the
  program (2 bytes), as ``examples/gpt2/run.py --weights-dtype`` runs them.

Printed: milliseconds per pass, the memory bandwidth it reaches (weight bytes read / time) and each contender's
time over NumPy's.

    uv run python benchmarks/decode_matvec.py [--rounds 7]
"""

from __future__ import annotations

import argparse
from typing import Any, List, Tuple

import numpy as np

from _harness import interleaved

# (out, in) of each product of one layer, then the LM head; the activations are cut to 768 where a product
# is wider than the next one's input (as the model splits c_attn's output into q, k, v).
LAYER = [(2304, 768), (768, 768), (3072, 768), (768, 3072)]
SHAPES: List[Tuple[int, int]] = LAYER * 12 + [(50257, 768)]


def chain(x: Any, products: List[Any]) -> Any:
    for product in products:
        y = product(x)
        x = y[:, :768] if y.shape[1] > 3072 or y.shape[1] == 2304 else y
    return x


def main() -> None:
    import tripy as tp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    weights = [(rng.standard_normal(s, dtype=np.float32) * 0.02) for s in SHAPES]
    biases = [(rng.standard_normal(s[0], dtype=np.float32) * 0.02) for s in SHAPES]
    x = rng.standard_normal((1, 768), dtype=np.float32)
    megabytes = sum(w.nbytes for w in weights) / 1e6

    layers = []
    for w, b in zip(weights, biases):
        layer = tp.Linear(w.shape[1], w.shape[0])
        layer.load_state_dict({"weight": tp.Tensor(w), "bias": tp.Tensor(b)})
        layers.append(layer)
    linear = tp.compile(lambda t: chain(t, layers), args=[tp.InputInfo((1, 768), tp.float32)])

    def as_arguments(t: tp.Tensor, *ws: tp.Tensor) -> tp.Tensor:
        return chain(t, [lambda v, w=w: v @ tp.transpose(w, 0, 1) for w in ws])

    arguments = tp.compile(
        as_arguments, args=[tp.InputInfo((1, 768), tp.float32)] + [tp.InputInfo(w.shape, tp.float32) for w in weights]
    )
    tx, tws = tp.Tensor(x), [tp.Tensor(w) for w in weights]
    numpy_products = [lambda v, w=w, b=b: v @ w.T + b for w, b in zip(weights, biases)]

    int8_layers = []
    for w, b in zip(weights, biases):
        layer = tp.Linear(w.shape[1], w.shape[0], quant_dtype=tp.int8, weight_quant_dim=0)
        layer.load_state_dict(
            {"weight": tp.Tensor(w), "bias": tp.Tensor(b), "weight_scale": tp.Tensor(np.abs(w).max(axis=1) / 127)}
        )
        int8_layers.append(layer)
    int8 = tp.compile(lambda t: chain(t, int8_layers), args=[tp.InputInfo((1, 768), tp.float32)])
    bf16_ws = [tp.Tensor(w.astype(tp.bfloat16.numpy_dtype)) for w in weights]
    bf16 = tp.compile(
        lambda t: chain(t, [lambda v, w=w: v @ tp.transpose(tp.cast(w, tp.float32), 0, 1) for w in bf16_ws]),
        args=[tp.InputInfo((1, 768), tp.float32)],
    )

    # Same numbers (tp.Linear and NumPy), as a check that each runs the whole chain; the narrow ones close.
    expected = chain(x, numpy_products)
    assert np.allclose(np.from_dlpack(linear(tx)), expected, rtol=1e-3, atol=1e-4)
    no_bias = chain(x, [lambda v, w=w: v @ w.T for w in weights])
    for narrow, reference in ((int8, expected), (bf16, no_bias)):
        assert np.abs(np.from_dlpack(narrow(tx)) - reference).max() < 0.02 * np.abs(reference).max()

    times = interleaved(
        {
            "tripy tp.Linear (compiled)": lambda: np.from_dlpack(linear(tx)),
            "tripy x @ W^T, weights as arguments": lambda: np.from_dlpack(arguments(tx, *tws)),
            "NumPy x @ W.T + b": lambda: chain(x, numpy_products),
            "tripy tp.Linear int8 (compiled)": lambda: np.from_dlpack(int8(tx)),
            "tripy x @ W^T, W bfloat16 (compiled)": lambda: np.from_dlpack(bf16(tx)),
        },
        number=5,
        rounds=args.rounds,
        settle=0.05,
    )
    base = times["NumPy x @ W.T + b"]
    print(
        f"GPT-2 small decoding step, weight products only ({len(SHAPES)} products, {megabytes:.0f} MB of float32 "
        "weights)"
    )
    for name, t in times.items():
        read = megabytes / 4 if "int8" in name else megabytes / 2 if "bfloat16" in name else megabytes
        print(f"  {name:38s} {t * 1e3:7.1f} ms  {read / 1e3 / t:5.1f} GB/s  {t / base:5.2f}x NumPy")


if __name__ == "__main__":
    main()
