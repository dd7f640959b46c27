"""Batch inference throughput (rows/s): one process, two Ray workers, and ONNX Runtime in the same Ray setup.

One ONNX model (an MLP, IN -> HIDDEN -> OUT, float32, ReLU, random weights) is imported with ``tp.from_onnx`` and
compiled for batches of 1..BATCH rows; ONNX Runtime runs the same model. Then, in one run:

* tripy, one process: ``tripy.ray.BatchPredictor`` called here on the whole array (calls of BATCH rows);
* tripy, Ray: ``ray.data`` ``map_batches(BatchPredictor, concurrency=2)`` on a local cluster of 2 CPUs;
* ONNX Runtime, one process, and in Ray the same way (an actor class holding an ``InferenceSession``).

A Ray job is timed whole (actors starting, the executable or model shipped and loaded, the data moved); each is
run twice and the faster run is kept. Every result is checked against NumPy. Needs scripts/ray-deps.

    uv run python benchmarks/ray_batch.py                 # 20000 rows, 256 -> 1024 -> 64, batches of 256
    uv run python benchmarks/ray_batch.py --rows 5000     # briefer

One run (--rows 5000, the shared 2-core development machine, Ray 2.60, ONNX Runtime 1.32): tripy one process
66582 rows/s, tripy 2 Ray workers 598, ONNX Runtime one process 67401, ONNX Runtime 2 Ray workers 1253. A job this
small is all start-up: each Ray job (8.4 s for tripy, 4.0 s for ONNX Runtime) is mostly its two actors starting,
and a tripy actor imports tripy and jaxlib before it loads the executable; the computing itself is 0.08 s. Ray
pays off when the dataset is large or does not fit one machine, not for 5000 rows on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Callable, Dict, Tuple

os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # (see docs/guides/scaling_out.rst)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import ray  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tripy as tp  # noqa: E402
from tripy.ray import BatchPredictor  # noqa: E402


def mlp(n_in: int, hidden: int, n_out: int) -> Tuple[onnx.ModelProto, Callable[[np.ndarray], np.ndarray]]:
    """The ONNX model and its NumPy reference."""
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((n_in, hidden)) / np.sqrt(n_in)).astype(np.float32)
    w2 = (rng.standard_normal((hidden, n_out)) / np.sqrt(hidden)).astype(np.float32)
    b1, b2 = np.full(hidden, 0.1, np.float32), np.full(n_out, -0.1, np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h"]),
        helper.make_node("MatMul", ["h", "w2"], ["y0"]),
        helper.make_node("Add", ["y0", "b2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", n_in])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n_out])],
        [numpy_helper.from_array(a, name) for a, name in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return model, lambda x: np.maximum(x @ w1 + b1, 0) @ w2 + b2


class OrtPredictor:
    """ONNX Runtime's counterpart of BatchPredictor (one session per actor)."""

    def __init__(self, model_bytes: bytes) -> None:
        self.session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        x = np.ascontiguousarray(batch[COLUMN])
        return {"id": batch["id"], "output": self.session.run(None, {"x": x})[0]}


# The data's column: the executable's input (from_onnx's module takes its inputs as `inputs`), read by both.
COLUMN = "inputs_0"


def ray_job(cls: type, arg: object, x: np.ndarray, batch: int) -> np.ndarray:
    ds = ray.data.from_items([{"id": i, COLUMN: row} for i, row in enumerate(x)], override_num_blocks=8)
    rows = ds.map_batches(cls, fn_constructor_args=(arg,), batch_size=batch, concurrency=2).take_all()
    rows.sort(key=lambda r: r["id"])
    return np.stack([r["output"] for r in rows])


def best_of_two(run: Callable[[], np.ndarray]) -> Tuple[float, np.ndarray]:
    times, out = [], None
    for _ in range(2):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    assert out is not None
    return min(times), out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--dims", type=int, nargs=3, default=(256, 1024, 64), metavar=("IN", "HIDDEN", "OUT"))
    args = p.parse_args()
    model, reference = mlp(*args.dims)
    module = tp.from_onnx(model, dims={"batch": (1, args.batch, args.batch)})
    exe = tp.compile(module, args=list(module.input_infos))
    assert list(exe.input_infos) == [COLUMN], exe
    x = np.random.default_rng(1).standard_normal((args.rows, args.dims[0])).astype(np.float32)
    expected = reference(x)
    session = OrtPredictor(model.SerializeToString())
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    jobs = {
        "tripy, one process": lambda: BatchPredictor(exe)({COLUMN: x})["output"],
        "tripy, 2 Ray workers": lambda: ray_job(BatchPredictor, exe, x, args.batch),
        "ONNX Runtime, one process": lambda: np.concatenate(
            [
                session({"id": np.arange(len(c)), COLUMN: c})["output"]
                for c in np.split(x, range(args.batch, len(x), args.batch))
            ]
        ),
        "ONNX Runtime, 2 Ray workers": lambda: ray_job(OrtPredictor, model.SerializeToString(), x, args.batch),
    }
    print(
        f"{args.rows} rows, MLP {args.dims[0]} -> {args.dims[1]} -> {args.dims[2]}, batches of {args.batch}, "
        f"{os.cpu_count()} CPUs on this machine, Ray with num_cpus=2"
    )
    rates = {}
    for name, job in jobs.items():
        seconds, out = best_of_two(job)
        assert np.allclose(out, expected, rtol=1e-3, atol=1e-3), name
        rates[name] = args.rows / seconds
        print(f"  {name:30s} {rates[name]:12.0f} rows/s  ({seconds:.2f} s)")
    ray.shutdown()
    print("ratios:")
    print(f"  tripy Ray / tripy one process:      {rates['tripy, 2 Ray workers'] / rates['tripy, one process']:.2f}")
    print(
        f"  tripy Ray / ONNX Runtime Ray:       {rates['tripy, 2 Ray workers'] / rates['ONNX Runtime, 2 Ray workers']:.2f}"
    )
    print(
        f"  tripy / ONNX Runtime, one process:  {rates['tripy, one process'] / rates['ONNX Runtime, one process']:.2f}"
    )


if __name__ == "__main__":
    main()
