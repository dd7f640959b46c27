"""GPT-2 small on the CPU against the engines users would pick instead: PyTorch (eager), ONNX Runtime and OpenVINO
(the same model exported from PyTorch to ONNX) and jax.jit. Two workloads, all contenders with the same random weights:

* forward: logits of a batch-1 sequence of 128 tokens;
* generation: greedy, a 16-token prompt and 64 new tokens with a KV cache (tripy: ``examples/gpt2/run.py``'s
  prefill and decode programs; the peers: the same design, see gpt2_torch.py and gpt2_jax.py). Reported:
  new tokens per second (first token included), decoding tokens per second (after the first token), time to
  the first token, and for each contender the fraction of the memory-bandwidth limit its decoding reaches: the
  bytes of weights (and cache) one step reads, against a NumPy sum over a large array timed in the same rounds.
  Narrow weights (``--weights-dtypes``): tripy with int8 (weight-only, per-channel scales) and bfloat16 matrix
  weights, ONNX Runtime with its int8 dynamic quantization and 8-bit ``MatMulNBits`` (weight-only, blocks of
  128) of the same export; their quality against float32 (logits, greedy tokens over 64 steps) is printed.

    bash benchmarks/peers/setup.sh                       # once: the peers' environment
    benchmarks/peers/.venv/bin/python benchmarks/peers/gpt2.py [--rounds 5] [--only forward|generate]
        [--weights-dtypes float32,int8,bfloat16] [--peers pytorch,onnxruntime,...]

Contenders run in one process, interleaved (one run of each per round, a pause before each so the previous
one's thread pools go quiet), and medians are reported; every engine may use all cores. A missing peer
shows as ``n/a (reason)``. Outputs are cross-checked (logits within 1e-3, identical generated tokens).
ONNX exports are cached in benchmarks/peers/.cache/.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "gpt2"))
sys.path.insert(0, HERE)

import reference  # noqa: E402
from model import GPT, GPTConfig, convert_weights, random_state_dict  # noqa: E402
from run import compile_kv_programs, generate_with_cache, padded_length, cache_length, quality  # noqa: E402

from peer_utils import (  # noqa: E402
    NotAvailable,
    onnx_file,
    onnx_session,
    openvino_model,
    openvino_run,
    print_table,
)

Generate = Callable[[List[int]], Tuple[List[int], float, float]]


# ---- forward ------------------------------------------------------------------------------------------
def tripy_forward(state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray) -> Callable[[], Any]:
    import tripy as tp

    model = GPT(config)
    model.load_state_dict(state)
    exe = tp.compile(model, args=[tp.InputInfo(idx.shape, tp.int32)])
    x = tp.Tensor(idx)
    return lambda: np.from_dlpack(exe(x))


def torch_model(state: Dict[str, np.ndarray], config: GPTConfig, cache_len: int = 0) -> Any:
    try:
        import torch
    except ImportError as e:
        raise NotAvailable(f"not installed: {e}") from None
    from gpt2_torch import TorchGPT

    torch.set_num_threads(os.cpu_count() or 1)
    return TorchGPT(state, config.n_layer, config.n_head, cache_len, config.layer_norm_eps).eval()


def torch_forward(state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray) -> Callable[[], Any]:
    import torch

    model = torch_model(state, config)
    x = torch.from_numpy(idx.astype(np.int64))

    def run() -> np.ndarray:
        with torch.inference_mode():
            return model(x).numpy()

    return run


def ort_forward(state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray) -> Callable[[], Any]:
    import torch

    model = torch_model(state, config)
    session = onnx_session(
        model, (torch.from_numpy(idx.astype(np.int64)),), ["idx"], f"gpt2_forward_L{config.n_layer}_T{idx.shape[1]}"
    )
    x = idx.astype(np.int64)
    return lambda: session.run(None, {"idx": x})[0]


def openvino_forward(state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray) -> Callable[[], Any]:
    import torch

    model = torch_model(state, config)
    compiled = openvino_model(
        model, (torch.from_numpy(idx.astype(np.int64)),), ["idx"], f"gpt2_forward_L{config.n_layer}_T{idx.shape[1]}"
    )
    x = idx.astype(np.int64)
    return lambda: openvino_run(compiled, {"idx": x})[0]


def jax_forward(state: Dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray) -> Callable[[], Any]:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        raise NotAvailable(f"not installed: {e}") from None
    params = {k: jnp.asarray(v) for k, v in state.items()}
    fn = jax.jit(lambda p, i: reference.forward(p, i, config.n_layer, config.n_head, config.layer_norm_eps, xp=jnp))
    x = jnp.asarray(idx)
    return lambda: np.asarray(fn(params, x))


# ---- generation ---------------------------------------------------------------------------------------
def greedy_loop(
    prefill: Callable[[np.ndarray, int], Any],
    decode: Callable[[Any, int, Any], Any],
    read: Callable[[Any], int],
    prompt_len: int,
) -> Generate:
    """A generation loop around a peer's prefill/decode (the structure of run.generate_with_cache)."""

    def generate(prompt: List[int]) -> Tuple[List[int], float, float]:
        n = len(prompt)
        ids = np.zeros((1, prompt_len), np.int64)
        ids[0, :n] = prompt
        start = time.perf_counter()
        token, cache = prefill(ids, n)
        tokens = list(prompt) + [read(token)]
        first = time.perf_counter() - start
        for pos in range(n, n + NEW_TOKENS - 1):
            token, cache = decode(token, pos, cache)
            tokens.append(read(token))
        return tokens, first, time.perf_counter() - start

    return generate


