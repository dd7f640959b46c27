"""GPT-2 in PyTorch for the peer benchmarks: eager PyTorch, and the model ONNX Runtime runs (exported from it).

The same network and KV-cache design as ``examples/gpt2/model.py``: ``forward(idx)`` (all logits),
``prefill(idx, length)`` and ``decode(token, pos, cache)`` with a fixed-length cache, a list of each layer's keys
``[B, n_head, head_dim, cache_len]`` (transposed) and values ``[B, n_head, cache_len, head_dim]``, written at
``pos``, the positions after ``pos`` masked out; attention reads the cache as it came in plus the new key and
value. Weights are the example's state dict (``torch.nn.Linear`` layout), held as buffers.
"""

from __future__ import annotations

import math
from typing import Dict, List, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F


class TorchGPT(torch.nn.Module):
    def __init__(
        self, state: Dict[str, np.ndarray], n_layer: int, n_head: int, cache_len: int = 0, eps: float = 1e-5
    ) -> None:
        super().__init__()
        for name, value in state.items():
            self.register_buffer(name.replace(".", "_"), torch.from_numpy(value))
        self.n_layer, self.n_head, self.cache_len, self.eps = n_layer, n_head, cache_len, eps

    def p(self, name: str) -> torch.Tensor:
        return getattr(self, name.replace(".", "_"))

    def ln(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.p(name + ".weight"), self.p(name + ".bias"), self.eps)

    def lin(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.linear(x, self.p(name + ".weight"), self.p(name + ".bias"))

    def qkv(self, i: int, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        qkv = self.lin(self.ln(x, f"transformer.h.{i}.ln_1"), f"transformer.h.{i}.attn.c_attn")
        return qkv.view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)  # [3, B, nh, T, hd]

    def attend(self, q: torch.Tensor, keys_t: torch.Tensor, v: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
        att = (q @ keys_t) * (1.0 / math.sqrt(q.shape[-1]))
        return att.masked_fill(~visible, float("-inf")).softmax(-1) @ v

    def finish_block(self, i: int, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The block after attention: ``y [B, nh, T, hd]`` is the attention's output."""
        pre = f"transformer.h.{i}."
        x = x + self.lin(y.transpose(1, 2).reshape(x.shape), pre + "attn.c_proj")
        h = F.gelu(self.lin(self.ln(x, pre + "ln_2"), pre + "mlp.c_fc"), approximate="tanh")
        return x + self.lin(h, pre + "mlp.c_proj")

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(self.ln(x, "transformer.ln_f"), self.p("lm_head.weight"))

    def embed(self, idx: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return self.p("transformer.wte.weight")[idx] + self.p("transformer.wpe.weight")[positions]

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        x = self.embed(idx, torch.arange(T))
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        for i in range(self.n_layer):
            q, k, v = self.qkv(i, x)
            x = self.finish_block(i, x, self.attend(q, k.transpose(-1, -2), v, causal))
        return self.logits(x)

    def prefill(self, idx: torch.Tensor, length: torch.Tensor) -> Tuple[torch.Tensor, List[torch.Tensor]]:
        B, T = idx.shape
        x = self.embed(idx, torch.arange(T))
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        cache = []
        for i in range(self.n_layer):
            q, k, v = self.qkv(i, x)
            x = self.finish_block(i, x, self.attend(q, k.transpose(-1, -2), v, causal))
            cache += [F.pad(k.transpose(-1, -2), (0, self.cache_len - T)), F.pad(v, (0, 0, 0, self.cache_len - T))]
        last = x.index_select(1, length - 1)  # [B, 1, C]
        return self.logits(last)[:, 0], cache

    def decode(
        self, token: torch.Tensor, pos: torch.Tensor, cache: Sequence[torch.Tensor]
    ) -> Tuple[torch.Tensor, List[torch.Tensor]]:
        x = self.embed(token, pos)  # [B, 1, C]
        column = torch.arange(cache[1].shape[2])
        here, hidden = column == pos, column > pos
        new_cache = []
        for i in range(self.n_layer):
            q, k, v = self.qkv(i, x)  # [B, nh, 1, hd]
            keys_t, values = cache[2 * i], cache[2 * i + 1]
            scores = torch.where(here, (q * k).sum(-1, keepdim=True), q @ keys_t) * (1.0 / math.sqrt(q.shape[-1]))
            att = scores.masked_fill(hidden, float("-inf")).softmax(-1)  # [B, nh, 1, L]
            y = torch.where(here, 0.0, att) @ values + torch.where(here, att, 0.0).sum(-1, keepdim=True) * v
            x = self.finish_block(i, x, y)
            new_cache += [torch.where(here, k.transpose(-1, -2), keys_t), torch.where(here[:, None], v, values)]
        return self.logits(x)[:, 0], new_cache


class Prefill(torch.nn.Module):
    """``prefill`` as a module's forward (for the ONNX export), with the greedy token: (token, *cache)."""

    def __init__(self, gpt: TorchGPT) -> None:
        super().__init__()
        self.gpt = gpt

    def forward(self, idx: torch.Tensor, length: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        logits, cache = self.gpt.prefill(idx, length)
        return (logits.argmax(-1, keepdim=True), *cache)


class Decode(torch.nn.Module):
    """``decode`` as a module's forward (for the ONNX export), with the greedy token: (token, *cache)."""

    def __init__(self, gpt: TorchGPT) -> None:
        super().__init__()
        self.gpt = gpt

    def forward(self, token: torch.Tensor, pos: torch.Tensor, *cache: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        logits, new_cache = self.gpt.decode(token, pos, cache)
        return (logits.argmax(-1, keepdim=True), *new_cache)
