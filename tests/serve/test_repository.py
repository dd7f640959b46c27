"""The model repository extension over HTTP and gRPC, with tritonclient: a directory of .tpexe files, loaded at
start-up (one broken file listed UNAVAILABLE with the reason), unloaded (its requests in flight answered first)
and loaded on request, a model file replaced while it is served, and the refusals (unknown model, parameters)."""

import asyncio
import pathlib
import sys
import threading
import time

import numpy as np
import pytest

import tripy as tp

httpclient = pytest.importorskip("tritonclient.http")
grpcclient = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

httpx = pytest.importorskip("httpx")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from server import free_port, serve  # noqa: E402
from tripy_serve.repository import Batching, ModelStore  # noqa: E402

WAIT_MS = 1500  # a lone 1-row request waits this long for a batch: long enough to be in flight


def _scaled(factor):
    return tp.compile(lambda x: x * float(factor), args=[tp.InputInfo(((1, 2, 4), 3), tp.float32)])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("repository")
    repo = d / "models"
    repo.mkdir()
    _scaled(2).save(str(repo / "double.tpexe"))
    _scaled(3).save(str(repo / "triple.tpexe"))
    (repo / "broken.tpexe").write_bytes(b"not an executable")
    (repo / "notes.txt").write_text("not a model")
    port = free_port()
    with serve(
        ["--model-repository", str(repo), "--grpc-port", str(port), "--max-batch", "4", "--max-wait-ms", str(WAIT_MS)],
        d / "server.log",
    ) as s:
        s.repo, s.grpc_url = repo, f"127.0.0.1:{port}"
        yield s


@pytest.fixture
def clients(server):
    http = httpclient.InferenceServerClient(server.url[len("http://") :], network_timeout=120.0)
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    yield http, grpc
    http.close()
    grpc.close()


def _infer(client, module, model, rows=4):
    x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
    inp = module.InferInput("x", [rows, 3], "FP32")
    inp.set_data_from_numpy(x)
    return x, client.infer(model, [inp]).as_numpy("output_0")


def test_index_lists_the_directory_with_states(clients):
    http, grpc = clients
    index = {m["name"]: m for m in http.get_model_repository_index()}
    assert sorted(index) == ["broken", "double", "triple"]
    assert index["double"]["state"] == "READY" and index["triple"]["state"] == "READY"
    assert index["broken"]["state"] == "UNAVAILABLE" and index["broken"]["reason"]
    assert [m["name"] for m in grpc.get_model_repository_index(as_json=True)["models"]] == [
        "broken",
        "double",
        "triple",
    ]


def test_unload_then_load_over_either_protocol(clients):
    http, grpc = clients
    x, y = _infer(http, httpclient, "triple")
    assert np.array_equal(y, x * 3)
    http.unload_model("triple")
    assert not http.is_model_ready("triple")
    with pytest.raises(InferenceServerException, match="It is in the repository: load it first"):
        _infer(grpc, grpcclient, "triple")
    state = {m["name"]: m["state"] for m in http.get_model_repository_index()}
    assert state["triple"] == "UNAVAILABLE"
    grpc.load_model("triple")
    x, y = _infer(grpc, grpcclient, "triple")
    assert np.array_equal(y, x * 3)


def test_unload_answers_the_requests_in_flight_first(clients, server):
    # (from threads: plain httpx, as tritonclient.http's gevent client stays in the thread that made it)
    http, _ = clients
    result, unloaded = {}, {}
    body = {"inputs": [{"name": "x", "shape": [1, 3], "datatype": "FP32", "data": [1.0, 2.0, 3.0]}]}
    request = threading.Thread(
        target=lambda: result.update(r=httpx.post(f"{server.url}/v2/models/double/infer", json=body, timeout=60))
    )
    request.start()  # it waits WAIT_MS for a batch
    time.sleep(0.3)
    start = time.monotonic()

    def unload():
        unloaded["r"] = httpx.post(f"{server.url}/v2/repository/models/double/unload", timeout=60)
        unloaded["at"] = time.monotonic()

    unloading = threading.Thread(target=unload)
    unloading.start()
    request.join(30)
    unloading.join(30)
    assert result["r"].status_code == 200 and result["r"].json()["outputs"][0]["data"] == [2.0, 4.0, 6.0]
    assert unloaded["r"].status_code == 200 and unloaded["at"] - start > 0.5  # the unload waited for it
    assert not http.is_model_ready("double")
    http.load_model("double")


