"""GPT-2 KV-cache decoding in JAX (for ``jax.jit`` in the peer benchmarks), the design of
``examples/gpt2/model.py``: a fixed-length cache, a list of each layer's keys ``[B, n_head, head_dim, cache_len]``
(transposed) and values ``[B, n_head, cache_len, head_dim]``, written at ``pos`` with
``lax.dynamic_update_slice``, the positions after ``pos`` masked out; attention reads the cache as it came in
plus the new key and value. Built from the layers of
``examples/gpt2/reference.py`` (``xp=jax.numpy``); weights are the example's state dict, passed as arguments,
with the matrices of the linear layers stored ``[in, out]`` (``params(state)``), the layout of JAX's own
libraries (Flax's ``Dense`` kernel): XLA:CPU reads them as stored in a one-row product.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Tuple

import jax.numpy as jnp
from jax import lax

import reference as R


LINEAR_WEIGHTS = ("c_attn.weight", "c_proj.weight", "c_fc.weight", "lm_head.weight")


def params(state: Dict[str, Any]) -> Dict[str, Any]:
    """The example's state dict with the linear layers' weights transposed to ``[in, out]``, as JAX arrays."""
    return {k: jnp.asarray(v.T if k.endswith(LINEAR_WEIGHTS) else v) for k, v in state.items()}


def _linear(x: Any, w: Any, b: Any = None) -> Any:
    return x @ w if b is None else x @ w + b


def _block(p: Dict[str, Any], i: int, x: Any, n_head: int, eps: float, attend: Any) -> Tuple[Any, Any]:
    """One block; ``attend(q, k, v) -> (y [B, nh, T, hd], cache)`` is the attention, which places the new keys
    and values."""
    pre = f"transformer.h.{i}."
    B, T, C = x.shape
    h = R.layer_norm(jnp, x, p[pre + "ln_1.weight"], p[pre + "ln_1.bias"], eps)
    qkv = _linear(h, p[pre + "attn.c_attn.weight"], p[pre + "attn.c_attn.bias"])
    q, k, v = jnp.transpose(qkv.reshape(B, T, 3, n_head, C // n_head), (2, 0, 3, 1, 4))
    y, cache = attend(q, k, v)
    x = x + _linear(
        jnp.transpose(y, (0, 2, 1, 3)).reshape(B, T, C), p[pre + "attn.c_proj.weight"], p[pre + "attn.c_proj.bias"]
    )
    h = R.layer_norm(jnp, x, p[pre + "ln_2.weight"], p[pre + "ln_2.bias"], eps)
    h = R.gelu(jnp, _linear(h, p[pre + "mlp.c_fc.weight"], p[pre + "mlp.c_fc.bias"]))
    return x + _linear(h, p[pre + "mlp.c_proj.weight"], p[pre + "mlp.c_proj.bias"]), cache


def _greedy(p: Dict[str, Any], x: Any, eps: float) -> Any:
    x = R.layer_norm(jnp, x, p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], eps)
    return jnp.argmax(_linear(x, p["lm_head.weight"]), axis=-1).astype(jnp.int32)  # [B, 1]


def prefill(
    p: Dict[str, Any], idx: Any, length: Any, n_layer: int, n_head: int, cache_len: int, eps: float = 1e-5
) -> Tuple[Any, List[Any]]:
    T = idx.shape[1]
    x = p["transformer.wte.weight"][idx] + p["transformer.wpe.weight"][:T]
    causal = jnp.tril(jnp.ones((T, T), bool))

    def attend(q: Any, k: Any, v: Any) -> Tuple[Any, List[Any]]:
        att = (q @ jnp.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        y = R.softmax(jnp, jnp.where(causal, att, -jnp.inf)) @ v
        keys_pad = [(0, 0), (0, 0), (0, 0), (0, cache_len - T)]  # keys_t [B, nh, hd, L]
        values_pad = [(0, 0), (0, 0), (0, cache_len - T), (0, 0)]  # values [B, nh, L, hd]
        return y, [jnp.pad(jnp.swapaxes(k, -1, -2), keys_pad), jnp.pad(v, values_pad)]

    cache: List[Any] = []
    for i in range(n_layer):
        x, layer_cache = _block(p, i, x, n_head, eps, attend)
        cache += layer_cache
    last = lax.dynamic_slice_in_dim(x, length[0] - 1, 1, axis=1)
    return _greedy(p, last, eps), cache


def decode(
    p: Dict[str, Any], token: Any, pos: Any, cache: List[Any], n_layer: int, n_head: int, eps: float = 1e-5
) -> Tuple[Any, List[Any]]:
    x = p["transformer.wte.weight"][token] + p["transformer.wpe.weight"][pos]
    column = jnp.arange(cache[1].shape[2])
    here, hidden = column == pos[0], column > pos[0]
    new_cache: List[Any] = []
    for i in range(n_layer):

        def attend(q: Any, k: Any, v: Any, i: int = i) -> Tuple[Any, List[Any]]:
            keys_t, values = cache[2 * i], cache[2 * i + 1]
            scores = jnp.where(here, jnp.sum(q * k, -1, keepdims=True), q @ keys_t) * (1.0 / math.sqrt(q.shape[-1]))
            att = R.softmax(jnp, jnp.where(hidden, -jnp.inf, scores))
            y = jnp.where(here, 0.0, att) @ values + jnp.sum(jnp.where(here, att, 0.0), -1, keepdims=True) * v
            return y, [
                lax.dynamic_update_slice_in_dim(keys_t, jnp.swapaxes(k, -1, -2), pos[0], axis=3),
                lax.dynamic_update_slice_in_dim(values, v, pos[0], axis=2),
            ]

        x, layer_cache = _block(p, i, x, n_head, eps, attend)
        new_cache += layer_cache
    return _greedy(p, x, eps), new_cache
