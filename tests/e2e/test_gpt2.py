"""The GPT-2 example (examples/gpt2) against a pure-NumPy implementation of the same network: in eager
mode, compiled with a dynamic sequence length (two lengths from one executable), KV-cache decoding, and
checkpoints in Hugging Face's layout."""

import dataclasses
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import tripy as tp
import tripy_backend

GPT2_DIR = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt2"
sys.path.insert(0, str(GPT2_DIR))  # run.py and weights.py import model.py by name


def _load(name):
    spec = importlib.util.spec_from_file_location(f"gpt2_example_{name}", GPT2_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


model_lib = _load("model")
reference = _load("reference")
run_lib = _load("run")
weights_lib = _load("weights")

CONFIG = model_lib.GPTConfig(vocab_size=128, block_size=32, n_layer=2, n_head=4, n_embd=64)
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")  # Hugging Face Conv1D


@pytest.fixture(scope="module")
def weights():
    # A larger spread than GPT-2's 0.02 makes attention far from uniform, so the test is sensitive.
    return model_lib.random_state_dict(CONFIG, seed=0, std=0.2)


@pytest.fixture(scope="module")
def model(weights):
    m = model_lib.GPT(CONFIG)
    m.load_state_dict(weights)
    return m


def ids(batch, length, seed):
    return np.random.default_rng(seed).integers(0, CONFIG.vocab_size, size=(batch, length)).astype(np.int32)


def check(out, weights, idx):
    expected = reference.forward(weights, idx, CONFIG.n_layer, CONFIG.n_head)
    got = np.from_dlpack(out)
    assert got.shape == expected.shape == idx.shape + (CONFIG.vocab_size,)
    assert np.abs(expected).max() > 1.0  # the logits are not trivially small
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-4), np.abs(got - expected).max()


def test_parameter_names_follow_gpt2(model, weights):
    names = list(model.state_dict())
    assert names == list(weights)
    assert "transformer.h.1.attn.c_attn.weight" in names and "lm_head.weight" in names
    assert model.state_dict()["transformer.h.0.attn.c_attn.weight"].shape == (3 * 64, 64)


@pytest.mark.parametrize("length", [5, 12])
def test_eager_matches_numpy(model, weights, length):
    idx = ids(2, length, seed=length)
    check(model(tp.Tensor(idx)), weights, idx)


def test_compiled_dynamic_sequence_length(model, weights):
    exe = tp.compile(model, args=[tp.InputInfo((2, (1, 8, CONFIG.block_size)), tp.int32)])
    for length in (3, 16):
        idx = ids(2, length, seed=100 + length)
        check(exe(tp.Tensor(idx)), weights, idx)


def test_hugging_face_layout_is_converted(weights):
    hf = {}
    for k, v in weights.items():
        if k.endswith(model_lib._CONV1D_SUFFIXES):
            v = np.ascontiguousarray(v.T)  # Conv1D stores [in, out]
        if k != "lm_head.weight":
            hf[k] = v
    hf["transformer.h.0.attn.bias"] = np.tril(np.ones((1, 1, 32, 32), np.float32))  # a mask buffer
    converted = model_lib.convert_state_dict(hf, CONFIG)
    assert set(converted) == set(weights)
    for k, v in converted.items():
        expected = weights["transformer.wte.weight"] if k == "lm_head.weight" else weights[k]
        assert np.array_equal(v, expected), k


def test_greedy_generation_matches_numpy(model, weights):
    prompt = [5, 17, 99]
    step = run_lib.compile_step(model, CONFIG, opt_len=8)
    tokens, _ = run_lib.generate(step, prompt, 4, bucket=8, block_size=CONFIG.block_size)
    expected = list(prompt)
    for _ in range(4):
        logits = reference.forward(weights, np.array([expected], np.int32), CONFIG.n_layer, CONFIG.n_head)
        expected.append(int(np.argmax(logits[0, -1])))
    assert tokens == expected


# ---- KV cache ------------------------------------------------------------------------------------------
def i32(*values):
    return tp.Tensor(np.array(values, np.int32))


def test_prefill_and_decode_logits_match_numpy(model, weights):
    seq = np.random.default_rng(3).integers(0, CONFIG.vocab_size, size=(2, 11)).astype(np.int32)
    expected = reference.forward(weights, seq, CONFIG.n_layer, CONFIG.n_head)  # [2, 11, vocab]
    prompt = np.zeros((2, 8), np.int32)
    prompt[:, :5] = seq[:, :5]  # 5 real tokens, then padding the cache rows of which decode overwrites
    logits, cache = model.prefill(tp.Tensor(prompt), i32(5), 16)
    assert (
        [c.shape for c in cache] == model.cache_shapes(2, 16) == [(2, 4, 16, 16)] * 4
    )  # [B, nh, hd, L], [B, nh, L, hd]
    keys_t, values = (np.from_dlpack(c) for c in cache[:2])  # layer 0: the prompt's positions, then zeros
    assert np.all(keys_t[..., 8:] == 0) and np.all(values[:, :, 8:] == 0) and np.any(values[:, :, :5] != 0)
    assert np.allclose(np.from_dlpack(logits), expected[:, 4], atol=1e-4)
    for pos in range(5, 11):
        logits, cache = model.decode(tp.Tensor(seq[:, pos : pos + 1].copy()), i32(pos), cache)
        cache = [c.eval() for c in cache]  # eager: the next step's graph then starts from these values
        assert np.allclose(np.from_dlpack(logits), expected[:, pos], atol=1e-4), pos
        assert np.array_equal(np.from_dlpack(cache[1])[:, :, pos + 1 :], values[:, :, pos + 1 :])  # rest untouched