def tripy_generate(
    state: Dict[str, np.ndarray], config: GPTConfig, prompt_len: int, cache_len: int, weights: str = "float32"
) -> Generate:
    model = GPT(dataclasses.replace(config, weights=weights))
    model.load_state_dict(convert_weights(state, weights))
    prefill, decode = compile_kv_programs(model, prompt_len, cache_len)
    return lambda prompt: generate_with_cache(prefill, decode, prompt, NEW_TOKENS, prompt_len)


def torch_generate(state: Dict[str, np.ndarray], config: GPTConfig, prompt_len: int, cache_len: int) -> Generate:
    import torch

    model = torch_model(state, config, cache_len)

    @torch.inference_mode()
    def prefill(ids: np.ndarray, n: int) -> Any:
        logits, cache = model.prefill(torch.from_numpy(ids), torch.tensor([n]))
        return logits.argmax(-1, keepdim=True), cache

    @torch.inference_mode()
    def decode(token: Any, pos: int, cache: Any) -> Any:
        logits, cache = model.decode(token, torch.tensor([pos]), cache)
        return logits.argmax(-1, keepdim=True), cache

    return greedy_loop(prefill, decode, lambda t: int(t[0, 0]), prompt_len)


def exported_generate(
    state: Dict[str, np.ndarray],
    config: GPTConfig,
    prompt_len: int,
    cache_len: int,
    load: Callable[..., Any],
    run: Callable[[Any, Dict[str, Any]], Any],
) -> Generate:
    """Generation with the prefill and decode programs exported to ONNX, loaded by `load(module, args,
    input_names, name)` (onnx_session, openvino_model or ort_int8_session) and run by `run(program, inputs) ->
    outputs`."""
    import torch

    from gpt2_torch import Decode, Prefill

    model = torch_model(state, config, cache_len)
    tag = f"L{config.n_layer}_P{prompt_len}_C{cache_len}_layered"  # (the cache as a tensor per layer and kind)
    ids, one = torch.zeros((1, prompt_len), dtype=torch.int64), torch.tensor([1])
    cache = [torch.zeros(shape) for shape in GPT(config).cache_shapes(1, cache_len)]
    names = [f"cache{i}" for i in range(len(cache))]
    prefill_program = load(Prefill(model).eval(), (ids, one), ["idx", "length"], f"gpt2_prefill_{tag}")
    decode_program = load(
        Decode(model).eval(), (one[None], one, *cache), ["token", "pos", *names], f"gpt2_decode_{tag}"
    )

    def prefill(ids: np.ndarray, n: int) -> Any:
        token, *cache = run(prefill_program, {"idx": ids, "length": np.array([n], np.int64)})
        return token, cache

    def decode(token: Any, pos: int, cache: Any) -> Any:
        token, *cache = run(
            decode_program, {"token": token, "pos": np.array([pos], np.int64), **dict(zip(names, cache))}
        )
        return token, cache

    return greedy_loop(prefill, decode, lambda t: int(t[0, 0]), prompt_len)


def ort_generate(state: Dict[str, np.ndarray], config: GPTConfig, prompt_len: int, cache_len: int) -> Generate:
    return exported_generate(
        state, config, prompt_len, cache_len, onnx_session, lambda session, inputs: session.run(None, inputs)
    )


