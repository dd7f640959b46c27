"""Save GPT-2's KV-cache programs (see run.py) for ``tripy serve --lm``: ``prefill.tpexe``, ``decode.tpexe``
and the manifest ``<name>.json`` that describes them, in one directory.

    # tiny random weights (seconds), then serve /v1/completions:
    python examples/gpt2/export.py --preset tiny --out gpt2-tiny
    tripy serve --lm gpt2-tiny/gpt2.json --port 8000
    # real weights, e.g. Hugging Face's model.safetensors and tokenizer.json for "gpt2":
    python examples/gpt2/export.py --weights model.safetensors --out gpt2
    tripy serve --lm gpt2/gpt2.json --tokenizer tokenizer.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import GPT, random_state_dict  # noqa: E402
from run import PRESETS, compile_kv_programs  # noqa: E402
from weights import load_checkpoint  # noqa: E402

GPT2_EOS = 50256  # <|endoftext|> in GPT-2's vocabulary


def export(
    model: GPT, out: str, prompt_len: int, cache_len: int, name: str = "gpt2", eos_token_id: Optional[int] = None
) -> str:
    """Compile and save `model`'s prefill (prompts of up to `prompt_len` tokens) and decode (a cache of
    `cache_len` positions) programs into `out`; returns the manifest's path."""
    prefill, decode = compile_kv_programs(model, prompt_len, cache_len)
    os.makedirs(out, exist_ok=True)
    prefill.save(os.path.join(out, "prefill.tpexe"))
    decode.save(os.path.join(out, "decode.tpexe"))
    manifest = {
        "format": "tripy.lm",
        "name": name,
        "prefill": "prefill.tpexe",
        "decode": "decode.tpexe",
        "cache_len": cache_len,
        "vocab_size": model.config.vocab_size,
        "eos_token_id": eos_token_id,
    }
    path = os.path.join(out, f"{name}.json")
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
    return path


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", help=".safetensors or .npz checkpoint (default: random weights)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="gpt2")
    parser.add_argument("--prompt-len", type=int, default=64, help="longest prompt, in tokens")
    parser.add_argument("--cache-len", type=int, default=256, help="prompt plus new tokens, at most")
    parser.add_argument("--out", required=True, help="directory to write into")
    args = parser.parse_args(list(argv) or None)
    config = PRESETS[args.preset]
    if not 1 <= args.prompt_len <= args.cache_len <= config.block_size:
        parser.error(f"need 1 <= --prompt-len <= --cache-len <= {config.block_size}")
    model = GPT(config)
    model.load_state_dict(load_checkpoint(args.weights, config) if args.weights else random_state_dict(config))
    eos = GPT2_EOS if config.vocab_size > GPT2_EOS else None
    print(f"wrote {export(model, args.out, args.prompt_len, args.cache_len, eos_token_id=eos)}")


if __name__ == "__main__":
    main(sys.argv[1:])
