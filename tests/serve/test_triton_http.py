"""`tripy serve` against NVIDIA's own HTTP client, `tritonclient.http`, with its defaults: binary tensor data both
ways, every protocol datatype tripy has, JSON and binary mixed in one request, NaN and +-Inf, async requests and
64 concurrent ones each getting its own answer, and bad requests refused with the reason (the server still
serving). Every result is checked against NumPy."""

import json
import pathlib
import sys
from concurrent.futures import ThreadPoolExecutor

import ml_dtypes
import numpy as np
import pytest

httpclient = pytest.importorskip("tritonclient.http")
from tritonclient.utils import InferenceServerException  # noqa: E402

httpx = pytest.importorskip("httpx")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from server import serve  # noqa: E402

from serve_models import DTYPES, RNG, all_types_expected, random_array, save_models  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("triton_http")
    mlp_weight = save_models(d)
    with serve(
        [str(d / f"{n}.tpexe") for n in ("types", "log", "mlp")] + ["--max-batch", "16", "--max-wait-ms", "5"],
        d / "server.log",
    ) as s:
        s.mlp_weight = mlp_weight
        yield s


@pytest.fixture
def client(server):
    c = httpclient.InferenceServerClient(server.url[len("http://") :], concurrency=64, network_timeout=120.0)
    yield c
    c.close()


def _inputs(arrays, binary=True):
    inputs = []
    for (name, (_, np_dtype)), array, i in zip(DTYPES.items(), arrays, range(len(arrays))):
        inp = httpclient.InferInput(["b", "i8", "i32", "i64", "f16", "bf16", "f32"][i], list(array.shape), name)
        inp.set_data_from_numpy(array, binary_data=binary if not isinstance(binary, list) else binary[i])
        inputs.append(inp)
    return inputs


def _check_types(result, arrays):
    for i, expected in enumerate(all_types_expected(arrays)):
        got = result.as_numpy(f"output_{i}")
        assert got.shape == expected.shape and np.array_equal(got.astype(expected.dtype), expected), i


def test_metadata_and_health_through_the_client(client):
    assert client.is_server_live() and client.is_server_ready() and client.is_model_ready("types")
    meta = client.get_model_metadata("types")
    assert [i["datatype"] for i in meta["inputs"]] == list(DTYPES)
    assert "binary_tensor_data" in client.get_server_metadata()["extensions"]


def test_defaults_are_binary_both_ways_for_every_datatype(client):
    arrays = [random_array(np_dtype, (3, 3)) for _, np_dtype in DTYPES.values()]
    result = client.infer("types", _inputs(arrays))  # (no outputs named: all, binary by the client's default)
    _check_types(result, arrays)
    assert result.get_output("output_0")["parameters"]["binary_data_size"] == 9


def test_json_both_ways_and_mixed(client):
    # (tritonclient sends and reads BF16 as binary data only: Triton's JSON has no BF16)
    arrays = [random_array(np_dtype, (2, 3)) for _, np_dtype in DTYPES.values()]
    names = [f"output_{i}" for i in range(7)]
    json_only = client.infer(
        "types",
        _inputs(arrays, binary=[name == "BF16" for name in DTYPES]),
        outputs=[httpclient.InferRequestedOutput(n, binary_data=n == "output_5") for n in names],
    )
    _check_types(json_only, arrays)
    assert "data" in json_only.get_output("output_6") and "data" in json_only.get_output("output_0")
    mixed = client.infer(
        "types",
        _inputs(arrays, binary=[False, True] * 3 + [False]),
        outputs=[httpclient.InferRequestedOutput(n, binary_data=i % 2 == 1) for i, n in enumerate(names)],
    )
    _check_types(mixed, arrays)
    assert "data" in mixed.get_output("output_0") and "data" not in mixed.get_output("output_1")


def test_bf16_in_json_is_sent_as_numbers(server):
    x = np.array([[1.5, -2.25, 3.0]], ml_dtypes.bfloat16)
    arrays = {
        "b": np.zeros((1, 3), bool),
        "i8": np.zeros((1, 3), np.int8),
        "i32": np.zeros((1, 3), np.int32),
        "i64": np.zeros((1, 3), np.int64),
        "f16": np.zeros((1, 3), np.float16),
        "bf16": x,
        "f32": np.zeros((1, 3), np.float32),
    }
    inputs = [
        {
            "name": n,
            "shape": [1, 3],
            "datatype": dt,
            "data": a.astype(np.float32).tolist() if n == "bf16" else a.tolist(),
        }
        for (n, a), dt in zip(arrays.items(), DTYPES)
    ]
    r = httpx.post(f"{server.url}/v2/models/types/infer", json={"inputs": inputs, "outputs": [{"name": "output_5"}]})
    assert r.status_code == 200 and r.json()["outputs"] == [
        {"name": "output_5", "datatype": "BF16", "shape": [1, 3], "data": [3.0, -4.5, 6.0]}
    ]


def test_only_the_requested_outputs_come_back(client):
    arrays = [random_array(np_dtype, (1, 3)) for _, np_dtype in DTYPES.values()]
    result = client.infer("types", _inputs(arrays), outputs=[httpclient.InferRequestedOutput("output_3")])
    assert [o["name"] for o in result.get_response()["outputs"]] == ["output_3"]
    assert np.array_equal(result.as_numpy("output_3"), arrays[3] + 1)


