"""Greedy generation with the tripy GPT-2 model, with a KV cache.

Loads weights from a ``.safetensors`` or ``.npz`` checkpoint (Hugging Face ``GPT2LMHeadModel`` layout,
converted on load, or nanoGPT / ``torch.nn.Linear`` layout) or initializes random ones, compiles two
programs at start-up and generates greedily from token ids, printing tokens/s:

* ``prefill``: the prompt, padded to a multiple of ``--bucket`` tokens -> the first new token and the
  KV cache ``[n_layer, 2, 1, n_head, cache_len, head_dim]`` (a fixed length: the prompt plus the new
  tokens, rounded up to a multiple of 64);
* ``decode``: one token, its position (an int32 tensor) and the cache -> the next token and the cache.

Both have static shapes, so nothing compiles during generation (the script counts the compilations and
prints the count), and the cache stays a tripy tensor, passed from one call's outputs to the next call's
inputs. ``--no-kv-cache`` runs the whole sequence at every step instead (same tokens, much slower); its step is
compiled once for every sequence length 1..block_size (a few bounded programs), so it does not compile
during generation either.

    # random GPT-2 small weights:
    python examples/gpt2/run.py --prompt-ids 464,2068,7586 --max-new-tokens 64
    # real weights, e.g. Hugging Face's model.safetensors for "gpt2" (needs: pip install safetensors)
    python examples/gpt2/run.py --weights model.safetensors --prompt-ids 464,2068,7586
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

import tripy as tp
import tripy_backend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import GPT, WEIGHT_FORMATS, GPTConfig, convert_weights, random_state_dict  # noqa: E402
from weights import load_checkpoint  # noqa: E402

PRESETS = {
    "gpt2": GPTConfig(),  # 124M
    "gpt2-medium": GPTConfig(n_layer=24, n_head=16, n_embd=1024),
    "tiny": GPTConfig(vocab_size=128, block_size=64, n_layer=2, n_head=4, n_embd=64),
}


# ---- without a cache: the whole sequence at every step -----------------------------------------------
def compile_step(model: GPT, config: GPTConfig, opt_len: int = 64) -> tp.Executable:
    """Compile ``ids [1, T] -> greedy next token at every position [1, T]`` for 1 <= T <= block_size."""

    def next_tokens(idx: tp.Tensor) -> tp.Tensor:
        return tp.argmax(model(idx), dim=-1)

    opt = min(opt_len, config.block_size)
    return tp.compile(next_tokens, args=[tp.InputInfo((1, (1, opt, config.block_size)), tp.int32)])


def padded_length(n: int, bucket: int, limit: int) -> int:
    return min(limit, -(-n // bucket) * bucket)


def generate(
    step: Any, prompt: Sequence[int], max_new_tokens: int, bucket: int = 64, block_size: int = 1024
) -> Tuple[List[int], float]:
    """Greedy decoding: returns (prompt + new tokens, seconds spent in the loop)."""
    tokens = list(prompt)
    if len(tokens) + max_new_tokens > block_size:
        raise ValueError(f"prompt ({len(tokens)}) + new tokens ({max_new_tokens}) exceed block_size ({block_size})")
    start = time.perf_counter()
    for _ in range(max_new_tokens):
        n = len(tokens)
        ids = np.zeros((1, padded_length(n, bucket, block_size)), np.int32)
        ids[0, :n] = tokens
        predictions = step(tp.Tensor(ids))
        tokens.append(int(np.from_dlpack(predictions)[0, n - 1]))
    return tokens, time.perf_counter() - start


# ---- with a KV cache ----------------------------------------------------------------------------------
def cache_length(prompt_len: int, max_new_tokens: int, block_size: int) -> int:
    """Rows the cache needs (the last new token is never fed back), rounded up to a multiple of 64."""
    return min(block_size, -(-(prompt_len + max_new_tokens - 1) // 64) * 64)


def compile_kv_programs(
    model: GPT,
    prompt_len: int,
    cache_len: int,
    batch: int = 1,
    cache_sharding: Optional[tp.Sharding] = None,
    with_logits: bool = False,
) -> Tuple[tp.Executable, tp.Executable]:
    """Compile ``prefill(ids [B, prompt_len], length [1]) -> (next token [B, 1], *cache)`` and
    ``decode(token [B, 1], pos [1], *cache) -> (next token [B, 1], *cache)`` (greedy; all int32 but the
    float cache, the ``2 * n_layer`` tensors of ``model.cache_shapes(batch, cache_len)``). Static shapes:
    each compiles once, here. `cache_sharding`: how the cache is split across devices (``tensor_parallel.py``).
    ``with_logits``: the logits ``[B, vocab]`` come after the token."""

    def greedy(logits: tp.Tensor) -> Tuple[tp.Tensor, ...]:
        token = tp.unsqueeze(tp.argmax(logits, dim=-1), 1)
        return (token, logits) if with_logits else (token,)

    def prefill(ids: tp.Tensor, length: tp.Tensor) -> Tuple[tp.Tensor, ...]:
        logits, cache = model.prefill(ids, length, cache_len)
        return (*greedy(logits), *cache)

    def decode(token: tp.Tensor, pos: tp.Tensor, *cache: tp.Tensor) -> Tuple[tp.Tensor, ...]:
        logits, new_cache = model.decode(token, pos, cache)
        return (*greedy(logits), *new_cache)

    cache = [
        tp.InputInfo(shape, model.config.dtype, sharding=cache_sharding)
        for shape in model.cache_shapes(batch, cache_len)
    ]
    position = tp.InputInfo((1,), tp.int32)
    return (
        tp.compile(prefill, args=[tp.InputInfo((batch, prompt_len), tp.int32), position]),
        tp.compile(decode, args=[tp.InputInfo((batch, 1), tp.int32), position, *cache]),
    )


def generate_with_cache(
    prefill: Any, decode: Any, prompt: Sequence[int], max_new_tokens: int, prompt_len: int
) -> Tuple[List[int], float, float]:
    """Greedy decoding with the programs of :func:`compile_kv_programs`: returns (prompt + new tokens,
    seconds to the first new token, seconds in all). Each new token is read back as it is made (as a
    program streaming text would); the cache never leaves the device."""
    n = len(prompt)
    ids = np.zeros((1, prompt_len), np.int32)
    ids[0, :n] = prompt
    start = time.perf_counter()
    token, *cache = prefill(tp.Tensor(ids), tp.Tensor(np.array([n], np.int32)))
    tokens = list(prompt) + [int(np.from_dlpack(token)[0, 0])]
    first = time.perf_counter() - start
    for pos in range(n, n + max_new_tokens - 1):
        token, *cache = decode(token, tp.Tensor(np.array([pos], np.int32)), *cache)
        tokens.append(int(np.from_dlpack(token)[0, 0]))
    return tokens, first, time.perf_counter() - start


# ---- quality of narrow weights ------------------------------------------------------------------------
def logits_along(
    model: GPT,
    prompt: Sequence[int],
    steps: int,
    prompt_len: int,
    cache_len: int,
    forced: Optional[Sequence[int]] = None,
) -> Tuple[List[int], np.ndarray]:
    """Greedy decoding for `steps` new tokens, returning (prompt + new tokens, the logits ``[steps, vocab]`` each
    new token was picked from). With `forced` (prompt + tokens), those tokens are fed back instead of the
    model's own picks, so that two models' logits are compared on the same sequence."""
    prefill, decode = compile_kv_programs(model, prompt_len, cache_len, with_logits=True)
    n = len(prompt)
    ids = np.zeros((1, prompt_len), np.int32)
    ids[0, :n] = prompt
    token, logits, *cache = prefill(tp.Tensor(ids), tp.Tensor(np.array([n], np.int32)))
    tokens, rows = list(prompt), [np.from_dlpack(logits)[0]]
    for pos in range(n, n + steps - 1):
        tokens.append(int(np.argmax(rows[-1])))
        fed = tokens[pos] if forced is None else forced[pos]
        token, logits, *cache = decode(
            tp.Tensor(np.array([[fed]], np.int32)), tp.Tensor(np.array([pos], np.int32)), *cache
        )
        rows.append(np.from_dlpack(logits)[0])
    tokens.append(int(np.argmax(rows[-1])))
    return tokens, np.stack(rows)


def quality(
    state: Dict[str, np.ndarray], config: GPTConfig, prompt: Sequence[int], steps: int, bucket: int = 16
) -> Tuple[float, float, float]:
    """``config.weights`` against float32 weights (`state`: float32, ``model.GPT``'s layout) on `prompt`:
    (the largest absolute difference of the logits, the share of greedy tokens that match, the largest
    absolute float32 logit), over `steps` steps of greedy decoding in which both models are fed float32's
    tokens."""
    prompt_len = padded_length(len(prompt), bucket, config.block_size)
    cache_len = cache_length(prompt_len, steps, config.block_size)
    models = []
    for weights in ("float32", config.weights):
        models.append(GPT(dataclasses.replace(config, weights=weights)))
        models[-1].load_state_dict(convert_weights(state, weights))
    tokens, reference = logits_along(models[0], prompt, steps, prompt_len, cache_len)
    _, logits = logits_along(models[1], prompt, steps, prompt_len, cache_len, forced=tokens)
    matches = np.argmax(logits, axis=-1) == np.array(tokens[len(prompt) :])
    return float(np.abs(logits - reference).max()), float(matches.mean()), float(np.abs(reference).max())


def evaluated(tensors: Sequence[tp.Tensor]) -> Tuple[tp.Tensor, ...]:
    """Eager mode: the values of `tensors` computed by one program, so that the next step's graph starts from
    them instead of growing with the whole history. (They are computed as one flat tensor, then cut apart:
    ``.eval()`` on each would compute, for each layer's cache, all the layers before it again.)"""
    # (float32 holds the int32 token ids exactly: they are below 2**24.)
    flat = tp.concatenate([tp.reshape(tp.cast(t, tp.float32), (-1,)) for t in tensors], dim=0).eval()
    parts, start = [], 0
    for t in tensors:
        size = math.prod(t.shape)
        parts.append(tp.cast(tp.reshape(flat[start : start + size], tuple(t.shape)), t.dtype))
        start += size
    return tuple(parts)


def load_weights(parser: argparse.ArgumentParser, path: str, config: GPTConfig) -> Dict[str, np.ndarray]:
    """The checkpoint at `path`, or exit with a one-line message (no traceback) saying what is wrong."""
    if not os.path.isfile(path):
        parser.error(f"--weights {path}: no such file (leave out --weights for random weights)")
    try:
        return load_checkpoint(path, config)
    except (OSError, ValueError, KeyError, ImportError) as e:  # unreadable, another format or layout
        parser.exit(1, f"{parser.prog}: error: cannot load --weights {path}: {e}\n")


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", help=".safetensors or .npz checkpoint (default: random weights)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="gpt2")
    parser.add_argument(
        "--prompt-ids",
        default=None,
        help="comma-separated token ids (default: a short prompt valid for the preset's vocabulary)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument(
        "--bucket",
        type=int,
        default=16,
        help="pad the prompt (no-cache path: the sequence) to a multiple of this length",
    )
    parser.add_argument("--no-kv-cache", action="store_true", help="recompute the whole sequence at every step")
    parser.add_argument("--eager", action="store_true", help="run eagerly instead of compiling (for debugging)")
    parser.add_argument(
        "--weights-dtype",
        choices=WEIGHT_FORMATS,
        default="float32",
        help="how the matrix weights are stored: int8 (weight-only, per-channel scales) or "
        "bfloat16 read 4x or 2x fewer bytes per decoded token than float32",
    )
    parser.add_argument(
        "--quality",
        action="store_true",
        help="also compare the logits with float32 weights' (max |error|, greedy tokens matching)",
    )
    args = parser.parse_args(list(argv) or None)

    config = PRESETS[args.preset]
    if args.prompt_ids is None:  # GPT-2 ids for "The quick brown fox jumps over", folded into small vocabularies
        args.prompt_ids = ",".join(str(t % config.vocab_size) for t in (464, 2068, 7586, 21831, 18045, 625))
    prompt = [int(t) for t in args.prompt_ids.split(",") if t.strip()]
    if any(not 0 <= t < config.vocab_size for t in prompt):
        parser.error(f"token ids must be in [0, {config.vocab_size})")
    if not prompt or args.max_new_tokens < 1 or len(prompt) + args.max_new_tokens > config.block_size:
        parser.error(f"need a prompt, at least one new token, and at most {config.block_size} tokens in all")

    config = dataclasses.replace(config, weights=args.weights_dtype)
    model = build_model(parser, args, config, prompt)

    if args.no_kv_cache:
        run_without_cache(model, config, prompt, args)
        return
    prompt_len = padded_length(len(prompt), args.bucket, config.block_size)
    cache_len = cache_length(prompt_len, args.max_new_tokens, config.block_size)
    t0 = time.perf_counter()
    if args.eager:

        def prefill(ids: tp.Tensor, length: tp.Tensor) -> Tuple[tp.Tensor, ...]:
            logits, cache = model.prefill(ids, length, cache_len)
            return evaluated([tp.unsqueeze(tp.argmax(logits, dim=-1), 1), *cache])

        def decode(token: tp.Tensor, pos: tp.Tensor, *cache: tp.Tensor) -> Tuple[tp.Tensor, ...]:
            logits, new_cache = model.decode(token, pos, cache)
            return evaluated([tp.unsqueeze(tp.argmax(logits, dim=-1), 1), *new_cache])

        mode = "eager, KV cache"
    else:
        prefill, decode = compile_kv_programs(model, prompt_len, cache_len)  # type: ignore[assignment]
        mode = "compiled, KV cache"
    print(
        f"prepared prefill (prompt padded to {prompt_len}) and decode (cache of {cache_len} positions) "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    compilations = tripy_backend.compilation_count()
    tokens, first, seconds = generate_with_cache(prefill, decode, prompt, args.max_new_tokens, prompt_len)
    report(prompt, tokens, seconds, mode, tripy_backend.compilation_count() - compilations, first)


def build_model(parser: argparse.ArgumentParser, args: argparse.Namespace, config: GPTConfig, prompt: List[int]) -> GPT:
    """The model with the checkpoint's (or random) weights stored as ``config.weights``; with ``--quality``,
    first prints how its logits compare with float32 weights'."""
    t0 = time.perf_counter()
    state = load_weights(parser, args.weights, config) if args.weights else random_state_dict(config)
    n_params = sum(int(np.prod(v.shape)) for k, v in state.items() if k != "lm_head.weight")
    source = args.weights or "random weights"
    print(
        f"{args.preset}: {n_params / 1e6:.1f}M parameters from {source}, matrices stored as {config.weights} "
        f"(loaded in {time.perf_counter() - t0:.1f} s)"
    )
    if args.quality and config.weights != "float32":
        error, share, largest = quality(state, config, prompt, args.max_new_tokens, args.bucket)
        print(
            f"quality: {config.weights} logits against float32's: max |error| {error:.4f} (float32 logits up to "
            f"{largest:.2f}); greedy tokens "
            f"matching over {args.max_new_tokens} steps (fed float32's tokens): {share:.0%}"
        )
    model = GPT(config)
    model.load_state_dict(convert_weights(state, config.weights))
    return model


def run_without_cache(model: GPT, config: GPTConfig, prompt: List[int], args: argparse.Namespace) -> None:
    if args.eager:

        def step(idx: tp.Tensor) -> tp.Tensor:
            return tp.argmax(model(idx), dim=-1)

        mode = "eager, no cache"
    else:
        t0 = time.perf_counter()
        step = compile_step(model, config)  # type: ignore[assignment]
        print(f"compiled for sequence lengths 1..{config.block_size} in {time.perf_counter() - t0:.1f} s")
        mode = "compiled, no cache"

    if args.eager:  # Warm up: eager evaluation compiles a program at each new padded length.
        t0 = time.perf_counter()
        lengths = sorted(
            {
                padded_length(n, args.bucket, config.block_size)
                for n in range(len(prompt), len(prompt) + args.max_new_tokens)
            }
        )
        for length in lengths:
            step(tp.Tensor(np.zeros((1, length), np.int32))).eval()
        print(f"prepared {len(lengths)} sequence length(s) {lengths} in {time.perf_counter() - t0:.1f} s")
    compilations = tripy_backend.compilation_count()
    tokens, seconds = generate(step, prompt, args.max_new_tokens, args.bucket, config.block_size)
    report(prompt, tokens, seconds, mode, tripy_backend.compilation_count() - compilations)


def report(
    prompt: List[int], tokens: List[int], seconds: float, mode: str, compiles: int, first: Optional[float] = None
) -> None:
    new = len(tokens) - len(prompt)
    print(f"prompt:    {prompt}")
    print(f"generated: {tokens[len(prompt) :]}")
    ttft = f", first token after {first * 1e3:.0f} ms" if first is not None else ""
    print(
        f"{new} tokens in {seconds:.2f} s: {new / seconds:.1f} tokens/s{ttft} ({mode}); "
        f"programs compiled during generation: {compiles}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
