"""A GPT-2 style decoder written with tripy modules.

Token and position embeddings, ``n_layer`` blocks of causal self-attention and a GELU MLP (pre-LayerNorm,
residual connections), a final LayerNorm and the LM head. Parameter names follow GPT-2 / nanoGPT
(``transformer.h.0.attn.c_attn.weight``, ...), so a converted PyTorch state dict loads as is.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

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
    # How the matrix weights (attention, MLP, LM head) are stored: "float32", "int8" (weight-only, per output
    # channel scales: tp.Linear(..., quant_dtype=tp.int8, weight_quant_dim=0)) or "bfloat16" (float32 math).
    weights: str = "float32"


WEIGHT_FORMATS = ("float32", "bfloat16", "int8")


class BFloat16Linear(tp.Module):
    """``y = x W^T + b`` with ``W`` stored as bfloat16 (half the bytes of float32) and the math in float32: the
    weight is cast to float32 in the program, which XLA:CPU does in a one-row product's loop (decoding reads
    2 bytes per weight; see tripy_backend/cpu_plan.py). Parameters as tp.Linear's: ``weight``
    ``[out_features, in_features]`` (bfloat16), ``bias`` ``[out_features]`` (float32)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = tp.zeros((out_features, in_features), dtype=tp.bfloat16)  # (set by load_state_dict)
        self.bias = tp.zeros((out_features,), dtype=tp.float32) if bias else None

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        leading = tuple(x.shape[:-1])
        out = tp.reshape(x, (-1, self.in_features)) @ tp.transpose(tp.cast(self.weight, tp.float32), 0, 1)
        if self.bias is not None:
            out = out + self.bias
        return tp.reshape(out, leading + (self.out_features,))


def linear(config: GPTConfig, in_features: int, out_features: int, bias: bool = True) -> tp.Module:
    """A matrix-weight layer stored as ``config.weights`` says (see :class:`GPTConfig`)."""
    if config.weights == "int8":
        return tp.Linear(in_features, out_features, bias, dtype=config.dtype, quant_dtype=tp.int8, weight_quant_dim=0)
    if config.weights == "bfloat16":
        return BFloat16Linear(in_features, out_features, bias)
    if config.weights != "float32":
        raise ValueError(f"weights must be one of {WEIGHT_FORMATS}, not {config.weights!r}")
    return tp.Linear(in_features, out_features, bias, dtype=config.dtype)


