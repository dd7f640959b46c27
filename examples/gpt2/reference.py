"""The same GPT-2 network as model.py, written against an array module: NumPy (``xp=numpy``, the test's
reference) or ``jax.numpy`` (``xp=jax.numpy``, under ``jax.jit`` in the benchmark).

``params`` is the state dict of ``model.GPT`` (names to arrays); Linear weights are ``[out, in]``.
"""

from __future__ import annotations

import math
from typing import Any, Dict

import numpy as np


def layer_norm(xp: Any, x: Any, w: Any, b: Any, eps: float) -> Any:
    mean = xp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = xp.mean(centered * centered, axis=-1, keepdims=True)
    return centered / xp.sqrt(var + eps) * w + b


def linear(x: Any, w: Any, b: Any = None) -> Any:
    out = x @ w.T
    return out if b is None else out + b


def gelu(xp: Any, x: Any) -> Any:
    return 0.5 * x * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def softmax(xp: Any, x: Any) -> Any:
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def forward(params: Dict[str, Any], idx: Any, n_layer: int, n_head: int, eps: float = 1e-5, xp: Any = np) -> Any:
    """Logits ``[B, T, vocab]`` for int token ids ``idx`` ``[B, T]``."""
    p = params
    B, T = idx.shape
    x = p["transformer.wte.weight"][idx] + p["transformer.wpe.weight"][:T]
    C = x.shape[-1]
    hd = C // n_head
    causal = np.tril(np.ones((T, T), dtype=bool))
    for i in range(n_layer):
        pre = f"transformer.h.{i}."
        h = layer_norm(xp, x, p[pre + "ln_1.weight"], p[pre + "ln_1.bias"], eps)
        qkv = linear(h, p[pre + "attn.c_attn.weight"], p[pre + "attn.c_attn.bias"])
        qkv = xp.transpose(qkv.reshape(B, T, 3, n_head, hd), (2, 0, 3, 1, 4))
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = (q @ xp.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(hd))
        att = softmax(xp, xp.where(causal, att, -np.inf))
        y = xp.transpose(att @ v, (0, 2, 1, 3)).reshape(B, T, C)
        x = x + linear(y, p[pre + "attn.c_proj.weight"], p[pre + "attn.c_proj.bias"])
        h = layer_norm(xp, x, p[pre + "ln_2.weight"], p[pre + "ln_2.bias"], eps)
        h = gelu(xp, linear(h, p[pre + "mlp.c_fc.weight"], p[pre + "mlp.c_fc.bias"]))
        x = x + linear(h, p[pre + "mlp.c_proj.weight"], p[pre + "mlp.c_proj.bias"])
    x = layer_norm(xp, x, p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], eps)
    return linear(x, p["lm_head.weight"])
