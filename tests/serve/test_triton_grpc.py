"""`tripy serve --grpc-port` against NVIDIA's gRPC client, `tritonclient.grpc` (KServe v2 GRPCInferenceService):
health, metadata, every datatype tripy has through raw contents both ways, typed contents, NaN and +-Inf, async
requests and 64 concurrent ones each getting its own answer, statistics, and bad requests refused with the
reason (the server still serving, over gRPC and HTTP). Every result is checked against NumPy."""

import pathlib
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

grpcclient = pytest.importorskip("tritonclient.grpc")
import grpc  # noqa: E402  (installed with tritonclient[grpc])
from tritonclient.utils import InferenceServerException  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from server import free_port, serve  # noqa: E402
from serve_models import DTYPES, RNG, all_types_expected, random_array, save_models  # noqa: E402

NAMES = ["b", "i8", "i32", "i64", "f16", "bf16", "f32"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("triton_grpc")
    weight = save_models(d)
    port = free_port()
    with serve(
        [str(d / f"{n}.tpexe") for n in ("types", "log", "mlp")]
        + ["--grpc-port", str(port), "--max-batch", "16", "--max-wait-ms", "5"],
        d / "server.log",
    ) as s:
        s.grpc_url, s.mlp_weight = f"127.0.0.1:{port}", weight
        yield s


@pytest.fixture
def client(server):
    c = grpcclient.InferenceServerClient(server.grpc_url)
    yield c
    c.close()


def _input(name, array, datatype):
    inp = grpcclient.InferInput(name, list(array.shape), datatype)
    inp.set_data_from_numpy(array)
    return inp


def test_health_metadata_and_statistics(client):
    assert client.is_server_live() and client.is_server_ready() and client.is_model_ready("types")
    _raises(lambda: client.is_model_ready("resnet"), "Unknown model 'resnet'")
    meta = client.get_model_metadata("mlp", as_json=True)
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": ["-1", "16"]}]
    assert meta["outputs"] == [{"name": "output_0", "datatype": "FP32", "shape": ["-1", "8"]}]
    assert "binary_tensor_data" in client.get_server_metadata(as_json=True)["extensions"]
    before = client.get_inference_statistics("mlp", as_json=True)["model_stats"][0].get("inference_count", "0")
    client.infer("mlp", [_input("x", np.ones((2, 16), np.float32), "FP32")])
    after = client.get_inference_statistics("mlp", as_json=True)["model_stats"][0]
    assert int(after["inference_count"]) == int(before) + 1 and after["batch_stats"]


def test_every_datatype_through_raw_contents(client):
    arrays = [random_array(np_dtype, (3, 3)) for _, np_dtype in DTYPES.values()]
    result = client.infer("types", [_input(n, a, dt) for n, a, dt in zip(NAMES, arrays, DTYPES)])
    for i, expected in enumerate(all_types_expected(arrays)):
        got = result.as_numpy(f"output_{i}")
        assert got.shape == expected.shape and np.array_equal(got.astype(expected.dtype), expected), i


def test_typed_contents_and_requested_outputs(client, server):
    import tritonclient.grpc.service_pb2 as service

    x = RNG.normal(size=(2, 16)).astype(np.float32)
    request = service.ModelInferRequest(model_name="mlp", id="req-1")
    request.inputs.add(name="x", datatype="FP32", shape=[2, 16]).contents.fp32_contents.extend(x.reshape(-1).tolist())
    request.outputs.add(name="output_0")
    response = client._client_stub.ModelInfer(request)
    assert response.id == "req-1" and [o.name for o in response.outputs] == ["output_0"]
    got = np.frombuffer(response.raw_output_contents[0], np.float32).reshape(2, 8)
    np.testing.assert_allclose(got, np.tanh(x @ server.mlp_weight), atol=1e-5)


def test_nan_and_infinity_as_they_are(client):
    x = np.array([[1.0, 0.0, -1.0, np.inf]], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.log(x)
    np.testing.assert_array_equal(client.infer("log", [_input("x", x, "FP32")]).as_numpy("output_0"), expected)


def test_async_and_64_concurrent_requests_each_get_their_own_answer(client, server):
    xs = [RNG.normal(size=(1 + i % 3, 16)).astype(np.float32) for i in range(64)]
    results = {}
    for i, x in enumerate(xs):
        client.async_infer(
            "mlp", [_input("x", x, "FP32")], callback=lambda result, error, i=i: results.update({i: (result, error)})
        )

    def blocking(x):
        c = grpcclient.InferenceServerClient(server.grpc_url)
        try:
            return c.infer("mlp", [_input("x", x, "FP32")]).as_numpy("output_0")
        finally:
            c.close()

    with ThreadPoolExecutor(64) as pool:
        for x, got in zip(xs, pool.map(blocking, xs)):
            np.testing.assert_allclose(got, np.tanh(x @ server.mlp_weight), atol=1e-5)
    for i, x in enumerate(xs):
        result, error = _wait_for(results, i)
        assert error is None
        np.testing.assert_allclose(result.as_numpy("output_0"), np.tanh(x @ server.mlp_weight), atol=1e-5)


def _wait_for(results, i, timeout=60.0):
    deadline = time.monotonic() + timeout
    while i not in results and time.monotonic() < deadline:
        time.sleep(0.01)
    return results[i]


def _raises(call, message):
    with pytest.raises(InferenceServerException) as e:
        call()
    assert message in str(e.value), str(e.value)
    return e.value


@pytest.mark.parametrize("case", ["shape", "range", "dtype", "model", "bytes", "output", "fp16 typed"])
def test_bad_requests_are_refused_with_the_reason_and_the_server_keeps_serving(client, server, case):
    ones = np.ones((1, 16), np.float32)
    call, status, message = {
        "shape": (
            ("mlp", [_input("x", np.ones((2, 5), np.float32), "FP32")]),
            "INVALID_ARGUMENT",
            "dim 1 is 5, but it must be 16",
        ),
        "range": (
            ("mlp", [_input("x", np.ones((17, 16), np.float32), "FP32")]),
            "INVALID_ARGUMENT",
            "outside the allowed range [1, 16]",
        ),
        "dtype": (
            ("mlp", [_input("x", ones.astype(np.int32), "INT32")]),
            "INVALID_ARGUMENT",
            "has datatype INT32, but the model takes it as FP32",
        ),
        "model": (("resnet", [_input("x", ones, "FP32")]), "NOT_FOUND", "Unknown model 'resnet'"),
        "bytes": (
            ("mlp", [_input("x", np.array([[b"hi"]], np.object_), "BYTES")]),
            "INVALID_ARGUMENT",
            "datatype BYTES (strings) is not one tripy computes on",
        ),
        "output": (
            ("mlp", [_input("x", ones, "FP32")], "", [grpcclient.InferRequestedOutput("output_9")]),
            "INVALID_ARGUMENT",
            "no output named 'output_9'",
        ),
        "fp16 typed": None,
    }.get(case) or (None, "INVALID_ARGUMENT", "FP16 data has no typed contents field")
    if call is None:
        import tritonclient.grpc.service_pb2 as service

        request = service.ModelInferRequest(model_name="types")
        request.inputs.add(name="f16", datatype="FP16", shape=[1, 3]).contents.fp32_contents.extend([1, 2, 3])
        with pytest.raises(grpc.RpcError) as e:
            client._client_stub.ModelInfer(request)
        assert message in e.value.details() and e.value.code().name == status
    else:
        error = _raises(lambda: client.infer(*call), message)
        assert error.status() == f"StatusCode.{status}"
    assert client.infer("mlp", [_input("x", ones, "FP32")]).as_numpy("output_0").shape == (1, 8)
    with server.client() as http:
        assert http.get("/v2/health/live").status_code == 200


def _scrape(server):
    from prometheus_client.parser import text_string_to_metric_families

    with server.client() as http:
        r = http.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def test_metrics_count_both_protocols_in_prometheus_format(client, server):
    mlp = (("model", "mlp"), ("version", "1"))
    before = _scrape(server)
    with server.client() as http:
        for rows in (1, 2, 3):
            body = {"inputs": [{"name": "x", "shape": [rows, 16], "datatype": "FP32", "data": [0.5] * 16 * rows}]}
            assert http.post("/v2/models/mlp/infer", json=body).status_code == 200
        bad = {"inputs": [{"name": "x", "shape": [1, 5], "datatype": "FP32", "data": [0.5] * 5}]}
        assert http.post("/v2/models/mlp/infer", json=bad).status_code == 400
    for rows in (4, 1):
        client.infer("mlp", [_input("x", np.ones((rows, 16), np.float32), "FP32")])
    after = _scrape(server)

    def delta(name, labels=mlp):
        return after.get((name, labels), 0) - before.get((name, labels), 0)

    assert delta("tripy_inference_request_success_total") == 5
    assert delta("tripy_inference_request_failure_total", tuple(sorted(mlp + (("reason", "REJECTED"),)))) == 1
    assert delta("tripy_inference_count_total") == 11  # rows of the requests (not the batches' padding)
    assert delta("tripy_inference_exec_count_total") == delta("tripy_inference_batch_size_count") >= 1
    assert delta("tripy_inference_batch_size_sum") == 16 * delta("tripy_inference_batch_size_count")  # (padded)
    assert delta("tripy_inference_request_duration_seconds_count") == 6
    assert delta("tripy_inference_queue_duration_seconds_count") == 5
    assert delta("tripy_inference_compute_duration_seconds_sum") > 0
    assert after[("tripy_inference_pending_request_count", mlp)] == 0


def test_version_one_is_the_model_and_others_are_not_found(client):
    inp = _input("x", np.ones((1, 16), np.float32), "FP32")
    assert client.infer("mlp", [inp], model_version="1").as_numpy("output_0").shape == (1, 8)
    error = _raises(lambda: client.infer("mlp", [inp], model_version="2"), "has no version '2'")
    assert error.status() == "StatusCode.NOT_FOUND"


def test_malformed_messages_are_refused_not_internal_errors(client, server):
    channel = grpc.insecure_channel(server.grpc_url)
    infer = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")  # (bytes in, bytes out)
    rng = np.random.default_rng(3)
    codes = set()
    for n in range(300):
        data = rng.bytes(int(rng.integers(1, 200)))
        try:
            infer(data, timeout=30)
            codes.add("OK")
        except grpc.RpcError as e:
            codes.add(e.code().name)
    channel.close()
    assert codes <= {"INVALID_ARGUMENT", "NOT_FOUND"}, codes
    assert client.infer("mlp", [_input("x", np.ones((1, 16), np.float32), "FP32")]).as_numpy("output_0").shape == (1, 8)
