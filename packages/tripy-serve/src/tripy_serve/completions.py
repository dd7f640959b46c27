"""OpenAI-style ``/v1/completions`` for a language model saved as two KV-cache programs (greedy decoding).

The model is described by a small JSON manifest next to its executables (``examples/gpt2/export.py``
writes one)::

    {"format": "tripy.lm", "name": "gpt2", "prefill": "prefill.tpexe", "decode": "decode.tpexe",
     "cache_len": 64, "vocab_size": 50257, "eos_token_id": 50256}

* ``prefill(ids [1, P], length [1]) -> (next token [1, 1], *cache)``: the prompt padded to ``P`` tokens;
* ``decode(token [1, 1], pos [1], *cache) -> (next token [1, 1], *cache)``: one step at position ``pos``.

Both are int32 but the cache, which stays in tripy tensors from one call to the next. A prompt is token ids,
or text when the server was given a tokenizer file (Hugging Face ``tokenizer.json``, read with the
``tokenizers`` library); the response carries the new token ids (``token_ids``) and, with a tokenizer,
their text.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

import tripy as tp
from tripy_serve.protocol import ServeError

# Request fields with the only values greedy decoding of one sequence can honour.
_FIXED = {"n": 1, "best_of": 1, "echo": False, "logprobs": None, "suffix": None}


@dataclass
class LanguageModel:
    name: str
    prefill: tp.Executable
    decode: tp.Executable
    prompt_len: int  # P: the prefill program's (static) prompt length
    cache_len: int
    vocab_size: int
    eos_token_id: Optional[int]
    tokenizer: Any = None  # a tokenizers.Tokenizer, or None: token ids only

    @classmethod
    def load(cls, manifest_path: str, tokenizer_path: Optional[str] = None) -> "LanguageModel":
        with open(manifest_path) as f:
            manifest = json.load(f)
        if not isinstance(manifest, dict) or manifest.get("format") != "tripy.lm":
            raise ValueError(f"'{manifest_path}' is not a tripy language-model manifest (format 'tripy.lm')")
        where = os.path.dirname(os.path.abspath(manifest_path))
        prefill = tp.Executable.load(os.path.join(where, manifest["prefill"]))
        decode = tp.Executable.load(os.path.join(where, manifest["decode"]))
        ids_info = list(prefill.input_infos.values())[0]
        if ids_info.rank != 2 or not ids_info.shape_bounds.is_static() or ids_info.shape_bounds.min[0] != 1:
            raise ValueError(f"the prefill program's ids must have a static shape [1, P], not {ids_info}")
        tokenizer = None
        if tokenizer_path is not None:
            # Optional dependency, only for text prompts.
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(tokenizer_path)
        name = manifest.get("name") or os.path.splitext(os.path.basename(manifest_path))[0]
        return cls(
            name,
            prefill,
            decode,
            ids_info.shape_bounds.min[1],
            int(manifest["cache_len"]),
            int(manifest["vocab_size"]),
            manifest.get("eos_token_id"),
            tokenizer,
        )

    def prompt_ids(self, body: Dict[str, Any]) -> List[int]:
        """The request's prompt as token ids, checked against the programs' limits. Raises ServeError (400)."""
        prompt = body.get("prompt")
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise ServeError(
                    400,
                    "This server has no tokenizer: send 'prompt' as a list of token ids "
                    "(or start it with --tokenizer tokenizer.json).",
                )
            prompt = self.tokenizer.encode(prompt).ids
        if not (
            isinstance(prompt, list) and prompt and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt)
        ):
            raise ServeError(400, "'prompt' must be a non-empty list of token ids (integers) or a string.")
        bad = [t for t in prompt if not 0 <= t < self.vocab_size]
        if bad:
            raise ServeError(400, f"Token id {bad[0]} is outside the vocabulary [0, {self.vocab_size}).")
        if len(prompt) > self.prompt_len:
            raise ServeError(
                400,
                f"The prompt has {len(prompt)} tokens; this model takes at most {self.prompt_len} "
                "(its prefill program's length).",
            )
        return prompt

    def max_tokens(self, body: Dict[str, Any], prompt: List[int]) -> int:
        for key, value in _FIXED.items():
            if body.get(key, value) != value:
                raise ServeError(
                    400, f"'{key}' must be {json.dumps(value)}: this server decodes one sequence greedily."
                )
        if body.get("temperature", 0) not in (0, 0.0, None):
            raise ServeError(
                400, "'temperature' must be 0: this server decodes greedily (the programs take the argmax)."
            )
        n = body.get("max_tokens", 16)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ServeError(400, "'max_tokens' must be a positive integer.")
        room = self.cache_len - len(prompt) + 1  # the last new token is never fed back
        if n > room:
            raise ServeError(
                400,
                f"The prompt ({len(prompt)} tokens) and 'max_tokens' ({n}) do not fit this model's "
                f"cache of {self.cache_len} positions: ask for at most {room} tokens.",
            )
        return n

    def generate(self, prompt: List[int], max_tokens: int) -> Iterator[int]:
        """The new tokens, one by one (greedy), stopping after `max_tokens` or the end-of-text token."""
        ids = np.zeros((1, self.prompt_len), np.int32)
        ids[0, : len(prompt)] = prompt
        token, *cache = self.prefill(tp.Tensor(ids), tp.Tensor(np.array([len(prompt)], np.int32)))
        for pos in range(len(prompt), len(prompt) + max_tokens):
            value = int(np.from_dlpack(token)[0, 0])
            yield value
            if value == self.eos_token_id or pos == len(prompt) + max_tokens - 1:
                return
            token, *cache = self.decode(token, tp.Tensor(np.array([pos], np.int32)), *cache)

    def text(self, tokens: List[int]) -> str:
        return self.tokenizer.decode(tokens) if self.tokenizer is not None else ""
