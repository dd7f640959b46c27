"""The GPT-2 example (examples/gpt2) against a pure-NumPy implementation of the same network, in eager
mode and compiled with a dynamic sequence length (two lengths from one executable)."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import tripy as tp

GPT2_DIR = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt2"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"gpt2_example_{name}", GPT2_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


model_lib = _load("model")
reference = _load("reference")
run_lib = _load("run")

CONFIG = model_lib.GPTConfig(vocab_size=128, block_size=32, n_layer=2, n_head=4, n_embd=64)


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
