"""Faults: clients that go away mid-request and mid-stream, a body cut short, 1,000 random malformed requests
(each a 4xx, never a 500; the server answers correctly afterwards with flat memory), and SIGTERM with HTTP and gRPC
requests in flight (all answered)."""

import json
import pathlib
import signal
import socket
import sys
import threading
import time

import numpy as np
import pytest

import tripy as tp

httpx = pytest.importorskip("httpx")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from server import free_port, serve  # noqa: E402

RNG = np.random.default_rng(7)
WEIGHT = RNG.normal(size=(16, 8)).astype(np.float32)
WAIT_MS = 1000


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    w = tp.Tensor(WEIGHT)
    tp.compile(lambda x: tp.tanh(x @ w), args=[tp.InputInfo(((1, 4, 16), 16), tp.float32)]).save(str(d / "mlp.tpexe"))
    return d / "mlp.tpexe"


@pytest.fixture(scope="module")
def server(model):
    with serve([str(model), "--max-batch", "8", "--max-wait-ms", str(WAIT_MS)], model.parent / "server.log") as s:
        yield s


def _body(rows=8, x=None):
    x = RNG.normal(size=(rows, 16)).astype(np.float32) if x is None else x
    return x, {"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32", "data": x.reshape(-1).tolist()}]}


def _check_serving(server):
    x, body = _body()
    r = httpx.post(f"{server.url}/v2/models/mlp/infer", json=body, timeout=60)
    assert r.status_code == 200
    np.testing.assert_allclose(np.array(r.json()["outputs"][0]["data"]).reshape(8, 8), np.tanh(x @ WEIGHT), atol=1e-5)


def _pending(server):
    text = httpx.get(f"{server.url}/metrics").text
    return sum(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("tripy_inference_pending_request_count{")
    )


def _raw(server, data: bytes, read=False):
    """Send `data` on a new connection; with `read`, close the sending side and return what the server answers."""
    host, port = server.url[len("http://") :].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(data)
        if not read:
            return None
        s.shutdown(socket.SHUT_WR)
        return s.recv(65536)


def test_a_client_that_disconnects_mid_request_frees_its_slot(server):
    _, body = _body(rows=1)  # a lone row: it waits WAIT_MS for a batch, and the client leaves meanwhile
    payload = json.dumps(body).encode()
    _raw(
        server,
        b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload),
    )
    time.sleep(0.2)
    deadline = time.monotonic() + 30
    while _pending(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pending(server) == 0
    _check_serving(server)


def test_a_body_cut_short_does_not_hurt(server):
    # The client says 1000 bytes, sends 12 and stops sending: the server can answer nothing (or a 4xx) and must
    # go on serving others.
    answer = _raw(
        server, b'POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"inputs": [', read=True
    )
    assert answer == b"" or answer.startswith(b"HTTP/1.1 4"), answer
    _check_serving(server)
    assert "Traceback" not in server.log_text()


def _pick(options):
    return options[int(RNG.integers(len(options)))]


def _malformed(i):
    """A request body and headers that are wrong in one of several ways, chosen by `i`."""
    _, good = _body(rows=1 + i % 3)
    kind = i % 8
    item = good["inputs"][0]
    if kind == 0:
        return RNG.bytes(int(RNG.integers(0, 300))), {}
    if kind == 1:
        text = json.dumps(good).encode()
        return text[: int(RNG.integers(0, len(text) - 1))], {}
    if kind == 2:
        item["shape"] = _pick([[-1, 16], [10**30, 16], [1, 16, 1], "1,16", [1.5, 16], [True, 16], [], [99, 16]])
    elif kind == 3:
        item["datatype"] = _pick(["FP64", "INT16", "BYTES", "fp32", "", 5, None, "UINT8", "FP99"])
    elif kind == 4:
        item["data"] = _pick(["abc", {"a": 1}, [[1, 2], [3]], ["x"] * 16, [1.0] * 3, [1e400], None])
    elif kind == 5:
        item["parameters"] = {"binary_data_size": _pick([-5, "9", 10**20, 64, 3.5])}
        header = json.dumps(good).encode()
        return header + RNG.bytes(int(RNG.integers(0, 80))), {"Inference-Header-Content-Length": str(len(header))}
    elif kind == 6:
        good = _pick(
            [
                [good],
                {"inputs": item},
                {"inputs": [item], "outputs": "all"},
                {"inputs": [item], "parameters": {"binary_data_output": "yes"}},
                {"inputs": [item], "outputs": [{"name": "output_7"}]},
                {"inputs": [{"name": 5}]},
            ]
        )
    else:
        header = json.dumps(good).encode()
        return header, {"Inference-Header-Content-Length": _pick(["-1", "abc", str(len(header) + 10), "1e3"])}
    return json.dumps(good, allow_nan=True).encode(), {}


def _rss_kb(pid):
    status = pathlib.Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])


def test_a_thousand_malformed_requests_are_each_a_4xx(server):
    with httpx.Client(base_url=server.url, timeout=60) as c:

        def send(i):
            content, headers = _malformed(i)
            return c.post(
                "/v2/models/mlp/infer", content=content, headers={"content-type": "application/json", **headers}
            )

        for i in range(200):  # (warm-up: the allocator's pools, the loggers)
            send(i)
        before = _rss_kb(server.process.pid)
        statuses = [send(i).status_code for i in range(1000)]
        after = _rss_kb(server.process.pid)
    assert all(400 <= s < 500 for s in statuses), sorted(set(statuses))
    assert after - before < 20_000, f"RSS grew by {after - before} kB over 1,000 malformed requests"
    _check_serving(server)


def test_sigterm_answers_the_http_and_grpc_requests_in_flight(model, tmp_path):
    grpcclient = pytest.importorskip("tritonclient.grpc")
    port = free_port()
    results = {}
    with serve(
        [str(model), "--grpc-port", str(port), "--max-batch", "8", "--max-wait-ms", "1500"], tmp_path / "log"
    ) as s:
        xs = [RNG.normal(size=(1, 16)).astype(np.float32) for _ in range(6)]

        def http_call(i):
            results[i] = httpx.post(f"{s.url}/v2/models/mlp/infer", json=_body(x=xs[i])[1], timeout=60)

        def grpc_call(i):
            c = grpcclient.InferenceServerClient(f"127.0.0.1:{port}")
            inp = grpcclient.InferInput("x", [1, 16], "FP32")
            inp.set_data_from_numpy(xs[i])
            results[i] = c.infer("mlp", [inp]).as_numpy("output_0")
            c.close()

        threads = [threading.Thread(target=http_call if i < 3 else grpc_call, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while _pending(s) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        s.process.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(60)
        assert s.process.wait(60) in (0, -signal.SIGTERM)
    for i, x in enumerate(xs):
        got = np.array(results[i].json()["outputs"][0]["data"]).reshape(1, 8) if i < 3 else results[i]
        np.testing.assert_allclose(got, np.tanh(x @ WEIGHT), atol=1e-5)
