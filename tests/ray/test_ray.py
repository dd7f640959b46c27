"""tripy on a real local Ray cluster (ray.init with 2 CPUs, so 2 worker processes run the actors and replicas):
Ray Data's map_batches with an executable loaded once per actor, a worker killed mid-job and retried, Ray Serve
with its own batching, tripy serve's Open Inference Protocol app inside Ray Serve, and a clean shutdown. Every
worker compiles nothing (the executable travels pickled, with its compiled code), and every result equals a
local run of the same executable at the same row count (bitwise) and NumPy (closely)."""

import json
import os
import socket
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
serve = pytest.importorskip("ray.serve")

# One local cluster (the module fixture) in one pytest-xdist process: the tests stay together under -n 2.
pytestmark = pytest.mark.xdist_group("ray")

import tripy as tp  # noqa: E402
import tripy_backend  # noqa: E402
from tripy.ray import BatchPredictor, batch_size, deployment  # noqa: E402
from tripy_serve.ray import oip_deployment  # noqa: E402

RNG = np.random.default_rng(0)
W = RNG.standard_normal((16, 4)).astype(np.float32)
B = RNG.standard_normal((4,)).astype(np.float32)
X = RNG.standard_normal((70, 16)).astype(np.float32)


def _reference(x):
    return np.tanh(x @ W + B)


@pytest.fixture(scope="module")
def exe():
    return tp.compile(
        lambda x: tp.tanh(x @ tp.Tensor(W) + tp.Tensor(B)), args=[tp.InputInfo(((1, 4, 8), 16), tp.float32)]
    )


@pytest.fixture(scope="module")
def cluster():
    # (this module's classes and functions travel by value: the workers cannot import a test module)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    old = os.environ.get("TRIPY_CACHE_DIR")
    os.environ["TRIPY_CACHE_DIR"] = ""  # (the workers inherit it: nothing may come from a disk cache)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if old is None:
        os.environ.pop("TRIPY_CACHE_DIR")
    else:
        os.environ["TRIPY_CACHE_DIR"] = old
    if ray.is_initialized():  # (test_shutdown_is_clean shuts it down itself)
        serve.shutdown()
        ray.shutdown()


class CountingPredictor(BatchPredictor):
    """A BatchPredictor that reports, with each row, the programs its process compiled since it started, and which
    fails its process once (the first time it sees the row `crash_at`, with `marker` not yet there)."""

    def __init__(self, executable, crash_at=None, marker=None):
        self.before = tripy_backend.compilation_count()
        super().__init__(executable)
        self.crash_at, self.marker = crash_at, marker

    def __call__(self, batch):
        if self.crash_at in batch["id"] and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(1)  # (a worker lost mid-job: no exception, no cleanup)
        out = super().__call__(batch)
        out["compiled"] = np.full(len(batch["id"]), tripy_backend.compilation_count() - self.before)
        out["pid"] = np.full(len(batch["id"]), os.getpid())
        return out


def _dataset():
    return ray.data.from_items([{"id": i, "x": row} for i, row in enumerate(X)], override_num_blocks=5)


def _collect(ds):
    rows = ds.take_all()
    ids = np.array([r["id"] for r in rows])
    order = np.argsort(ids)
    return ids[order], {key: np.stack([rows[i][key] for i in order]) for key in rows[0] if key != "id"}


def _check_against_a_local_run(exe, ids, out):
    assert np.array_equal(ids, np.arange(len(X)))  # (every row once: none lost, none twice)
    local = BatchPredictor(exe)({"x": X})["output"]
    assert np.array_equal(out["output"], local)  # (each call at batch_size(exe) rows, here as there: bitwise)
    assert np.allclose(out["output"], _reference(X), rtol=1e-5, atol=1e-5)
    assert set(out["compiled"].tolist()) == {0}  # (loading the executable and every call compiled nothing)


def test_map_batches_runs_on_two_workers_compiles_nothing_and_equals_a_local_run(cluster, exe):
    assert batch_size(exe) == 8
    ds = _dataset().map_batches(CountingPredictor, fn_constructor_args=(exe,), batch_size=5, concurrency=2)
    ids, out = _collect(ds)
    _check_against_a_local_run(exe, ids, out)
    assert "x" not in out  # (the input column is not passed through; "id" is)


