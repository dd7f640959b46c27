"""The ``transposed-weights`` pass: in a range's bucket of few rows, each transpose of a baked-in weight that a product
reads becomes an argument of its own (the copy, after the other arguments); the copies' program makes them."""

import numpy as np
import pytest

from tripy_backend import _xla, disk_cache, pipeline
from tripy_backend.passes import Job, transposed_weights


def linear(rows: int) -> str:
    """``x @ W^T + b`` for `rows` rows: x is the caller's input, W and b are baked in (arguments 1 and 2)."""
    return f"""func.func @main(%arg0: tensor<{rows}x768xf32>, %arg1: tensor<2048x768xf32>, %arg2: tensor<{rows}x2048xf32>) -> tensor<{rows}x2048xf32> {{
  %0 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<2048x768xf32>) -> tensor<768x2048xf32>
  %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<{rows}x768xf32>, tensor<768x2048xf32>) -> tensor<{rows}x2048xf32>
  %2 = stablehlo.add %1, %arg2 : tensor<{rows}x2048xf32>
  return %2 : tensor<{rows}x2048xf32>
}}"""


READS_COPY = """func.func @main(%arg0: tensor<4x768xf32>, %arg1: tensor<2048x768xf32>, %arg2: tensor<4x2048xf32>, %arg3: tensor<768x2048xf32>) -> tensor<4x2048xf32> {
  %0 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [1] x [0] : (tensor<4x768xf32>, tensor<768x2048xf32>) -> tensor<4x2048xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<4x2048xf32>
  return %1 : tensor<4x2048xf32>
}"""


def shapes(rows: int):
    return [(rows, 768), (2048, 768), (rows, 2048)]


def test_a_bucket_of_few_rows_reads_a_copy(same_module):
    module, transposed = pipeline.weight_copies(linear(4).encode(), shapes(4), shapes(3), fixed=1)
    same_module(module, READS_COPY)
    assert transposed == [1]


@pytest.mark.parametrize("rows", [64, 256])
def test_a_bucket_of_many_rows_reads_the_weight_as_stored(rows):  # (cpu_plan: MANY_ROWS, THUNK_MANY_ROWS)
    module = linear(rows).encode()
    assert pipeline.weight_copies(module, shapes(rows), shapes(rows), fixed=1) == (module, [])


def test_a_bucket_is_asked_for_at_its_smallest_call():
    # (a bucket of bound 256 from 193 rows reads the weight as stored; one of bound 64 from 17 rows reads the copy)
    module = linear(256).encode()
    assert pipeline.weight_copies(module, shapes(256), shapes(193), fixed=1) == (module, [])
    assert pipeline.weight_copies(linear(64).encode(), shapes(64), shapes(17), fixed=1)[1] == [1]


def test_only_baked_in_weights_get_copies():
    module = linear(4).encode()
    assert pipeline.weight_copies(module, shapes(4), shapes(4), fixed=2) == (module, [])  # (W is the caller's input)
    assert pipeline.weight_copies(module, shapes(4), shapes(4), fixed=-1) == (module, [])  # (not known: no copies)


def test_only_on_xla_cpu():
    assert transposed_weights.PASS.applies(Job(platform="cpu", fixed=1))
    assert not transposed_weights.PASS.applies(Job(platform="cuda", fixed=1))
    assert not transposed_weights.PASS.applies(Job(platform="cpu"))


def test_same_numbers_with_the_copy():
    rng = np.random.default_rng(2)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in shapes(4))
    module, transposed = pipeline.weight_copies(linear(4).encode(), shapes(4), shapes(4), fixed=1)
    copier = _compiled(transposed_weights.copies_module(linear(4).encode(), transposed))
    buffers = [_xla.to_device(a, "cpu", 0) for a in (x, w, b)]
    (copy,) = _xla.execute(copier, [buffers[k] for k in transposed])
    np.testing.assert_array_equal(np.asarray(copy), w.T)
    out = _xla.execute(_compiled(module), buffers + [copy])
    np.testing.assert_allclose(np.asarray(out[0]), x @ w.T + b, rtol=1e-4, atol=1e-4)


def _compiled(module: bytes):
    prepared, options = pipeline.for_xla(module, "cpu", 3)
    return disk_cache.compile(prepared, options, "cpu", 0)[0]
