"""`tripy serve` end to end: the real server in a subprocess on 127.0.0.1, a real HTTP client (httpx).

Every endpoint of the Open Inference Protocol, dynamic batching under concurrent clients (each result equal to
calling the executable on that request alone, padded to the server's fixed batch rows: bitwise), /v1/completions for the GPT-2 example's KV-cache
programs (token ids, text through a tokenizer file, streaming), each kind of bad input (a 4xx with tripy's
message, and the server keeps serving), an internal failure (500, logged, still serving) and SIGTERM with a
request in flight."""

import importlib.util
import json
import pathlib
import shutil
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tripy as tp

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from server import serve  # noqa: E402

GPT2_DIR = HERE.parents[1] / "examples" / "gpt2"
sys.path.insert(0, str(GPT2_DIR))  # the example's modules import each other by name


def _load(name):
    spec = importlib.util.spec_from_file_location(f"gpt2_serve_{name}", GPT2_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


model_lib, run_lib, export_lib = _load("model"), _load("run"), _load("export")
GPT_CONFIG = model_lib.GPTConfig(vocab_size=128, block_size=32, n_layer=2, n_head=4, n_embd=64)
PROMPT_LEN, CACHE_LEN = 8, 24
MAX_BATCH, MAX_BODY = 16, 200_000
RNG = np.random.default_rng(0)


def _mlp():
    lin = tp.Linear(16, 8)
    lin.weight = tp.Tensor(RNG.normal(size=(8, 16)).astype(np.float32))
    lin.bias = tp.Tensor(RNG.normal(size=(8,)).astype(np.float32))
    return tp.compile(lambda x: tp.tanh(lin(x)), args=[tp.InputInfo(((1, 4, 16), 16), tp.float32)])


def _rowwise():
    """Two inputs, two outputs, a dynamic non-batch dim: requests of other widths must run separately."""
    info = tp.InputInfo(((1, 4, 16), (2, 4, 8)), tp.float32)
    return tp.compile(lambda x, y: (tp.softmax(x * 2.0 + y, dim=1), tp.exp(x) - y), args=[info, info])


def _counter():
    return tp.compile(lambda n: n + 1, args=[tp.InputInfo((3,), tp.int32)])  # static: never batched


def _tokenizer(path):
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {f"w{i}": i for i in range(GPT_CONFIG.vocab_size)}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="w0"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.save(str(path))
    return tok


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    d = tmp_path_factory.mktemp("serve")
    exes = {"mlp": _mlp(), "rowwise": _rowwise(), "counter": _counter()}
    for name, exe in exes.items():
        exe.save(str(d / f"{name}.tpexe"))
    gpt = model_lib.GPT(GPT_CONFIG)
    gpt.load_state_dict(model_lib.random_state_dict(GPT_CONFIG, seed=0, std=0.2))
    manifest = export_lib.export(gpt, str(d / "gpt2"), PROMPT_LEN, CACHE_LEN, name="tiny-gpt2")
    tokenizer = _tokenizer(d / "tokenizer.json")
    loaded = {name: tp.Executable.load(str(d / f"{name}.tpexe")) for name in exes}
    return d, loaded, manifest, tokenizer


@pytest.fixture(scope="module")
def server(artifacts):
    d, _, manifest, _ = artifacts
    args = [str(d / f"{n}.tpexe") for n in ("mlp", "rowwise", "counter")] + [
        "--max-batch",
        str(MAX_BATCH),
        "--max-wait-ms",
        "30",
        "--max-body-bytes",
        str(MAX_BODY),
        "--lm",
        manifest,
        "--tokenizer",
        str(d / "tokenizer.json"),
    ]
    with serve(args, d / "server.log") as s:
        yield s


def tensor(name, array, datatype=None):
    return {
        "name": name,
        "shape": list(array.shape),
        "datatype": datatype or {"float32": "FP32", "int32": "INT32"}[array.dtype.name],
        "data": array.reshape(-1).tolist(),
    }


def infer(client, model, **arrays):
    return client.post(f"/v2/models/{model}/infer", json={"inputs": [tensor(k, v) for k, v in arrays.items()]})


def outputs(response):
    assert response.status_code == 200, response.text
    return [
        np.array(o["data"], dtype={"FP32": np.float32, "INT32": np.int32}[o["datatype"]]).reshape(o["shape"])
        for o in response.json()["outputs"]
    ]


def local(exe, *arrays):
    outs = exe(*[tp.Tensor(a) for a in arrays])
    return [np.from_dlpack(o) for o in (outs if isinstance(outs, tuple) else (outs,))]


def padded(exe, arrays, max_rows):
    """What the batching server answers for one request: the executable at `max_rows` rows (the request's rows
    and copies of its last row), the request's rows of each output."""
    n = arrays[0].shape[0]
    outs = local(exe, *[np.concatenate([a, np.repeat(a[-1:], max_rows - n, axis=0)]) for a in arrays])
    return [o[:n] for o in outs]


def rows(n, width=16):
    return RNG.normal(size=(n, width)).astype(np.float32)


# ---- the protocol's endpoints ----------------------------------------------------------------------------
def test_health_and_server_metadata(server):
    with server.client() as c:
        assert c.get("/v2/health/live").json() == {"live": True}
        assert c.get("/v2/health/ready").json() == {"ready": True}
        assert c.get("/v2").json()["name"] == "tripy"
        assert c.get("/v2/models/mlp/ready").json() == {"name": "mlp", "ready": True}
        assert c.get("/v1/models").json()["data"][0]["id"] == "tiny-gpt2"


def test_model_metadata_gives_the_input_ranges(server):
    with server.client() as c:
        mlp = c.get("/v2/models/mlp").json()
        rowwise = c.get("/v2/models/rowwise").json()
        counter = c.get("/v2/models/counter").json()
    assert mlp["inputs"] == [
        {
            "name": "x",
            "datatype": "FP32",
            "shape": [-1, 16],
            "min_shape": [1, 16],
            "opt_shape": [4, 16],
            "max_shape": [16, 16],
        }
    ]
    assert mlp["outputs"] == [{"name": "output_0", "datatype": "FP32", "shape": [-1, 8]}]
    assert mlp["parameters"]["max_batch_size"] == MAX_BATCH and mlp["parameters"]["dynamic_batching"]
    assert mlp["parameters"]["padded_to_max_batch"]
    assert [i["name"] for i in rowwise["inputs"]] == ["x", "y"] and rowwise["inputs"][1]["max_shape"] == [16, 8]
    assert [o["shape"] for o in rowwise["outputs"]] == [[-1, -1], [-1, -1]]
    assert counter["inputs"][0]["shape"] == [3] and counter["parameters"]["dynamic_batching"] is False


def test_infer_equals_the_executable(server, artifacts):
    exes = artifacts[1]
    x, y = rows(3, 5), rows(3, 5)
    n = np.array([1, 2, 3], np.int32)
    with server.client() as c:
        for got, expected in [
            (outputs(infer(c, "mlp", x=rows(1))), None),
            (outputs(infer(c, "rowwise", x=x, y=y)), local(exes["rowwise"], x, y)),
            (outputs(infer(c, "counter", n=n)), [n + 1]),
        ]:
            if expected is not None:
                assert all(np.array_equal(g, e) for g, e in zip(got, expected))
        r = c.post("/v2/models/mlp/infer", json={"id": "req-7", "inputs": [tensor("x", x[:, :5].repeat(4, 1)[:, :16])]})
        assert r.json()["id"] == "req-7" and r.json()["model_name"] == "mlp"


# ---- dynamic batching ------------------------------------------------------------------------------------
def _stats(client, model):
    return client.get(f"/v2/models/{model}/stats").json()["model_stats"][0]


def test_concurrent_requests_are_batched_and_equal_to_unbatched_calls(server, artifacts):
    exes = artifacts[1]
    # 1-row and 2-row requests of two widths for the row-wise model, 1- to 3-row requests for the MLP: each answer
    # is bitwise what the request gets alone, whatever it was batched with (every call runs at the fixed rows).
    jobs = [("rowwise", {"x": rows(1 + i % 2, w), "y": rows(1 + i % 2, w)}) for i in range(24) for w in (3 + i % 2,)]
    jobs += [("mlp", {"x": rows(1 + i % 3)}) for i in range(18)]
    with server.client() as c:
        fixed_rows = {m: c.get(f"/v2/models/{m}").json()["parameters"]["max_batch_size"] for m in ("rowwise", "mlp")}
        alone = outputs(infer(c, "mlp", x=jobs[-1][1]["x"]))
        before = {m: _stats(c, m) for m in ("rowwise", "mlp")}

    def call(job):
        model, arrays = job
        with server.client() as c:
            return outputs(infer(c, model, **arrays))

    with ThreadPoolExecutor(len(jobs)) as pool:
        results = list(pool.map(call, jobs))
    assert all(np.array_equal(g, e) for g, e in zip(results[-1], alone))
    for (model, arrays), got in zip(jobs, results):
        expected = padded(exes[model], list(arrays.values()), fixed_rows[model])
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and np.array_equal(g, e), model  # bitwise
    with server.client() as c:
        for model in ("rowwise", "mlp"):
            after = _stats(c, model)
            n_requests = sum(1 for m, _ in jobs if m == model)
            assert after["inference_count"] - before[model]["inference_count"] == n_requests
            assert after["execution_count"] - before[model]["execution_count"] < n_requests  # some were batched
            assert max(b["batch_size"] for b in after["batch_stats"]) <= MAX_BATCH


# ---- bad input -------------------------------------------------------------------------------------------
BAD = {
    "wrong shape": ("mlp", {"inputs": [tensor("x", rows(2, 5))]}, 400, "dim 1 is 5, but it must be 16"),
    "outside the range": (
        "mlp",
        {"inputs": [tensor("x", rows(17))]},
        400,
        "dim 0 is 17, which is outside the allowed range [1, 16]",
    ),
    # advice in the protocol's terms (not tripy.cast or NumPy's astype), and only datatypes the server takes
    "wrong dtype": (
        "mlp",
        {"inputs": [tensor("x", rows(2), "INT32") | {"data": [1] * 32}]},
        400,
        "has datatype INT32, but the model takes it as FP32 (see the model's metadata). Send its data "
        'with "datatype": "FP32".',
    ),
    "FP64": (
        "mlp",
        {"inputs": [tensor("x", rows(2), "FP64")]},
        400,
        "datatype 'FP64' is not one this server takes; it takes BOOL, INT8, INT32, INT64, FP16, BF16, FP32, "
        "and this input is FP32.",
    ),
    "data and shape disagree": (
        "mlp",
        {"inputs": [tensor("x", rows(2)) | {"shape": [3, 16]}]},
        400,
        "has 32 element(s), but its shape [3, 16] needs 48",
    ),
    "missing input": ("rowwise", {"inputs": [tensor("x", rows(1, 3))]}, 400, "Missing input(s): y"),
    "unknown input": ("mlp", {"inputs": [tensor("z", rows(1))]}, 400, "has no input named 'z'"),
    "unknown datatype": (
        "mlp",
        {"inputs": [tensor("x", rows(1), "FP99")]},
        400,
        "unknown datatype 'FP99' is not one this server takes; it takes BOOL, INT8, INT32, INT64, "
        "FP16, BF16, FP32, and",
    ),
    "no inputs": ("mlp", {"outputs": []}, 400, "'inputs' list"),
    "unknown model": ("resnet", {"inputs": []}, 404, "Unknown model 'resnet'. This server has: counter, mlp"),
    "malformed JSON": ("mlp", b'{"inputs": [', 400, "not valid JSON"),
    "oversized body": (
        "mlp",
        {"inputs": [tensor("x", rows(16))], "pad": "x" * MAX_BODY},
        413,
        f"larger than this server's limit of {MAX_BODY} bytes",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_gets_a_4xx_with_the_reason_and_the_server_keeps_serving(server, case):
    model, body, status, message = BAD[case]
    with server.client() as c:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        r = c.post(f"/v2/models/{model}/infer", content=content, headers={"content-type": "application/json"})
        assert r.status_code == status, r.text
        assert message in r.json()["error"]
        assert "-->" not in r.json()["error"]  # tripy's message without the server's code frames
        assert not any(python in r.json()["error"] for python in ("tripy.cast", "astype", "tripy.Tensor("))
        assert c.get("/v2/health/live").status_code == 200
        assert infer(c, "counter", n=np.array([0, 0, 0], np.int32)).status_code == 200


def test_oversized_chunked_body_is_refused(server):
    def chunks():
        for _ in range(MAX_BODY // 1000 + 10):
            yield b" " * 1000

    with server.client() as c:
        r = c.post("/v2/models/mlp/infer", content=chunks())
        assert r.status_code == 413 and "--max-body-bytes" in r.json()["error"]


# ---- /v1/completions -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def expected_tokens(artifacts):
    """The tokens the example's own generation loop makes with the same saved programs."""
    d = artifacts[0] / "gpt2"
    prefill, decode = tp.Executable.load(str(d / "prefill.tpexe")), tp.Executable.load(str(d / "decode.tpexe"))

    def generate(prompt, n):
        return run_lib.generate_with_cache(prefill, decode, prompt, n, PROMPT_LEN)[0][len(prompt) :]

    return generate


def test_completion_from_token_ids(server, expected_tokens):
    prompt = [5, 17, 99]
    with server.client() as c:
        r = c.post("/v1/completions", json={"model": "tiny-gpt2", "prompt": prompt, "max_tokens": 10}).json()
    choice = r["choices"][0]
    assert choice["token_ids"] == expected_tokens(prompt, 10) and choice["finish_reason"] == "length"
    assert r["usage"] == {"prompt_tokens": 3, "completion_tokens": 10, "total_tokens": 13}
    assert r["object"] == "text_completion" and r["model"] == "tiny-gpt2"


def test_completion_streams_one_event_per_token(server, expected_tokens):
    prompt, n = [7, 3, 88, 41, 5], 8
    events = []
    with (
        server.client() as c,
        c.stream("POST", "/v1/completions", json={"prompt": prompt, "max_tokens": n, "stream": True}) as r,
    ):
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(line[len("data: ") :])
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e)["choices"][0] for e in events[:-1]]
    assert [t for ch in chunks[:-1] for t in ch["token_ids"]] == expected_tokens(prompt, n)
    assert all(len(ch["token_ids"]) == 1 for ch in chunks[:-1]) and len(chunks) == n + 1
    assert chunks[-1]["finish_reason"] == "length" and chunks[-1]["token_ids"] == []


def test_completion_from_text_with_a_tokenizer(server, artifacts, expected_tokens):
    tokenizer = artifacts[3]
    with server.client() as c:
        r = c.post("/v1/completions", json={"prompt": "w5 w17 w99", "max_tokens": 4}).json()
    expected = expected_tokens([5, 17, 99], 4)
    assert r["choices"][0]["token_ids"] == expected and r["choices"][0]["text"] == tokenizer.decode(expected)


BAD_COMPLETIONS = {
    "prompt too long": ({"prompt": list(range(PROMPT_LEN + 1))}, 400, f"this model takes at most {PROMPT_LEN}"),
    "too many tokens": ({"prompt": [1, 2], "max_tokens": CACHE_LEN}, 400, f"ask for at most {CACHE_LEN - 1} tokens"),
    "token outside the vocabulary": ({"prompt": [1, 128]}, 400, "Token id 128 is outside the vocabulary [0, 128)"),
    "empty prompt": ({"prompt": []}, 400, "non-empty list of token ids"),
    "sampling": ({"prompt": [1], "temperature": 0.7}, 400, "decodes greedily"),
    "unknown model": ({"prompt": [1], "model": "gpt-4"}, 404, "Unknown model 'gpt-4'"),
}


@pytest.mark.parametrize("case", sorted(BAD_COMPLETIONS))
def test_bad_completion_requests(server, case):
    body, status, message = BAD_COMPLETIONS[case]
    with server.client() as c:
        r = c.post("/v1/completions", json=body)
        assert r.status_code == status and message in r.json()["error"]["message"], r.text
        assert c.post("/v1/completions", json={"prompt": [1], "max_tokens": 1}).status_code == 200


# ---- failures and shutdown -------------------------------------------------------------------------------
FAILING = """
import sys
import tripy_serve.batching as batching
real, calls = batching.to_numpy, []
def fails_once(t):
    calls.append(1)
    if len(calls) == 1:
        raise RuntimeError("injected failure")
    return real(t)
batching.to_numpy = fails_once
from tripy_serve.cli import main
main(sys.argv[1:])
"""


def test_internal_failure_is_a_logged_500_and_sigterm_finishes_requests_in_flight(artifacts, tmp_path):
    d = artifacts[0]
    x = rows(2)
    args = [str(d / "mlp.tpexe"), "--max-batch", "4", "--max-wait-ms", "1500"]
    with serve(args, tmp_path / "log", command=[sys.executable, "-c", FAILING]) as s:
        with s.client() as c:
            r = infer(c, "mlp", x=x)
            assert r.status_code == 500 and "RuntimeError: injected failure" in r.json()["error"]
            assert np.array_equal(outputs(infer(c, "mlp", x=x))[0], padded(artifacts[1]["mlp"], [x], 4)[0])
        assert "internal error while serving POST /v2/models/mlp/infer" in s.log_text()
        assert "Traceback" in s.log_text()

        result = {}
        with s.client() as c:
            count = _stats(c, "mlp")["inference_count"]
            thread = threading.Thread(target=lambda: result.update(r=infer(c, "mlp", x=x)))
            thread.start()  # the request waits 1.5 s for a batch to fill
            deadline = time.monotonic() + 30
            while _stats(c, "mlp")["inference_count"] == count and time.monotonic() < deadline:
                time.sleep(0.02)  # until the server has it
            s.process.send_signal(signal.SIGTERM)
            thread.join(30)
        # uvicorn exits after the graceful shutdown by raising the signal it caught again
        assert s.process.wait(30) in (0, -signal.SIGTERM)
        assert np.array_equal(outputs(result["r"])[0], padded(artifacts[1]["mlp"], [x], 4)[0])
        assert "Shutting down" in s.log_text() and "Finished server process" in s.log_text()


def test_console_script():
    script = shutil.which("tripy", path=str(pathlib.Path(sys.executable).parent))
    assert script is not None
    import subprocess

    help_text = subprocess.run([script, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    assert "--max-batch" in help_text and "--max-wait-ms" in help_text
    bad = subprocess.run([script, "serve"], capture_output=True, text=True)
    assert bad.returncode == 2 and "give at least one MODEL.tpexe" in bad.stderr


def test_console_script_options_and_errors(tmp_path):
    import subprocess

    script = shutil.which("tripy", path=str(pathlib.Path(sys.executable).parent))

    def run(*args):
        return subprocess.run([script, *args], capture_output=True, text=True, cwd=tmp_path)

    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"tripy-inference {tp.__version__}"
    for flag in ("--help", "-h"):
        shown = run(flag)
        assert shown.returncode == 0 and "usage: tripy" in shown.stdout and "serve" in shown.stdout
    unknown = run("foo")
    assert unknown.returncode != 0 and "unknown command 'foo'" in unknown.stderr
    missing = run("serve", "missing.tpexe")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines() == [
        "tripy serve: tripy.Executable.load: cannot load 'missing.tpexe': the file does not exist."
    ]
    missing_lm = run("serve", "--lm", "missing.json")
    assert missing_lm.returncode != 0 and missing_lm.stderr.strip().splitlines() == [
        "tripy serve: cannot read 'missing.json': No such file or directory."
    ]


def test_without_tripy_serve_the_console_script_says_what_to_install(tmp_path):
    import subprocess

    hide = "import sys; sys.modules['tripy_serve'] = None; from tripy.serve import command; command()"
    r = subprocess.run([sys.executable, "-c", hide, "serve", "model.tpexe"], capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("tripy serve needs the 'serve' extra: pip install 'tripy-inference[serve]'")


def test_python_m_tripy_serve_runs_the_same_command(tmp_path):
    import subprocess

    for module in ("tripy_serve", "tripy.serve"):
        r = subprocess.run([sys.executable, "-m", module, "missing.tpexe"], capture_output=True, text=True)
        assert r.returncode == 1 and r.stderr.strip().splitlines() == [
            "tripy serve: tripy.Executable.load: cannot load 'missing.tpexe': the file does not exist."
        ]


def test_the_openai_client(server, expected_tokens, artifacts):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused")
    assert [m.id for m in client.models.list()] == ["tiny-gpt2"]
    done = client.completions.create(model="tiny-gpt2", prompt=[5, 17, 99], max_tokens=6)
    assert done.choices[0].model_extra["token_ids"] == expected_tokens([5, 17, 99], 6)
    assert done.choices[0].finish_reason == "length" and done.usage.completion_tokens == 6
    streamed = list(client.completions.create(model="tiny-gpt2", prompt="w5 w17 w99", max_tokens=4, stream=True))
    assert [t for chunk in streamed for t in chunk.choices[0].model_extra["token_ids"]] == expected_tokens(
        [5, 17, 99], 4
    )
    assert "".join(chunk.choices[0].text for chunk in streamed) == artifacts[3].decode(expected_tokens([5, 17, 99], 4))
    with pytest.raises(openai.BadRequestError, match="decodes greedily"):
        client.completions.create(model="tiny-gpt2", prompt=[1], temperature=0.7)


def test_a_client_that_leaves_mid_stream_does_not_hurt(server, expected_tokens):
    log_before = server.log_text().count("internal error")
    with server.client() as c:
        with c.stream("POST", "/v1/completions", json={"prompt": [1, 2], "max_tokens": 20, "stream": True}) as r:
            first = next(line for line in r.iter_lines() if line.startswith("data: "))
            assert json.loads(first[len("data: ") :])["choices"][0]["token_ids"] == expected_tokens([1, 2], 1)
        # (the connection is closed here, 19 tokens early)
        again = c.post("/v1/completions", json={"prompt": [1, 2], "max_tokens": 3}).json()
    assert again["choices"][0]["token_ids"] == expected_tokens([1, 2], 3)
    assert server.log_text().count("internal error") == log_before