class CausalSelfAttention(tp.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.c_attn = linear(config, config.n_embd, 3 * config.n_embd)
        self.c_proj = linear(config, config.n_embd, config.n_embd)

    def qkv(self, x: tp.Tensor) -> Tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
        """Queries, keys and values ``[B, n_head, T, head_dim]`` of ``x [B, T, C]``."""
        B, T = x.shape[0], x.shape[1]
        qkv = self.c_attn(x)  # [B, T, 3C]
        qkv = tp.permute(tp.reshape(qkv, (B, T, 3, self.n_head, self.n_embd // self.n_head)), (2, 0, 3, 1, 4))
        return qkv[0], qkv[1], qkv[2]

    def attend(self, q: tp.Tensor, keys_t: tp.Tensor, v: tp.Tensor, hidden: tp.Tensor) -> tp.Tensor:
        """Attention of queries ``[B, nh, Tq, hd]`` over keys ``keys_t [B, nh, hd, Tk]`` (transposed) and values
        ``[B, nh, Tk, hd]``; ``hidden`` (bool, broadcastable to ``[Tq, Tk]``) is True where a query must not
        look. Returns ``[B, Tq, C]``."""
        att = (q @ keys_t) * (1.0 / math.sqrt(self.n_embd // self.n_head))  # [B, nh, Tq, Tk]
        att = tp.softmax(tp.masked_fill(att, hidden, float("-inf")), dim=-1)
        y = att @ v  # [B, nh, Tq, hd]
        return self.c_proj(tp.reshape(tp.permute(y, (0, 2, 1, 3)), (q.shape[0], q.shape[2], self.n_embd)))

    def forward(self, x: tp.Tensor) -> tp.Tensor:
        q, k, v = self.qkv(x)
        T = x.shape[1]
        future = tp.iota((T, T), dim=1, dtype=tp.int32) > tp.iota((T, T), dim=0, dtype=tp.int32)
        return self.attend(q, tp.transpose(k, -2, -1), v, future)

    def prefill(self, x: tp.Tensor, cache_len: int) -> Tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
        """``forward(x)``, and this layer's cache: keys ``[B, nh, hd, cache_len]`` (transposed) and values
        ``[B, nh, cache_len, hd]`` of the T positions of ``x``, then zeros."""
        q, k, v = self.qkv(x)
        T = x.shape[1]
        future = tp.iota((T, T), dim=1, dtype=tp.int32) > tp.iota((T, T), dim=0, dtype=tp.int32)
        keys_t = tp.transpose(k, -2, -1)
        y = self.attend(q, keys_t, v, future)
        return (
            y,
            tp.pad(keys_t, [(0, 0), (0, 0), (0, 0), (0, cache_len - T)]),
            tp.pad(v, [(0, 0), (0, 0), (0, cache_len - T), (0, 0)]),
        )

    def decode(
        self, x: tp.Tensor, keys_t: tp.Tensor, values: tp.Tensor, pos: tp.Tensor
    ) -> Tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
        """One new token ``x [B, 1, C]`` at position ``pos`` (int32 ``[1]``): attends over positions
        ``0..pos`` and returns the cache with its key written into column ``pos`` of ``keys_t [B, nh, hd, L]``
        and its value into row ``pos`` of ``values [B, nh, L, hd]``.

        Attention reads the cache as it came in, plus the new key and value, so that writing the new cache
        (a copy of all of it) is not on the way to the next layer: the program can do it on another core
        while the next layer's products run."""
        q, k, v = self.qkv(x)  # [B, nh, 1, hd]
        L = values.shape[2]
        column = tp.iota((1, L), dim=1, dtype=tp.int32)  # broadcasts against [B, nh, 1, L] and [B, nh, hd, L]
        here = column == pos
        scale = 1.0 / math.sqrt(self.n_embd // self.n_head)
        scores = tp.where(here, tp.sum(q * k, dim=-1, keepdim=True), q @ keys_t) * scale  # [B, nh, 1, L]
        att = tp.softmax(tp.masked_fill(scores, column > pos, float("-inf")), dim=-1)
        y = tp.where(here, 0.0, att) @ values + tp.sum(tp.where(here, att, 0.0), dim=-1, keepdim=True) * v
        y = self.c_proj(tp.reshape(tp.permute(y, (0, 2, 1, 3)), (x.shape[0], 1, self.n_embd)))
        new_keys_t = tp.where(here, tp.transpose(k, -2, -1), keys_t)
        new_values = tp.where(tp.iota((L, 1), dim=0, dtype=tp.int32) == pos, v, values)
        return y, new_keys_t, new_values


def gelu_tanh(x: tp.Tensor) -> tp.Tensor:
    """GPT-2's GELU: the tanh approximation (``gelu_new`` in Hugging Face; tp.gelu is the exact erf form)."""
    return 0.5 * x * (1.0 + tp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


class MLP(tp.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = linear(config, config.n_embd, 4 * config.n_embd)
        self.c_proj = linear(config, 4 * config.n_embd, config.n_embd)

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

    def prefill(self, x: tp.Tensor, cache_len: int) -> Tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
        y, keys_t, values = self.attn.prefill(self.ln_1(x), cache_len)
        x = x + y
        return x + self.mlp(self.ln_2(x)), keys_t, values

    def decode(
        self, x: tp.Tensor, keys_t: tp.Tensor, values: tp.Tensor, pos: tp.Tensor
    ) -> Tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
        y, keys_t, values = self.attn.decode(self.ln_1(x), keys_t, values, pos)
        x = x + y
        return x + self.mlp(self.ln_2(x)), keys_t, values


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
        self.lm_head = linear(config, config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx: tp.Tensor) -> tp.Tensor:
        T = idx.shape[1]
        pos = tp.iota((T,), dtype=tp.int32)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)  # [B, T, C] + [T, C]
        x = self.transformer.h(x)
        x = self.transformer.ln_f(x)
        return self.lm_head(x)

    # ---- KV-cache decoding -------------------------------------------------------------------------
    # Two programs with static shapes: prefill(prompt) -> (logits, cache), then decode(token, pos, cache)
    # -> (logits, cache) once per new token. The cache is a list of tensors, each layer's keys and values
    # (separate tensors: a program then writes each layer's output where it is made, instead of copying all
    # layers into one stacked tensor). It has a fixed length (positions past the current one are masked
    # out), so one compiled decode program serves every step, and it stays tripy tensors passed from one
    # call's outputs to the next call's inputs.

    def cache_shapes(self, batch: int, cache_len: int) -> List[Tuple[int, ...]]:
        """The shapes of the KV cache's ``2 * n_layer`` tensors: for each layer, its keys transposed,
        ``[batch, n_head, head_dim, cache_len]`` (so attention multiplies by them as stored), then its values,
        ``[batch, n_head, cache_len, head_dim]``."""
        c = self.config
        B, nh, hd = batch, c.n_head, c.n_embd // c.n_head
        return [(B, nh, hd, cache_len), (B, nh, cache_len, hd)] * c.n_layer

    def prefill(self, idx: tp.Tensor, length: tp.Tensor, cache_len: int) -> Tuple[tp.Tensor, List[tp.Tensor]]:
        """Runs the prompt ``idx [B, P]`` (int32; positions ``length`` and later are padding, which causal
        attention keeps from affecting the real ones). Returns the logits ``[B, vocab]`` at position
        ``length - 1`` (``length``: int32 ``[1]``) and the cache (:meth:`cache_shapes`) with positions
        ``0..P-1`` filled. ``P <= cache_len <= block_size``."""
        T = idx.shape[1]
        x = self.transformer.wte(idx) + self.transformer.wpe(tp.iota((T,), dtype=tp.int32))
        cache: List[tp.Tensor] = []
        for block in self.transformer.h:
            x, keys_t, values = block.prefill(x, cache_len)
            cache += [keys_t, values]
        x = tp.gather(x, 1, length - 1)  # [B, 1, C]: only the last real position needs logits
        return self._logits(x), cache

    def decode(self, token: tp.Tensor, pos: tp.Tensor, cache: Sequence[tp.Tensor]) -> Tuple[tp.Tensor, List[tp.Tensor]]:
        """One step: ``token [B, 1]`` (int32) at position ``pos`` (int32 ``[1]``, below the cache length)
        with the cache of the positions before it. Returns the logits ``[B, vocab]`` for the next token
        and the cache with position ``pos`` written."""
        x = self.transformer.wte(token) + self.transformer.wpe(pos)  # [B, 1, C] + [1, C]
        new_cache: List[tp.Tensor] = []
        for i, block in enumerate(self.transformer.h):
            x, keys_t, values = block.decode(x, cache[2 * i], cache[2 * i + 1], pos)
            new_cache += [keys_t, values]
        return self._logits(x), new_cache

    def _logits(self, x: tp.Tensor) -> tp.Tensor:
        """``[B, 1, C]`` hidden states to ``[B, vocab]`` logits."""
        return tp.reshape(self.lm_head(self.transformer.ln_f(x)), (x.shape[0], self.config.vocab_size))


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


_MATRIX_SUFFIXES = _CONV1D_SUFFIXES + ("lm_head.weight",)


def convert_weights(state: Dict[str, np.ndarray], weights: str) -> Dict[str, np.ndarray]:
    """A float32 state dict (``model.GPT``'s layout) for a model whose ``config.weights`` is `weights`:
    bfloat16 matrix weights, or (int8) the float32 weights and a ``weight_scale`` per matrix, one scale per
    output channel, its largest magnitude over 127 (nvtripy's checkpoint layout: the program quantizes the
    weight with these scales once, when it is compiled)."""
    if weights == "float32":
        return dict(state)
    out = {}
    for name, value in state.items():
        if not name.endswith(_MATRIX_SUFFIXES):
            out[name] = value
        elif weights == "bfloat16":
            out[name] = value.astype(tp.bfloat16.numpy_dtype)
        else:
            out[name] = value
            amax = np.abs(value.astype(np.float32)).max(axis=1)
            out[name[: -len("weight")] + "weight_scale"] = (np.maximum(amax, 1e-12) / 127.0).astype(np.float32)
    return out


def random_state_dict(config: GPTConfig, seed: int = 0, std: float = 0.02) -> Dict[str, np.ndarray]:
    """Random weights in the style of GPT-2's initialization: normal(0, std) for matrices, embeddings
    and biases (nonzero biases, so a test notices one that is dropped), LayerNorm scales near 1; float32
    (``convert_weights`` makes them bfloat16 or int8-ready)."""
    rng = np.random.default_rng(seed)
    state = {}
    for name, p in GPT(dataclasses.replace(config, weights="float32")).state_dict().items():
        value = rng.normal(0.0, std, size=p.shape)
        if ".ln_" in name and name.endswith(".weight"):
            value += 1.0
        state[name] = value.astype(config.dtype.numpy_dtype)
    return state