def test_a_worker_killed_mid_job_is_retried_without_a_wrong_or_lost_row(cluster, exe, tmp_path):
    marker = str(tmp_path / "crashed")
    ds = _dataset().map_batches(CountingPredictor, fn_constructor_args=(exe, 37, marker), batch_size=8, concurrency=2)
    ids, out = _collect(ds)
    assert os.path.exists(marker)  # (a worker did die)
    _check_against_a_local_run(exe, ids, out)


def test_a_saved_file_loads_once_per_actor(cluster, exe, tmp_path):
    path = str(tmp_path / "mlp.tpexe")
    exe.save(path)
    ids, out = _collect(
        _dataset().map_batches(CountingPredictor, fn_constructor_args=(path,), batch_size=8, concurrency=2)
    )
    _check_against_a_local_run(exe, ids, out)


def test_bad_columns_and_rows_are_clear_errors(exe):
    with pytest.raises(
        tp.TripyException,
        match=r"no column for the executable's input\(s\) \['x'\]: its columns "
        r"are \['image'\]",
    ):
        BatchPredictor(exe)({"image": X[:2]})
    with pytest.raises(tp.TripyException, match="rows must be an int from 1 to 8"):
        BatchPredictor(exe, rows=9)
    with pytest.raises(tp.TripyException, match="2 output column name"):
        BatchPredictor(exe, outputs=["a", "b"])({"x": X[:2]})
    scalar = tp.compile(lambda s: s * 2, args=[tp.InputInfo((), tp.float32)])
    with pytest.raises(tp.TripyException, match="every input needs a dim 0"):
        batch_size(scalar)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http(cluster):
    port = _free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    return f"http://127.0.0.1:{port}"


def _post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def test_ray_serve_batches_requests_and_each_gets_its_own_rows(http, exe):
    handle = serve.run(deployment(exe, batch_wait_timeout_s=0.2), name="mlp", route_prefix="/mlp")
    requests = [X[i : i + 1 + i % 3] for i in range(0, 24, 2)]  # (12 requests of 1 to 3 rows)
    with ThreadPoolExecutor(len(requests)) as pool:
        answers = list(pool.map(lambda x: handle.remote({"x": x}).result()["output"], requests))
    for x, got in zip(requests, answers):
        assert np.array_equal(got, BatchPredictor(exe)({"x": x})["output"])
        assert np.allclose(got, _reference(x), rtol=1e-5, atol=1e-5)
    stats = handle.stats.remote().result()
    assert stats["compilations"] == 0
    assert sum(n * count for n, count in stats["batch_sizes"].items()) == len(requests)
    assert max(stats["batch_sizes"]) > 1  # (Ray Serve put several requests in one call)
    # and over HTTP, JSON in and out
    assert np.allclose(_post(f"{http}/mlp", {"x": X[:2].tolist()})["output"], _reference(X[:2]), atol=1e-5)
    serve.delete("mlp")


def test_tripy_serves_open_inference_protocol_app_runs_inside_ray_serve(http, exe):
    serve.run(oip_deployment({"mlp": exe}), name="oip", route_prefix="/oip")
    body = {"inputs": [{"name": "x", "shape": [3, 16], "datatype": "FP32", "data": X[:3].ravel().tolist()}]}
    answer = _post(f"{http}/oip/v2/models/mlp/infer", body)
    out = answer["outputs"][0]
    assert out["shape"] == [3, 4] and out["datatype"] == "FP32"
    assert np.allclose(np.array(out["data"], np.float32).reshape(3, 4), _reference(X[:3]), rtol=1e-5, atol=1e-5)
    metadata = json.loads(urllib.request.urlopen(f"{http}/oip/v2/models/mlp", timeout=60).read())
    assert metadata["inputs"][0]["name"] == "x"
    serve.delete("oip")


def test_shutdown_is_clean(cluster):
    psutil = pytest.importorskip("psutil")
    serve.shutdown()
    ray.shutdown()
    assert not ray.is_initialized()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [
            p
            for p in psutil.Process().children(recursive=True)
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        ]
        if not left:
            break
        time.sleep(0.5)
    assert left == [], [p.name() for p in left]
