"""Workload 1 - eager mode, cache hit: a 10-op expression (a small matmul + elementwise ops)
re-evaluated in a loop with new input data each time.

Each iteration makes tensors from fresh NumPy data, builds the expression, and reads the result back
as a NumPy array (what ``print`` costs a user). The compiled program comes from tripy's cache after
the first iteration; the peers do the same work: ``jax.jit`` (its C++ dispatch path, NumPy inputs),
NumPy itself, and where they are installed (``benchmarks/peers/.venv``) PyTorch on the CPU, ONNX Runtime and
OpenVINO (the expression as an ONNX graph built with ``onnx.helper``, run from NumPy inputs to a NumPy result).

Target: tripy <= 2x jax.jit.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

import numpy as np

from _harness import Row, interleaved, optional_module

N = 64  # the "small matmul": N x N @ N x N
NUM_DATA = 16  # distinct input arrays cycled through, so every iteration sees new data


def expression(a: Any, b: Any, tanh: Callable, exp: Callable, sqrt: Callable) -> Any:
    """10 ops: matmul, +, *, tanh, -, exp, /, +, sqrt, *."""
    x = a @ b
    x = x + a
    x = x * 0.5
    x = tanh(x)
    x = x - b
    x = exp(x)
    x = x / 2.0
    x = x + 1.0
    x = sqrt(x)
    return x * a


def make_data(n: int = N, count: int = NUM_DATA) -> List[tuple]:
    rng = np.random.default_rng(0)
    return [
        (rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32))
        for _ in range(count)
    ]


def implementations(data: List[tuple]) -> Dict[str, Callable[[], Any]]:
    """name -> a zero-argument callable that runs one iteration (advancing through `data`)."""
    import tripy as tp

    impls: Dict[str, Callable[[], Any]] = {}

    def cycler(step: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[[], Any]:
        state = [0]

        def run() -> Any:
            i = state[0] = (state[0] + 1) % len(data)
            return step(*data[i])

        return run

    def tripy_step(a: np.ndarray, b: np.ndarray) -> Any:
        out = expression(tp.Tensor(a), tp.Tensor(b), tp.tanh, tp.exp, tp.sqrt)
        return np.from_dlpack(out)

    impls["tripy"] = cycler(tripy_step)
    impls["numpy"] = cycler(lambda a, b: expression(a, b, np.tanh, np.exp, np.sqrt))

    jax = optional_module("jax")
    if jax is not None:
        import jax.numpy as jnp

        jitted = jax.jit(lambda a, b: expression(a, b, jnp.tanh, jnp.exp, jnp.sqrt))
        impls["jax.jit"] = cycler(lambda a, b: np.asarray(jitted(a, b)))

    torch = optional_module("torch")
    if torch is not None:
        torch.set_grad_enabled(False)
        impls["torch"] = cycler(
            lambda a, b: expression(torch.from_numpy(a), torch.from_numpy(b), torch.tanh, torch.exp, torch.sqrt).numpy()
        )

    model = onnx_expression()
    ort = optional_module("onnxruntime")
    if model is not None and ort is not None:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        impls["onnxruntime"] = cycler(lambda a, b: session.run(None, {"a": a, "b": b})[0])
    ov = optional_module("openvino")
    if model is not None and ov is not None:
        compiled = ov.Core().compile_model(
            ov.Core().read_model(model.SerializeToString()), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
        )
        request = compiled.create_infer_request()
        impls["openvino"] = cycler(lambda a, b: request.infer({"a": a, "b": b})[compiled.output(0)].copy())
    return impls


def onnx_expression() -> Any:
    """`expression` as an ONNX model (inputs a, b: float32 [N, N]), or None without the onnx package."""
    onnx = optional_module("onnx")
    if onnx is None:
        return None
    h = onnx.helper
    f32 = onnx.TensorProto.FLOAT
    consts = [h.make_tensor(name, f32, [], [value]) for name, value in (("half", 0.5), ("two", 2.0), ("one", 1.0))]
    steps = [
        ("MatMul", ["a", "b"]),
        ("Add", ["x0", "a"]),
        ("Mul", ["x1", "half"]),
        ("Tanh", ["x2"]),
        ("Sub", ["x3", "b"]),
        ("Exp", ["x4"]),
        ("Div", ["x5", "two"]),
        ("Add", ["x6", "one"]),
        ("Sqrt", ["x7"]),
        ("Mul", ["x8", "a"]),
    ]
    nodes = [h.make_node(op, inputs, [f"x{i}"]) for i, (op, inputs) in enumerate(steps)]
    io = [h.make_tensor_value_info(name, f32, [N, N]) for name in ("a", "b", f"x{len(steps) - 1}")]
    graph = h.make_graph(nodes, "expression", io[:2], io[2:], initializer=consts)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def check(data: List[tuple]) -> None:
    """The implementations agree (a benchmark of wrong answers is worthless)."""
    impls = implementations(data[:1])
    ref = impls["numpy"]()
    for name, fn in impls.items():
        np.testing.assert_allclose(fn(), ref, rtol=1e-4, atol=1e-4, err_msg=name)


def breakdown(data: List[tuple], iterations: int) -> str:
    """Where tripy's time goes in one iteration (medians): making the input tensors, building the
    expression, evaluating (trace, cache key, cache lookup, launching the program) and waiting for /
    reading the result; and jax.jit's call vs its wait."""
    import statistics
    import time

    import tripy as tp

    from tripy_trace.trace import signature

    parts: Dict[str, List[float]] = {"inputs": [], "build": [], "eval": [], "wait+read": []}
    walk: List[float] = []
    for i in range(iterations):
        a, b = data[i % len(data)]
        t0 = time.perf_counter()
        ta, tb = tp.Tensor(a), tp.Tensor(b)
        t1 = time.perf_counter()
        out = expression(ta, tb, tp.tanh, tp.exp, tp.sqrt)
        t2 = time.perf_counter()
        out.eval()
        t3 = time.perf_counter()
        np.from_dlpack(out)
        t4 = time.perf_counter()
        for key, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            parts[key].append(dt)
        if i % 4 == 0:  # what eval spends finding the program: one walk over the graph (timed on its own)
            out = expression(ta, tb, tp.tanh, tp.exp, tp.sqrt)
            t5 = time.perf_counter()
            signature([out.trace_tensor])
            walk.append(time.perf_counter() - t5)
    text = "tripy: " + ", ".join(f"{k} {statistics.median(v) * 1e6:.0f} us" for k, v in parts.items())
    text += f" (eval includes the graph walk for the cache key, {statistics.median(walk) * 1e6:.0f} us)"
    jax = optional_module("jax")
    if jax is not None:
        import jax.numpy as jnp

        jitted = jax.jit(lambda a, b: expression(a, b, jnp.tanh, jnp.exp, jnp.sqrt))
        call, wait = [], []
        for i in range(iterations):
            a, b = data[i % len(data)]
            t0 = time.perf_counter()
            r = jitted(a, b)
            t1 = time.perf_counter()
            np.asarray(r)
            t2 = time.perf_counter()
            call.append(t1 - t0)
            wait.append(t2 - t1)
        text += (
            f"; jax.jit: call (transfer + launch) {statistics.median(call) * 1e6:.0f} us, wait+read "
            f"{statistics.median(wait) * 1e6:.0f} us"
        )
    return text


def run(quick: bool = False) -> List[Row]:
    data = make_data()
    check(data)
    times = interleaved(implementations(data), number=50 if quick else 200, rounds=5 if quick else 15)
    tripy = times.pop("tripy")
    best = min(times, key=lambda name: times[name] or float("inf"))
    note = f"best peer: {best} (tripy {tripy / times[best]:.2f}x its time); " if tripy and times[best] else ""
    return [
        Row(
            f"1. eager cache hit: 10-op expr ({N}x{N} matmul + 9 elementwise), new data each time",
            tripy,
            times,
            "<= 2x jax.jit",
            reference="jax.jit",
            kind="time",
            limit=2.0,
            note=note + breakdown(data, 300 if quick else 1000),
        )
    ]


if __name__ == "__main__":
    import sys

    from run_all import print_table

    print_table(run(quick="--quick" in sys.argv))