def test_nan_and_infinity_never_fail(client, server):
    x = np.array([[1.0, 0.0, -1.0, np.inf]], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.log(x)  # [0, -inf, nan, inf]
    inp = httpclient.InferInput("x", [1, 4], "FP32")
    inp.set_data_from_numpy(x)
    for binary in (True, False):
        got = client.infer("log", [inp], outputs=[httpclient.InferRequestedOutput("output_0", binary_data=binary)])
        np.testing.assert_array_equal(got.as_numpy("output_0"), expected)
    # On the wire, JSON carries the tokens Triton writes.
    body = {"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1.0, 0.0, -1.0, 1e39]}]}
    r = httpx.post(f"{server.url}/v2/models/log/infer", content=json.dumps(body).replace("1e+39", "Infinity"))
    assert r.status_code == 200 and r.text.count("NaN") == 1 and "-Infinity" in r.text and "Infinity]" in r.text


def test_async_and_64_concurrent_requests_each_get_their_own_answer(client, server):
    xs = [RNG.normal(size=(1 + i % 3, 16)).astype(np.float32) for i in range(64)]

    def request(x):
        inp = httpclient.InferInput("x", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        return inp

    pending = [client.async_infer("mlp", [request(x)]) for x in xs]
    for x, p in zip(xs, pending):
        np.testing.assert_allclose(p.get_result().as_numpy("output_0"), np.tanh(x @ server.mlp_weight), atol=1e-5)

    def blocking(x):
        c = httpclient.InferenceServerClient(server.url[len("http://") :])
        try:
            return c.infer("mlp", [request(x)]).as_numpy("output_0")
        finally:
            c.close()

    with ThreadPoolExecutor(64) as pool:
        for x, got in zip(xs, pool.map(blocking, xs)):
            np.testing.assert_allclose(got, np.tanh(x @ server.mlp_weight), atol=1e-5)


def _refused(client, model, inputs, outputs=None):
    with pytest.raises(InferenceServerException) as e:
        client.infer(model, inputs, outputs=outputs)
    assert client.is_server_live()
    ok = httpclient.InferInput("x", [1, 16], "FP32")
    ok.set_data_from_numpy(np.ones((1, 16), np.float32))
    assert client.infer("mlp", [ok]).as_numpy("output_0").shape == (1, 8)
    return str(e.value)


def test_bad_requests_are_refused_with_the_reason_and_the_server_keeps_serving(client):
    def one(shape, datatype="FP32", data=None, name="x"):
        inp = httpclient.InferInput(name, list(shape), datatype)
        inp.set_data_from_numpy(data if data is not None else np.ones(shape, np.float32))
        return [inp]

    assert "dim 1 is 5, but it must be 16" in _refused(client, "mlp", one((2, 5)))
    assert "outside the allowed range [1, 16]" in _refused(client, "mlp", one((17, 16)))
    assert "has datatype INT32, but the model takes it as FP32" in _refused(
        client, "mlp", one((1, 16), "INT32", np.ones((1, 16), np.int32))
    )
    assert "Unknown model 'resnet'" in _refused(client, "resnet", one((1, 16)))
    assert "datatype BYTES (strings) is not one tripy computes on" in _refused(
        client, "mlp", one((1, 1), "BYTES", np.array([[b"hi"]], dtype=np.object_))
    )
    assert "no output named 'output_9'" in _refused(
        client, "mlp", one((1, 16)), [httpclient.InferRequestedOutput("output_9")]
    )


BAD_BINARY = {
    "header longer than the body": ({"Inference-Header-Content-Length": "9999"}, b"{}", "JSON header's length"),
    "header not a number": ({"Inference-Header-Content-Length": "x"}, b"{}", "JSON header's length"),
    "binary shorter than declared": ({}, b"1234", "declares 64 bytes of binary data, but the request has only 4"),
    "binary longer than declared": ({}, b"\0" * 70, "6 bytes of binary data beyond"),
    "size disagrees with the shape": (
        "size",
        b"\0" * 60,
        "has 60 bytes of data, but its shape [1, 16] and datatype need 64",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_BINARY))
def test_malformed_binary_requests_are_400(server, case):
    headers, binary, message = BAD_BINARY[case]
    size = len(binary) if headers == "size" else 64
    header = json.dumps(
        {"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "parameters": {"binary_data_size": size}}]}
    ).encode()
    if not isinstance(headers, dict) or not headers:
        headers = {"Inference-Header-Content-Length": str(len(header))}
    body = (header if headers["Inference-Header-Content-Length"] == str(len(header)) else b"{}") + binary
    r = httpx.post(f"{server.url}/v2/models/mlp/infer", content=body, headers=headers)
    assert r.status_code == 400 and message in r.json()["error"], r.text


def test_version_one_is_the_model_and_others_are_404(client):
    inp = httpclient.InferInput("x", [1, 16], "FP32")
    inp.set_data_from_numpy(np.ones((1, 16), np.float32))
    assert client.infer("mlp", [inp], model_version="1").as_numpy("output_0").shape == (1, 8)
    assert client.is_model_ready("mlp", "1") and client.get_model_metadata("mlp", "1")["name"] == "mlp"
    with pytest.raises(InferenceServerException, match="has no version '2'"):
        client.infer("mlp", [inp], model_version="2")
