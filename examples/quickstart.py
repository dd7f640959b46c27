"""tripy quickstart: build a small program, look at each IR, evaluate it eagerly (compiled programs are cached
by the graph's structure), then compile it ahead of time with tp.compile and reuse the compiled program."""

import time

import numpy as np

import tripy as tp

# 1. Ops only build a graph; printing evaluates. Turn on IR logging to see each stage.
tp.logger.verbosity = {"trace", "flat_ir", "mlir"}
inp = tp.full((2, 3), value=0.5)
out = tp.tanh(inp)
print(out)
tp.logger.verbosity = set()

# 2. Data in and out: NumPy (or any DLPack / array-protocol object) in, DLPack out.
x = tp.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
w = tp.ones((3, 2))
y = tp.tanh(x @ w + 1.0)
print("y =", y.tolist(), "shape:", y.shape, "dtype:", y.dtype, "device:", y.device)
assert np.allclose(np.from_dlpack(y), np.tanh(np.arange(6, dtype=np.float32).reshape(2, 3) @ np.ones((3, 2)) + 1))


# 3. Eager mode caches compiled programs by the graph's structure: new data, same graph -> no recompile.
def step(a: tp.Tensor) -> tp.Tensor:
    return tp.sum(tp.exp(a * 0.5) - a, dim=1)


data = [np.random.default_rng(i).standard_normal((64, 64)).astype(np.float32) for i in range(3)]
start = time.perf_counter()
step(tp.Tensor(data[0])).eval()
first = time.perf_counter() - start
start = time.perf_counter()
result = step(tp.Tensor(data[1])).eval()
second = time.perf_counter() - start
assert np.allclose(np.from_dlpack(result), np.sum(np.exp(data[1] * 0.5) - data[1], axis=1), rtol=1e-5)
print(f"first eval (trace + lower + compile + run): {first * 1e3:.1f} ms; cached re-eval: {second * 1e3:.2f} ms")


# 4. tp.compile traces once for declared input shapes and compiles ahead of time: calls reuse the compiled
#    program (no tracing, no lowering, no compiling), for any data, and it can be saved and loaded.
compiled_step = tp.compile(step, args=[tp.InputInfo((64, 64), tp.float32)])
inputs = [tp.Tensor(d) for d in data]
start = time.perf_counter()
results = [compiled_step(t) for t in inputs]
per_call = (time.perf_counter() - start) / len(inputs)
for d, r in zip(data, results):
    assert np.allclose(np.from_dlpack(r), np.sum(np.exp(d * 0.5) - d, axis=1), rtol=1e-5)
print(f"compiled program: {per_call * 1e3:.2f} ms per call, reused for {len(inputs)} inputs")
