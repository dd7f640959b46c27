"""KV-cache decoding and checkpoint loading of the GPT-2 example (examples/gpt2), on a small config,
against the NumPy forward of examples/gpt2/reference.py."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import tripy as tp

GPT2_DIR = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt2"
sys.path.insert(0, str(GPT2_DIR))  # run.py and weights.py import model.py by name


def _load(name):
    spec = importlib.util.spec_from_file_location(f"gpt2_kv_example_{name}", GPT2_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


model_lib = _load("model")
reference = _load("reference")
run_lib = _load("run")
weights_lib = _load("weights")

CONFIG = model_lib.GPTConfig(vocab_size=96, block_size=40, n_layer=2, n_head=4, n_embd=32)
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


@pytest.fixture(scope="module")
def weights():
    return model_lib.random_state_dict(CONFIG, seed=1, std=0.2)


@pytest.fixture(scope="module")
def model(weights):
    m = model_lib.GPT(CONFIG)
    m.load_state_dict(weights)
    return m


def i32(*values):
    return tp.Tensor(np.array(values, np.int32))


def test_prefill_and_decode_logits_match_numpy(model, weights):
    seq = np.random.default_rng(3).integers(0, CONFIG.vocab_size, size=(2, 11)).astype(np.int32)
    expected = reference.forward(weights, seq, CONFIG.n_layer, CONFIG.n_head)  # [2, 11, vocab]
    prompt = np.zeros((2, 8), np.int32)
    prompt[:, :5] = seq[:, :5]  # 5 real tokens, then padding the cache rows of which decode overwrites
    logits, cache = model.prefill(tp.Tensor(prompt), i32(5), 16)
    assert cache.shape == model.cache_shape(2, 16) == (2, 2, 2, 4, 16, 8)
    assert np.allclose(np.from_dlpack(logits), expected[:, 4], atol=1e-4)
    for pos in range(5, 11):
        logits, cache = model.decode(tp.Tensor(seq[:, pos:pos + 1]), i32(pos), cache)
        assert np.allclose(np.from_dlpack(logits), expected[:, pos], atol=1e-4), pos


def test_compiled_generation_matches_no_cache_path_without_compiling(model, weights):
    prompt, new = [7, 3, 88, 41, 5], 12
    prompt_len = run_lib.padded_length(len(prompt), 8, CONFIG.block_size)
    cache_len = 24
    with run_lib.CompileCounter() as at_start:
        prefill, decode = run_lib.compile_kv_programs(model, prompt_len, cache_len)
    assert at_start.count == 2  # the counter sees compilations
    with run_lib.CompileCounter() as during:
        tokens, first, total = run_lib.generate_with_cache(prefill, decode, prompt, new, prompt_len)
    assert during.count == 0 and 0 < first <= total

    step = run_lib.compile_step(model, CONFIG, opt_len=16)
    no_cache, _ = run_lib.generate(step, prompt, new, bucket=8, block_size=CONFIG.block_size)
    assert tokens == no_cache
    expected = list(prompt)
    for _ in range(new):
        logits = reference.forward(weights, np.array([expected], np.int32), CONFIG.n_layer, CONFIG.n_head)
        expected.append(int(np.argmax(logits[0, -1])))
    assert tokens == expected


def test_cache_length_covers_prompt_and_new_tokens():
    assert run_lib.cache_length(16, 64, 1024) == 128  # 79 rows needed, rounded up to 64s
    assert run_lib.cache_length(16, 49, 1024) == 64
    assert run_lib.cache_length(60, 64, 100) == 100  # never past block_size


# ---- checkpoints -----------------------------------------------------------------------------------------
def hugging_face_layout(weights):
    """``GPT2LMHeadModel``'s layout of `weights`: Conv1D weights [in, out], no ``transformer.`` prefix, mask
    buffers, no (tied) LM head."""
    hf = {}
    for k, v in weights.items():
        if k == "lm_head.weight":
            continue
        hf[k.removeprefix("transformer.")] = np.ascontiguousarray(v.T) if k.endswith(CONV1D) else v
    for i in range(CONFIG.n_layer):
        hf[f"h.{i}.attn.bias"] = np.tril(np.ones((1, 1, CONFIG.block_size, CONFIG.block_size), np.float32))
    return hf


def numpy_forward_hf(hf, idx):
    """An independent forward over the Hugging Face layout (x @ W for Conv1D, tied LM head)."""
    params = {"transformer." + k: (v.T if k.endswith(CONV1D) else v) for k, v in hf.items()}
    params["lm_head.weight"] = hf["wte.weight"]
    return reference.forward(params, idx, CONFIG.n_layer, CONFIG.n_head)


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_checkpoint_in_hugging_face_layout(tmp_path, suffix):
    rng = np.random.default_rng(5)
    hf = {k: (v + rng.normal(0, 0.05, v.shape)).astype(np.float32) if ".attn.bias" not in k else v
          for k, v in hugging_face_layout(model_lib.random_state_dict(CONFIG, seed=2, std=0.2)).items()}
    path = str(tmp_path / f"model{suffix}")
    if suffix == ".npz":
        np.savez(path, **hf)
    else:
        safetensors_numpy = pytest.importorskip("safetensors.numpy")
        safetensors_numpy.save_file(hf, path)
    lines = []
    state = weights_lib.load_checkpoint(path, CONFIG, progress=lines.append)
    assert lines[-1] == f"reading model{suffix}: {len(hf)}/{len(hf)} tensors, 0 MB" and len(lines) >= 5

    model = model_lib.GPT(CONFIG)
    model.load_state_dict(state)
    idx = rng.integers(0, CONFIG.vocab_size, size=(1, 9)).astype(np.int32)
    expected = numpy_forward_hf(hf, idx)
    assert np.abs(expected).max() > 1.0
    assert np.allclose(np.from_dlpack(model(tp.Tensor(idx))), expected, atol=1e-4)


def test_checkpoint_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown checkpoint format"):
        weights_lib.load_checkpoint(str(tmp_path / "model.bin"), CONFIG)
