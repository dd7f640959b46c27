"""How fast eager mode could be: the eager 10-op loop (``eager_cache_hit.py``) against its two floors.

    uv run python benchmarks/eager_floor.py            # 11 interleaved rounds of 2000 iterations
    uv run python benchmarks/eager_floor.py --quick

Each iteration of the loop makes two tensors from new NumPy data, builds the 10-op expression and reads the
result back as a NumPy array. Measured side by side, in one process:

* ``numpy``: the expression in NumPy.
* ``XLA floor``: only what any eager library over XLA:CPU must do: upload the two arrays (``memory.to_cpu``, as
  ``tp.Tensor`` does), run tripy's own cached program for the expression (taken from the eager program cache),
  and hand its result to NumPy through DLPack (``memory.cpu_dlpack``, as ``np.from_dlpack(tensor)`` does).
  No graph is built.
* ``minimal graph``: the floor plus the least Python a lazy graph can do: one slotted node per op holding its
  inputs, shape and dtype (no checks, no error reporting, no stack capture), a depth-first walk for the
  cache key and the arguments, and one dict lookup. The program and its arguments are tripy's, so the
  result is checked against tripy's.
* ``tripy``: the eager loop itself.

The ratios to NumPy say what the eager target of issue 32 (within 2x NumPy) leaves to the Python side: the
floor is what XLA takes, and the minimal graph is about the least that a Python implementation adds to it.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from _harness import interleaved
from eager_cache_hit import expression, make_data


class Node:
    """An op of the minimal lazy graph: its kind (0: data), inputs, shape, dtype, and the data of a leaf."""

    __slots__ = ("kind", "inputs", "shape", "dtype", "data")

    def __init__(self, kind: int, inputs: Tuple["Node", ...], shape: Any, dtype: Any, data: Any = None) -> None:
        self.kind, self.inputs, self.shape, self.dtype, self.data = kind, inputs, shape, dtype, data

    def __matmul__(self, other: "Node") -> "Node":
        return Node(1, (self, other), (self.shape[0], other.shape[1]), self.dtype)

    def _binary(self, other: Any, kind: int) -> "Node":
        if type(other) is float:  # (a number is a leaf with its uploaded buffer, as in tripy)
            other = Node(0, (), (), self.dtype, NUMBERS[other])
        return Node(
            kind, (self, other), self.shape if not other.shape or other.shape == self.shape else None, self.dtype
        )

    def __add__(self, other: Any) -> "Node":
        return self._binary(other, 2)

    def __sub__(self, other: Any) -> "Node":
        return self._binary(other, 3)

    def __mul__(self, other: Any) -> "Node":
        return self._binary(other, 4)

    def __truediv__(self, other: Any) -> "Node":
        return self._binary(other, 5)


NUMBERS: Dict[float, Any] = {}  # a Python number of the expression -> its device buffer (tripy's)


def unary(kind: int) -> Callable[[Node], Node]:
    return lambda x: Node(kind, (x,), x.shape, x.dtype)


def walk(out: Node) -> Tuple[tuple, List[Any]]:
    """(the graph's key, the buffers of its leaves), depth first from the output as tripy's signature walks."""
    parts: List[int] = []
    buffers: List[Any] = []
    seen: Dict[Node, int] = {}
    stack = [out]
    while stack:
        node = stack.pop()
        k = seen.get(node)
        if k is not None:
            parts.append(-1 - k)
            continue
        seen[node] = len(seen)
        parts.append(node.kind)
        if node.data is not None:
            buffers.append(node.data)
        stack += node.inputs[::-1]
    return tuple(parts), buffers


class CpuResult:
    """A result buffer as ``np.from_dlpack`` reads it through tripy's CPU path."""

    __slots__ = ("buffer",)
    # ``memory.cpu_dlpack``, set by `implementations` (which imports tripy): looked up once, not per call
    to_capsule: Callable[[Any], Any]

    def __init__(self, buffer: Any) -> None:
        self.buffer = buffer

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.to_capsule(self.buffer)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (1, 0)


def implementations() -> Dict[str, Callable[[], Any]]:
    import tripy as tp
    from tripy_backend import memory
    from tripy_frontend.eager import PROGRAM_CACHE
    from tripy_trace.trace import signature

    data = make_data()
    a0, b0 = data[0]
    out = expression(tp.Tensor(a0), tp.Tensor(b0), tp.tanh, tp.exp, tp.sqrt)
    key, inputs = signature([out.trace_tensor])
    expected = np.from_dlpack(out)  # (evaluates: the program is now in the cache)
    device = out.trace_tensor.device
    program = PROGRAM_CACHE.get((key, device.kind, device.index))
    numbers = [t.producer.data for t in inputs[2:]]  # (the arguments after the two inputs: 0.5, 2.0, 1.0)
    NUMBERS.update(zip((0.5, 2.0, 1.0), numbers))
    upload = memory.to_cpu
    CpuResult.to_capsule = staticmethod(memory.cpu_dlpack)  # type: ignore[assignment]
    programs: Dict[tuple, Any] = {}
    state = [0]

    def next_data() -> Tuple[np.ndarray, np.ndarray]:
        i = state[0] = (state[0] + 1) % len(data)
        return data[i]

    def floor() -> Any:
        a, b = next_data()
        return np.from_dlpack(CpuResult(program([upload(a), upload(b)] + numbers)[0]))

    def minimal_graph() -> Any:
        a, b = next_data()
        x = expression(
            Node(0, (), a.shape, a.dtype, upload(a)),
            Node(0, (), b.shape, b.dtype, upload(b)),
            unary(6),
            unary(7),
            unary(8),
        )
        graph_key, buffers = walk(x)
        run = programs.get(graph_key)
        if run is None:
            run = programs[graph_key] = program
        return np.from_dlpack(CpuResult(run(buffers)[0]))

    def tripy_loop() -> Any:
        a, b = next_data()
        return np.from_dlpack(expression(tp.Tensor(a), tp.Tensor(b), tp.tanh, tp.exp, tp.sqrt))

    def numpy_loop() -> Any:
        a, b = next_data()
        return expression(a, b, np.tanh, np.exp, np.sqrt)

    state[0] = len(data) - 1  # (each implementation's first call below reads data[0])
    for fn in (floor, minimal_graph):
        np.testing.assert_allclose(fn(), expected, rtol=1e-6)
        state[0] = len(data) - 1
    return {"numpy": numpy_loop, "XLA floor": floor, "minimal graph": minimal_graph, "tripy": tripy_loop}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 rounds of 500 iterations")
    args = parser.parse_args()
    times = interleaved(
        implementations(), number=500 if args.quick else 2000, rounds=5 if args.quick else 11, warmup=50
    )
    base = times["numpy"]
    print(f"{'per iteration':16} {'us':>8}  x NumPy")
    for name, seconds in times.items():
        print(f"{name:16} {seconds * 1e6:8.1f}  {seconds / base:.2f}x")
    print("(issue 32's eager target: tripy within 2x NumPy)")


if __name__ == "__main__":
    main()
