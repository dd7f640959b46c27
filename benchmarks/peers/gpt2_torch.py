"""GPT-2 in PyTorch for the peer benchmarks: eager PyTorch, and the model ONNX Runtime runs (exported from it).

The same network and KV-cache design as ``examples/gpt2/model.py``: ``forward(idx)`` (all logits),
``prefill(idx, length)`` and ``decode(token, pos, cache)`` with a fixed-length cache
``[n_layer, 2, B, n_head, cache_len, head_dim]`` written at ``pos`` (``index_copy``), the rows after
``pos`` masked out. Weights are the example's state dict (``torch.nn.Linear`` layout), held as buffers.
"""

from __future__ import annotations

import math
from typing import Dict, Tuple

import numpy as np
import torch
import torch.nn.functional as F


class TorchGPT(torch.nn.Module):
    def __init__(self, state: Dict[str, np.ndarray], n_layer: int, n_head: int, cache_len: int = 0,
                 eps: float = 1e-5) -> None:
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

    def finish_block(self, i: int, x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     visible: torch.Tensor) -> torch.Tensor:
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        att = att.masked_fill(~visible, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(x.shape)
        pre = f"transformer.h.{i}."
        x = x + self.lin(y, pre + "attn.c_proj")
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
            x = self.finish_block(i, x, q, k, v, causal)
        return self.logits(x)

    def prefill(self, idx: torch.Tensor, length: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        B, T = idx.shape
        x = self.embed(idx, torch.arange(T))
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        caches = []
        for i in range(self.n_layer):
            q, k, v = self.qkv(i, x)
            x = self.finish_block(i, x, q, k, v, causal)
            caches.append(F.pad(torch.stack([k, v]), (0, 0, 0, self.cache_len - T)))
        last = x.index_select(1, length - 1)  # [B, 1, C]
        return self.logits(last)[:, 0], torch.stack(caches)

    def decode(self, token: torch.Tensor, pos: torch.Tensor, cache: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        x = self.embed(token, pos)  # [B, 1, C]
        visible = torch.arange(cache.shape[4]) <= pos
        caches = []
        for i in range(self.n_layer):
            q, k, v = self.qkv(i, x)
            kv = cache[i].index_copy(3, pos, torch.stack([k, v]))
            x = self.finish_block(i, x, q, kv[0], kv[1], visible)
            caches.append(kv)
        return self.logits(x)[:, 0], torch.stack(caches)


class Prefill(torch.nn.Module):
    """``prefill`` as a module's forward (for the ONNX export), with the greedy token."""

    def __init__(self, gpt: TorchGPT) -> None:
        super().__init__()
        self.gpt = gpt

    def forward(self, idx: torch.Tensor, length: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        logits, cache = self.gpt.prefill(idx, length)
        return logits.argmax(-1, keepdim=True), cache


class Decode(torch.nn.Module):
    """``decode`` as a module's forward (for the ONNX export), with the greedy token."""

    def __init__(self, gpt: TorchGPT) -> None:
        super().__init__()
        self.gpt = gpt

    def forward(self, token: torch.Tensor, pos: torch.Tensor, cache: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        logits, cache = self.gpt.decode(token, pos, cache)
        return logits.argmax(-1, keepdim=True), cache