def test_a_replaced_file_is_served_after_a_load(clients, server):
    http, grpc = clients
    _scaled(5).save(str(server.repo / "double.tpexe"))  # (saved atomically: a reader sees the old or the new file)
    x, y = _infer(http, httpclient, "double")
    assert np.array_equal(y, x * 2)  # still the model that was loaded
    http.load_model("double")
    x, y = _infer(grpc, grpcclient, "double")
    assert np.array_equal(y, x * 5)


def test_refusals(clients, server):
    http, grpc = clients
    with pytest.raises(InferenceServerException, match="There is no model 'resnet' in the repository"):
        http.load_model("resnet")
    with pytest.raises(InferenceServerException, match="There is no model 'resnet'") as e:
        grpc.load_model("resnet")
    assert e.value.status() == "StatusCode.NOT_FOUND"
    with pytest.raises(InferenceServerException, match="Model 'broken' could not be loaded from"):
        http.load_model("broken")
    with pytest.raises(InferenceServerException, match="takes no load or unload parameters"):
        http.load_model("double", config='{"backend": "python"}')
    with pytest.raises(InferenceServerException, match="Unknown model 'ghost'"):
        http.unload_model("ghost")
    x, y = _infer(http, httpclient, "double")  # still serving
    assert y.shape == x.shape


def test_explicit_mode_loads_only_on_request(server, tmp_path):
    with serve(["--model-repository", str(server.repo), "--model-control-mode", "explicit"], tmp_path / "log") as s:
        with s.client() as c:
            index = c.post("/v2/repository/index", json={}).json()
            assert {m["name"]: m["state"] for m in index} == {
                "broken": "UNAVAILABLE",
                "double": "UNAVAILABLE",
                "triple": "UNAVAILABLE",
            }
            assert c.post("/v2/repository/index", json={"ready": True}).json() == []
            assert c.post("/v2/repository/models/triple/load").status_code == 200
            r = c.post(
                "/v2/models/triple/infer",
                json={"inputs": [{"name": "x", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]}]},
            )
            assert r.json()["outputs"][0]["data"] == [3.0, 6.0, 9.0]
            assert c.post("/v2/repository/index", json={"ready": True}).json() == [
                {"name": "triple", "version": "1", "state": "READY"}
            ]


def test_a_request_that_reached_a_model_just_before_its_reload_is_answered(tmp_path):
    """An infer request holds its model from the moment it is routed, and its body arrives after: a reload (or an
    unload) in between must not leave it unanswered on the model taken out of service."""
    _scaled(3).save(str(tmp_path / "triple.tpexe"))
    store = ModelStore(Batching(max_batch=4, max_wait=0.001), repository=str(tmp_path))
    x = np.ones((2, 3), np.float32)

    async def reload_between_routing_and_infer():
        await store.load("triple")
        old = store.get("triple")
        await old.infer([x])  # (its batching loop has run)
        await store.load("triple")  # swapped in, the old model drained
        return await asyncio.wait_for(old.infer([x]), 30)

    (y,) = asyncio.run(reload_between_routing_and_infer())
    assert np.array_equal(y, x * 3)


def test_reloading_a_replaced_file_under_traffic_drops_no_request(clients, server):
    http, _ = clients
    stop, answers = threading.Event(), []
    body = {"inputs": [{"name": "x", "shape": [4, 3], "datatype": "FP32", "data": [1.0] * 12}]}

    def traffic():  # (a request never answered is a timeout, recorded as one)
        with httpx.Client(base_url=server.url, timeout=20) as c:
            while not stop.is_set():
                try:
                    r = c.post("/v2/models/triple/infer", json=body)
                except httpx.HTTPError as e:
                    answers.append((type(e).__name__, str(e)))
                    return
                answers.append((r.status_code, r.json()["outputs"][0]["data"][0] if r.status_code == 200 else r.text))

    workers = [threading.Thread(target=traffic) for _ in range(4)]
    for w in workers:
        w.start()
    for factor in (7, 3, 7):
        _scaled(factor).save(str(server.repo / "triple.tpexe"))
        http.load_model("triple")
    stop.set()
    for w in workers:
        w.join(60)
    assert answers and all(status == 200 for status, _ in answers), [a for a in answers if a[0] != 200][:3]
    assert {value for _, value in answers} <= {3.0, 7.0}
    x, y = _infer(http, httpclient, "triple")
    assert np.array_equal(y, x * 7)
    _scaled(3).save(str(server.repo / "triple.tpexe"))
    http.load_model("triple")
