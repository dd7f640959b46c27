"""A GPT-2 style decoder written with tripy modules.

Token and position embeddings, ``n_layer`` blocks of causal self-attention and a GELU MLP (pre-LayerNorm,
residual connections), a final LayerNorm and the LM head. Parameter names follow GPT-2 / nanoGPT
(``transformer.h.0.attn.c_attn.weight``, ...), so a converted PyTorch state dict loads as is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

import tripy as tp


@dataclass
class GPTConfig:
    vocab_size: int = 50257
    block_size: int = 1024  # the longest sequence (number of learned positions)
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    layer_norm_eps: float = 1e-5
    dtype: Any = tp.float32


class CausalSelfAttention(tp.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.c_attn = tp.Linear(config.n_embd, 3 * config.n_embd, dtype=config.dtype)
        self.c_proj = tp.Linear(config.n_embd, config.n_embd, dtype=config.dtype)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        B, T = x.shape[0], x.shape[1]
        head_dim = self.n_embd // self.n_head
        qkv = self.c_attn(x)  # [B, T, 3C]
        qkv = tp.permute(tp.reshape(qkv, (B, T, 3, self.n_head, head_dim)), (2, 0, 3, 1, 4))  # [3, B, nh, T, hd]
        q, k, v = qkv[0], qkv[1], qkv[2]

        att = (q @ tp.transpose(k, -2, -1)) * (1.0 / math.sqrt(head_dim))  # [B, nh, T, T]
        # Causal mask: position i attends to positions <= i.
        future = tp.iota((T, T), dim=1, dtype=tp.int32) > tp.iota((T, T), dim=0, dtype=tp.int32)
        att = tp.softmax(tp.masked_fill(att, future, float("-inf")), dim=-1)
        y = att @ v  # [B, nh, T, hd]
        y = tp.reshape(tp.permute(y, (0, 2, 1, 3)), (B, T, self.n_embd))
        return self.c_proj(y)


def gelu_tanh(x: tp.Tensor) -> tp.Tensor:
    """GPT-2's GELU: the tanh approximation (``gelu_new`` in Hugging Face; tp.gelu is the exact erf form)."""
    return 0.5 * x * (1.0 + tp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


class MLP(tp.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = tp.Linear(config.n_embd, 4 * config.n_embd, dtype=config.dtype)
        self.c_proj = tp.Linear(4 * config.n_embd, config.n_embd, dtype=config.dtype)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        return self.c_proj(gelu_tanh(self.c_fc(x)))


class Block(tp.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = tp.LayerNorm(config.n_embd, dtype=config.dtype, eps=config.layer_norm_eps)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = tp.LayerNorm(config.n_embd, dtype=config.dtype, eps=config.layer_norm_eps)
        self.mlp = MLP(config)

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(tp.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.wte = tp.Embedding(config.vocab_size, config.n_embd, dtype=config.dtype)
        self.wpe = tp.Embedding(config.block_size, config.n_embd, dtype=config.dtype)
        self.h = tp.Sequential(*[Block(config) for _ in range(config.n_layer)])
        self.ln_f = tp.LayerNorm(config.n_embd, dtype=config.dtype, eps=config.layer_norm_eps)


class GPT(tp.Module):
    """``GPT(config)(idx)``: int32 token ids ``[B, T]`` to logits ``[B, T, vocab_size]``."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.transformer = Transformer(config)
        self.lm_head = tp.Linear(config.n_embd, config.vocab_size, bias=False, dtype=config.dtype)

    def forward(self, idx: tp.Tensor) -> tp.Tensor:
        T = idx.shape[1]
        pos = tp.iota((T,), dtype=tp.int32)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)  # [B, T, C] + [T, C]
        x = self.transformer.h(x)
        x = self.transformer.ln_f(x)
        return self.lm_head(x)


# ---- weights ---------------------------------------------------------------------------------------
_CONV1D_SUFFIXES = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def convert_state_dict(state: Dict[str, np.ndarray], config: GPTConfig) -> Dict[str, np.ndarray]:
    """Accept a nanoGPT / ``torch.nn.Linear`` style state dict as is, and convert a Hugging Face
    ``GPT2LMHeadModel`` one: its ``Conv1D`` weights are stored ``[in, out]`` (transposed here), it may
    carry attention-mask buffers (dropped), and it may leave out the tied ``lm_head.weight``."""
    state = {k: v for k, v in state.items() if not k.endswith((".attn.bias", ".attn.masked_bias"))}
    state = {(k if k.startswith(("transformer.", "lm_head.")) else f"transformer.{k}"): v for k, v in state.items()}
    c = config.n_embd
    first = state.get("transformer.h.0.attn.c_attn.weight")
    if first is not None and tuple(first.shape) == (c, 3 * c):  # Conv1D layout
        state = {k: (np.ascontiguousarray(v.T) if k.endswith(_CONV1D_SUFFIXES) else v) for k, v in state.items()}
    if "lm_head.weight" not in state and "transformer.wte.weight" in state:
        state["lm_head.weight"] = state["transformer.wte.weight"]  # tied embeddings
    return state


def random_state_dict(config: GPTConfig, seed: int = 0, std: float = 0.02) -> Dict[str, np.ndarray]:
    """Random weights in the style of GPT-2's initialization: normal(0, std) for matrices, embeddings
    and biases (nonzero biases, so a test notices one that is dropped), LayerNorm scales near 1."""
    rng = np.random.default_rng(seed)
    state = {}
    for name, p in GPT(config).state_dict().items():
        value = rng.normal(0.0, std, size=p.shape)
        if ".ln_" in name and name.endswith(".weight"):
            value += 1.0
        state[name] = value.astype(config.dtype.numpy_dtype)
    return state