def ort_int8_session(method: str, module: Any, args: tuple, input_names: List[str], name: str) -> Any:
    """An ONNX Runtime session for the export of `module` with its matrix products quantized to int8: ``dynamic``
    (``quantize_dynamic``: int8 weights, activations quantized at run time, integer products) or ``nbits``
    (``MatMulNBits``, 8 bits, blocks of 128: weight-only, float activations). Cached next to the export."""
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        raise NotAvailable(f"not installed: {e}") from None
    source = onnx_file(module, args, input_names, name)
    path = source.replace(".onnx", f"_int8_{method}.onnx")
    if not os.path.exists(path):
        if method == "dynamic":
            quantize_dynamic(source, path + ".tmp.onnx", weight_type=QuantType.QInt8, per_channel=True)
        else:
            import onnx
            from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

            quantizer = MatMulNBitsQuantizer(
                onnx.load(source), bits=8, block_size=128, is_symmetric=True, accuracy_level=4
            )
            quantizer.process()
            quantizer.model.save_model_to_file(path + ".tmp.onnx", use_external_data_format=False)
        os.replace(path + ".tmp.onnx", path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def ort_int8_generate(
    method: str, state: Dict[str, np.ndarray], config: GPTConfig, prompt_len: int, cache_len: int
) -> Generate:
    return exported_generate(
        state,
        config,
        prompt_len,
        cache_len,
        functools.partial(ort_int8_session, method),
        lambda session, inputs: session.run(None, inputs),
    )


def openvino_generate(state: Dict[str, np.ndarray], config: GPTConfig, prompt_len: int, cache_len: int) -> Generate:
    return exported_generate(state, config, prompt_len, cache_len, openvino_model, openvino_run)


def jax_generate(state: Dict[str, np.ndarray], config: GPTConfig, prompt_len: int, cache_len: int) -> Generate:
    try:
        import jax
        import jax.numpy  # noqa: F401  (whether jax has numpy here)
    except ImportError as e:
        raise NotAvailable(f"not installed: {e}") from None
    import gpt2_jax

    params = gpt2_jax.params(state)
    L, H, eps = config.n_layer, config.n_head, config.layer_norm_eps
    jit_prefill = jax.jit(lambda p, i, n: gpt2_jax.prefill(p, i, n, L, H, cache_len, eps))
    jit_decode = jax.jit(lambda p, t, pos, c: gpt2_jax.decode(p, t, pos, c, L, H, eps))

    def prefill(ids: np.ndarray, n: int) -> Any:
        return jit_prefill(params, ids.astype(np.int32), np.array([n], np.int32))

    def decode(token: Any, pos: int, cache: Any) -> Any:
        return jit_decode(params, token, np.array([pos], np.int32), cache)

    return greedy_loop(prefill, decode, lambda t: int(t[0, 0]), prompt_len)


NEW_TOKENS = 64
FORWARD = {
    "tripy": tripy_forward,
    "pytorch": torch_forward,
    "onnxruntime": ort_forward,
    "openvino": openvino_forward,
    "jax.jit": jax_forward,
}
GENERATE = {
    "tripy": tripy_generate,
    "pytorch": torch_generate,
    "onnxruntime": ort_generate,
    "openvino": openvino_generate,
    "jax.jit": jax_generate,
}
# Contenders with narrow weights, by weight format: (name, maker)
NARROW = {
    "int8": [
        ("tripy int8", functools.partial(tripy_generate, weights="int8")),
        ("onnxruntime int8 (MatMulNBits)", functools.partial(ort_int8_generate, "nbits")),
        ("onnxruntime int8 (dynamic)", functools.partial(ort_int8_generate, "dynamic")),
    ],
    "bfloat16": [("tripy bfloat16", functools.partial(tripy_generate, weights="bfloat16"))],
}


def make_all(makers: Dict[str, Callable[..., Any]], *args: Any) -> Tuple[Dict[str, Any], Dict[str, str]]:
    made: Dict[str, Any] = {}
    missing: Dict[str, str] = {}
    for name, make in makers.items():
        start = time.perf_counter()
        try:
            made[name] = make(*args)
        except NotAvailable as e:
            missing[name] = str(e)
            continue
        except Exception as e:  # a peer that fails to build or export is reported, not fatal
            missing[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
            continue
        print(f"  {name}: ready in {time.perf_counter() - start:.1f} s", flush=True)
    return made, missing


def bench_forward(state: Dict[str, np.ndarray], config: GPTConfig, seq: int, rounds: int, settle: float) -> None:
    idx = np.random.default_rng(0).integers(0, config.vocab_size, size=(1, seq)).astype(np.int32)
    print(f"\nforward, batch 1, sequence {seq}: preparing", flush=True)
    runs, missing = make_all(FORWARD, state, config, idx)
    outputs = {name: np.asarray(run()) for name, run in runs.items()}
    for name, out in outputs.items():
        if name != "tripy" and "tripy" in outputs:
            diff = float(np.abs(out - outputs["tripy"]).max())
            if diff > 1e-3:
                raise SystemExit(f"tripy and {name} disagree on the logits (max |difference| {diff:.2e})")
    times: Dict[str, List[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            time.sleep(settle)
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(t) for name, t in times.items()}
    rows = [[name, f"{t * 1e3:.0f}", f"{seq / t:.0f}"] for name, t in med.items()]
    rows += [[name, f"n/a ({why})", ""] for name, why in missing.items()]
    print_table(
        f"GPT-2 forward (batch 1, T={seq}), median of {rounds}",
        ["contender", "ms", "tokens/s"],
        rows,
        med,
        lower_is_better=True,
    )


def bandwidth_probe(megabytes: int = 512) -> Callable[[], float]:
    """A timed read of a large array (a NumPy sum over ``megabytes`` of float32): returns GB/s. What one core's
    NumPy reaches is about what the machine's memory gives every core together on a small VM."""
    data = np.ones(megabytes * (1 << 20) // 4, np.float32)

    def probe() -> float:
        start = time.perf_counter()
        data.sum()
        return data.nbytes / (time.perf_counter() - start) / 1e9

    return probe


MATRICES = ("c_attn.weight", "c_proj.weight", "c_fc.weight", "lm_head.weight")
BYTES = {"float32": 4, "bfloat16": 2, "int8": 1}


def step_bytes(state: Dict[str, np.ndarray], config: GPTConfig, cache_len: int, weights: str) -> int:
    """Bytes one decoding step must read: the matrix weights in format `weights` (int8: a byte per weight and a
    float32 scale per row), one row of each embedding table, the other (float32) parameters and the cache."""
    total = 2 * config.n_layer * config.n_embd * cache_len * 4
    for name, value in state.items():
        if name.endswith(("wte.weight", "wpe.weight")):
            total += value.nbytes // value.shape[0]
        elif name.endswith(MATRICES):
            total += value.size * BYTES[weights] + (4 * value.shape[0] if weights == "int8" else 0)
        else:
            total += value.nbytes
    return total


def weights_of(name: str) -> str:
    return "int8" if "int8" in name else "bfloat16" if "bfloat16" in name else "float32"


def bench_generate(
    state: Dict[str, np.ndarray],
    config: GPTConfig,
    prompt_tokens: int,
    rounds: int,
    settle: float,
    makers: Dict[str, Callable[..., Any]],
) -> None:
    prompt = [int(t) for t in np.random.default_rng(1).integers(0, config.vocab_size, size=prompt_tokens)]
    prompt_len = padded_length(prompt_tokens, 16, config.block_size)
    cache_len = cache_length(prompt_len, NEW_TOKENS, config.block_size)
    print(f"\ngeneration, prompt {prompt_tokens} tokens, {NEW_TOKENS} new, cache {cache_len}: preparing", flush=True)
    gens, missing = make_all(makers, state, config, prompt_len, cache_len)
    tokens = {}
    for name, gen in gens.items():  # warm-up, and the cross-check
        tokens[name], _, total = gen(prompt)
        print(f"  {name}: warm-up generation {NEW_TOKENS / total:.1f} tokens/s", flush=True)
    for name, got in tokens.items():
        if "tripy" in tokens and got != tokens["tripy"] and weights_of(name) == "float32":
            first = next(i for i, (a, b) in enumerate(zip(got, tokens["tripy"])) if a != b)
            print(f"  note: {name}'s tokens differ from tripy's from position {first} (float rounding on near-ties?)")
    probe, bandwidth = bandwidth_probe(), []
    results: Dict[str, List[Tuple[float, float]]] = {name: [] for name in gens}
    names = list(gens)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            time.sleep(settle)
            _, first, total = gens[name](prompt)
            results[name].append((first, total))
        time.sleep(settle)
        bandwidth += [probe() for _ in range(3)]
        print(
            f"  round {r + 1}/{rounds}: "
            + ", ".join(f"{n} {NEW_TOKENS / results[n][-1][1]:.1f} tokens/s" for n in names)
            + f", NumPy sum {max(bandwidth[-3:]):.1f} GB/s",
            flush=True,
        )
    gbs = max(bandwidth)  # (a limit: the best the machine gave; a busy machine's probes read low)
    rate = {name: NEW_TOKENS / statistics.median(t for _, t in res) for name, res in results.items()}
    decode = {name: (NEW_TOKENS - 1) / statistics.median(t - f for f, t in res) for name, res in results.items()}
    base = decode.get("tripy")
    rows = []
    for name, res in results.items():
        limit = gbs * 1e9 / step_bytes(state, config, cache_len, weights_of(name))
        rows.append(
            [
                name,
                f"{rate[name]:.1f}",
                f"{decode[name]:.1f}",
                f"{decode[name] / base:.2f}x" if base else "",
                f"{decode[name] / limit:.0%} of {limit:.0f}",
                f"{statistics.median(f for f, _ in res) * 1e3:.0f}",
            ]
        )
    rows += [[name, f"n/a ({why})", "", "", "", ""] for name, why in missing.items()]
    print_table(
        f"GPT-2 greedy generation ({prompt_tokens}-token prompt, {NEW_TOKENS} new tokens), median of {rounds}; "
        f"memory bandwidth (NumPy sum, best of {len(bandwidth)}) {gbs:.1f} GB/s",
        [
            "contender",
            "tokens/s",
            "decode tokens/s",
            "decode vs tripy float32",
            "of the bandwidth limit (tokens/s)",
            "first token ms",
        ],
        rows,
        {n: r for n, r in rate.items() if weights_of(n) == "float32"},
        lower_is_better=False,
    )
    for w in sorted({weights_of(n) for n in rate} - {"float32"}):
        peers = {n: r for n, r in rate.items() if weights_of(n) == w and not n.startswith("tripy")}
        if f"tripy {w}" in rate and peers:
            best = max(peers, key=peers.__getitem__)
            print(f"tripy {w} vs the best {w} peer ({best}): {rate[f'tripy {w}'] / peers[best]:.2f}x")


def print_quality(state: Dict[str, np.ndarray], config: GPTConfig, weights: List[str]) -> None:
    """tripy's narrow-weight logits against float32's on a fixed prompt (run.quality)."""
    prompt = [int(t) for t in np.random.default_rng(1).integers(0, config.vocab_size, size=16)]
    for w in weights:
        error, share, largest = quality(state, dataclasses.replace(config, weights=w), prompt, NEW_TOKENS)
        print(
            f"quality of tripy {w} against float32 (random weights, 16-token prompt): max |logits error| "
            f"{error:.4f} (float32 logits up to {largest:.2f}), greedy tokens matching over {NEW_TOKENS} steps "
            f"(both fed float32's tokens): {share:.0%}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12, help="GPT-2 small has 12")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["forward", "generate"])
    parser.add_argument("--settle", type=float, default=0.2, help="pause before each timed run (s)")
    parser.add_argument(
        "--weights-dtypes",
        default="float32,int8,bfloat16",
        help="generation: the weight formats whose contenders run (float32: tripy and the peers)",
    )
    parser.add_argument(
        "--peers",
        default=",".join(GENERATE),
        help="generation: the float32 contenders besides tripy (e.g. pytorch,onnxruntime)",
    )
    parser.add_argument("--no-quality", action="store_true", help="skip the narrow weights' quality check")
    args = parser.parse_args()
    config = GPTConfig(n_layer=args.layers)
    print(
        f"GPT-2 (layers={config.n_layer}, dims={config.n_embd}, heads={config.n_head}, vocab={config.vocab_size}), "
        f"float32, random weights, CPU with {os.cpu_count()} cores"
    )
    state = random_state_dict(config, seed=0)
    if args.only != "generate":
        bench_forward(state, config, 128, args.rounds * 2, args.settle)
    if args.only != "forward":
        formats = [w for w in args.weights_dtypes.split(",") if w]
        unknown = sorted(set(formats) - {"float32", *NARROW})
        if unknown:
            parser.error(f"--weights-dtypes: unknown {unknown}; choose from float32, {', '.join(NARROW)}")
        makers: Dict[str, Callable[..., Any]] = {"tripy": tripy_generate}  # (the float32 baseline, always)
        if "float32" in formats:
            makers.update((n, GENERATE[n]) for n in args.peers.split(",") if n in GENERATE)
        for w in formats:
            makers.update(NARROW.get(w, []))
        narrow = [w for w in formats if w in NARROW]
        if narrow and not args.no_quality:
            print_quality(state, config, narrow)
        bench_generate(state, config, 16, args.rounds, args.settle, makers)


if __name__ == "__main__":
    main()
