"""Tensor-parallel GPT-2: the example's own modules, with their weights split across the devices of a mesh.

Megatron-LM's split, written as shardings for XLA's SPMD partitioner (which inserts the communication):

* column-parallel: the attention's QKV projection (``c_attn``) and the MLP's first layer (``c_fc``) are split
  along their output features, so each device computes its share of the heads' queries, keys and values and of
  the MLP's hidden units;
* row-parallel: the projections back to the model width (``attn.c_proj``, ``mlp.c_proj``) are split along their
  input features; each device's partial sums are added across devices (an all-reduce), once per projection;
* embeddings, LayerNorms and the LM head are whole on every device;
* the KV cache is split by heads (``cache_sharding``).

    # 2 host devices (the flag must be set before tripy starts):
    XLA_FLAGS=--xla_force_host_platform_device_count=2 python examples/gpt2/tensor_parallel.py
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

import tripy as tp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import GPT  # noqa: E402


def shard_model(model: GPT, mesh: tp.Mesh, axis: str = "model") -> None:
    """Split `model`'s block weights over the mesh axis `axis`, in place (see the module docstring). A ``tp.Linear``
    weight is ``[out_features, in_features]``."""
    columns, rows = tp.Sharding(mesh, (axis, None)), tp.Sharding(mesh, (None, axis))
    for block in model.transformer.h:
        for layer in (block.attn.c_attn, block.mlp.c_fc):  # column-parallel
            layer.weight = tp.shard(layer.weight, columns)
            layer.bias = tp.shard(layer.bias, tp.Sharding(mesh, (axis,)))
        for layer in (block.attn.c_proj, block.mlp.c_proj):  # row-parallel
            layer.weight = tp.shard(layer.weight, rows)


def cache_sharding(mesh: tp.Mesh, axis: str = "model") -> tp.Sharding:
    """The KV cache's tensors (``GPT.cache_shapes``: ``[batch, n_head, ...]``) split by heads."""
    return tp.Sharding(mesh, (None, axis, None, None))


def main(argv: Sequence[str] = ()) -> None:
    """Greedy tokens of a small random GPT-2 on one device, then tensor-parallel on ``--devices``: the same."""
    from model import GPTConfig, random_state_dict
    from run import compile_kv_programs, generate_with_cache

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, default=2, help="devices to split the model over (default 2)")
    args = parser.parse_args(list(argv) or None)
    config = GPTConfig(vocab_size=128, block_size=64, n_layer=2, n_head=4, n_embd=64)
    model = GPT(config)
    model.load_state_dict(random_state_dict(config, std=0.2))
    prompt, new_tokens, prompt_len, cache_len = [3, 14, 15, 92, 65], 8, 8, 16
    prefill, decode = compile_kv_programs(model, prompt_len, cache_len)
    one, _, _ = generate_with_cache(prefill, decode, prompt, new_tokens, prompt_len)
    mesh = tp.Mesh((args.devices,), ("model",))
    shard_model(model, mesh)
    prefill, decode = compile_kv_programs(model, prompt_len, cache_len, cache_sharding=cache_sharding(mesh))
    split, _, _ = generate_with_cache(prefill, decode, prompt, new_tokens, prompt_len)
    print(f"1 device:    {one}\n{args.devices} devices:   {split}")
    if one != split:
        raise SystemExit("the tensor-parallel model generated other tokens")


if __name__ == "__main__":
    main()
