"""Greedy generation with the tripy GPT-2 model.

Loads weights from a ``.npz`` state dict (nanoGPT / ``torch.nn.Linear`` layout, or Hugging Face
``GPT2LMHeadModel`` layout, converted on load) or initializes random ones, compiles the model once for
a range of sequence lengths, and generates greedily from token ids, printing tokens/s.

    # random GPT-2 small weights:
    python examples/gpt2/run.py --prompt-ids 464,2068,7586 --max-new-tokens 16
    # real weights, e.g. exported with
    #   np.savez("gpt2.npz", **{k: v.numpy() for k, v in GPT2LMHeadModel.from_pretrained("gpt2").state_dict().items()})
    python examples/gpt2/run.py --weights gpt2.npz --prompt-ids 464,2068,7586

Each step runs the whole sequence (no KV cache). ``tp.compile`` compiles the step once for every
sequence length (a few bounded programs), so generation never compiles; the run checks and says so.
``--bucket N`` pads sequences to a multiple of N tokens (causal attention keeps the logits at the real
positions independent of the padding); the default, 1, runs each length as it is.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, List, Sequence, Tuple

import numpy as np

import tripy as tp
import tripy_backend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import GPT, GPTConfig, convert_state_dict, random_state_dict  # noqa: E402

PRESETS = {
    "gpt2": GPTConfig(),  # 124M
    "gpt2-medium": GPTConfig(n_layer=24, n_head=16, n_embd=1024),
    "tiny": GPTConfig(vocab_size=128, block_size=64, n_layer=2, n_head=4, n_embd=64),
}


def compile_step(model: GPT, config: GPTConfig, opt_len: int = 64) -> tp.Executable:
    """Compile ``ids [1, T] -> greedy next token at every position [1, T]`` for 1 <= T <= block_size."""

    def next_tokens(idx: tp.Tensor) -> tp.Tensor:
        return tp.argmax(model(idx), dim=-1)

    opt = min(opt_len, config.block_size)
    return tp.compile(next_tokens, args=[tp.InputInfo((1, (1, opt, config.block_size)), tp.int32)])


def padded_length(n: int, bucket: int, limit: int) -> int:
    return min(limit, -(-n // bucket) * bucket)


def generate(step: Any, prompt: Sequence[int], max_new_tokens: int, bucket: int = 64,
             block_size: int = 1024) -> Tuple[List[int], float]:
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


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", help=".npz state dict (default: random weights)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="gpt2")
    parser.add_argument("--prompt-ids", default=None,
                        help="comma-separated token ids (default: a short prompt valid for the preset's vocabulary)")
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--bucket", type=int, default=1, help="pad sequences to a multiple of this length")
    parser.add_argument("--eager", action="store_true", help="run eagerly instead of compiling (for debugging)")
    args = parser.parse_args(list(argv) or None)

    config = PRESETS[args.preset]
    if args.prompt_ids is None:  # GPT-2 ids for "The quick brown fox jumps over", folded into small vocabularies
        args.prompt_ids = ",".join(str(t % config.vocab_size) for t in (464, 2068, 7586, 21831, 18045, 625))
    prompt = [int(t) for t in args.prompt_ids.split(",") if t.strip()]
    if any(not 0 <= t < config.vocab_size for t in prompt):
        parser.error(f"token ids must be in [0, {config.vocab_size})")

    model = GPT(config)
    t0 = time.perf_counter()
    if args.weights:
        state = convert_state_dict(dict(np.load(args.weights)), config)
        source = args.weights
    else:
        state = random_state_dict(config)
        source = "random weights"
    model.load_state_dict(state)
    n_params = sum(int(np.prod(v.shape)) for k, v in state.items() if k != "lm_head.weight")
    print(f"{args.preset}: {n_params / 1e6:.1f}M parameters from {source} (loaded in {time.perf_counter() - t0:.1f} s)")

    if args.eager:
        def step(idx: tp.Tensor) -> tp.Tensor:
            return tp.argmax(model(idx), dim=-1)
        mode = "eager"
    else:
        t0 = time.perf_counter()
        step = compile_step(model, config)  # type: ignore[assignment]
        print(f"compiled for sequence lengths 1..{config.block_size} in {time.perf_counter() - t0:.1f} s")
        mode = "compiled"

    compilations = tripy_backend.compilation_count()
    tokens, seconds = generate(step, prompt, args.max_new_tokens, args.bucket, config.block_size)
    print(f"prompt:    {prompt}")
    print(f"generated: {tokens[len(prompt):]}")
    print(f"{args.max_new_tokens} tokens in {seconds:.2f} s: {args.max_new_tokens / seconds:.1f} tokens/s ({mode})")
    compiled = tripy_backend.compilation_count() - compilations
    print("no compilation after start-up" if compiled == 0 else f"{compiled} compilation(s) during generation")


if __name__ == "__main__":
    main(sys.argv[1:])