def test_compiled_generation_matches_no_cache_path_without_compiling(model, weights):
    prompt, new = [7, 3, 88, 41, 5], 12
    prompt_len = run_lib.padded_length(len(prompt), 8, CONFIG.block_size)
    cache_len = 24
    before = tripy_backend.compilation_count()
    prefill, decode = run_lib.compile_kv_programs(model, prompt_len, cache_len)
    # prefill and decode (and an eager program transposing the weights they share, unless an earlier test
    # compiled it: see compiler/hoisting.py)
    assert tripy_backend.compilation_count() - before in (2, 3)
    before = tripy_backend.compilation_count()
    tokens, first, total = run_lib.generate_with_cache(prefill, decode, prompt, new, prompt_len)
    assert tripy_backend.compilation_count() == before and 0 < first <= total

    step = run_lib.compile_step(model, CONFIG, opt_len=16)
    before = tripy_backend.compilation_count()
    no_cache, _ = run_lib.generate(step, prompt, new, bucket=1, block_size=CONFIG.block_size)
    assert tripy_backend.compilation_count() == before  # compiled once for every length
    assert tokens == no_cache
    expected = list(prompt)
    for _ in range(new):
        logits = reference.forward(weights, np.array([expected], np.int32), CONFIG.n_layer, CONFIG.n_head)
        expected.append(int(np.argmax(logits[0, -1])))
    assert tokens == expected


@pytest.mark.parametrize("weights_dtype", ["int8", "bfloat16"])
def test_narrow_weights_generate_compiled_once_and_close_to_float32(weights, weights_dtype):
    # The quality run.py --quality prints: logits against float32's over 64 greedy steps (both fed float32's
    # tokens), on a model big enough for 64 steps. Loose bounds: int8 per-channel and bfloat16 weights move
    # these logits (|logits| up to ~5) by a few hundredths, and greedy picks almost never change.
    config = dataclasses.replace(CONFIG, block_size=96, weights=weights_dtype)
    state = model_lib.random_state_dict(config, seed=0, std=0.2)
    error, share, largest = run_lib.quality(state, config, [7, 3, 88, 41, 5], 64, bucket=8)
    assert largest > 2 and 0 < error < 0.1 * largest and share >= 0.8, (error, share, largest)

    model = model_lib.GPT(config)
    model.load_state_dict(model_lib.convert_weights(state, weights_dtype))
    prefill, decode = run_lib.compile_kv_programs(model, 8, 64)
    before = tripy_backend.compilation_count()
    tokens, _, _ = run_lib.generate_with_cache(prefill, decode, [7, 3, 88, 41, 5], 20, 8)
    assert tripy_backend.compilation_count() == before and len(tokens) == 25


def test_int8_checkpoint_layout_is_nvtripys():
    # float32 weights plus one weight_scale per output channel (max |weight| / 127), as nvtripy's nanoGPT loads
    state = model_lib.convert_weights(model_lib.random_state_dict(CONFIG), "int8")
    w, scale = state["transformer.h.0.mlp.c_fc.weight"], state["transformer.h.0.mlp.c_fc.weight_scale"]
    assert w.dtype == np.float32 and scale.shape == (w.shape[0],)
    assert np.allclose(scale, np.abs(w).max(axis=1) / 127)
    names = model_lib.GPT(dataclasses.replace(CONFIG, weights="int8")).state_dict()
    assert set(state) == {k for k in names if not k.endswith(".input_scale")}  # (weight-only: no input scales)
    with pytest.raises(ValueError, match="weights must be one of"):
        model_lib.GPT(dataclasses.replace(CONFIG, weights="int4"))


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
    hf = {
        k: (v + rng.normal(0, 0.05, v.shape)).astype(np.float32) if ".attn.bias" not in k else v
        for k, v in hugging_face_layout(model_lib.random_state_dict(CONFIG, seed=2, std=0.2)).items()
    }
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


def test_run_reports_a_checkpoint_it_cannot_load(tmp_path, capsys):
    """--weights that is missing or unreadable ends in one line saying so and an exit code, not a traceback."""
    with pytest.raises(SystemExit) as done:
        run_lib.main(["--preset", "tiny", "--max-new-tokens", "4", "--weights", str(tmp_path / "missing.safetensors")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "missing.safetensors: no such file" in err and "Traceback" not in err
    bad = tmp_path / "weights.txt"
    bad.write_text("not a checkpoint")
    with pytest.raises(SystemExit) as done:
        run_lib.main(["--preset", "tiny", "--max-new-tokens", "4", "--weights", str(bad)])
    err = capsys.readouterr().err
    assert done.value.code == 1 and "cannot load --weights" in err and "unknown checkpoint format" in err


def test_run_with_int8_weights_prints_their_quality(capsys):
    run_lib.main(["--preset", "tiny", "--max-new-tokens", "8", "--weights-dtype", "int8", "--quality"])
    out = capsys.readouterr().out
    assert "matrices stored as int8" in out and "quality: int8 logits against float32's: max |error|" in out
    assert "programs compiled during generation: 0" in out
    with pytest.raises(SystemExit) as done:
        run_lib.main(["--preset", "tiny", "--weights-dtype", "int4"])
    assert done.value.code == 2 and "invalid choice: 'int4'" in capsys.readouterr().err
