"""The XLA:CPU plan (tripy_backend.cpu_plan): which runtime a program compiles for, and that both runtimes give
the same numbers through the backend alone. (jaxlib >= 0.8 has the thunk runtime only: every program goes there.)"""

import numpy as np
import pytest

from tripy_backend import _xla, cpu_plan, disk_cache, pipeline

CLASSIC = _xla.has_classic_cpu_runtime()
classic_only = pytest.mark.skipif(not CLASSIC, reason="jaxlib >= 0.8 has the thunk runtime only")


def thunk(program: bytes) -> bool:
    return cpu_plan.module_runtime(program) == "thunk"


def compile_cpu(program: bytes):
    prepared, options = pipeline.for_xla(_xla.refine_shapes(program), "cpu", 3)
    return disk_cache.compile(prepared, options, "cpu", 0)[0]


def module(body: str, args: str, result: str) -> bytes:
    return f"func.func @main({args}) -> {result} {{\n{body}\n}}".encode()


def dot(lhs: str, rhs: str, out: str, lhs_contract: int = 1, rhs_contract: int = 0) -> bytes:
    body = (
        f"  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [{lhs_contract}] x [{rhs_contract}] : "
        f"(tensor<{lhs}xf32>, tensor<{rhs}xf32>) -> tensor<{out}xf32>\n  return %0 : tensor<{out}xf32>"
    )
    return module(body, f"%arg0: tensor<{lhs}xf32>, %arg1: tensor<{rhs}xf32>", f"tensor<{out}xf32>")


@pytest.mark.parametrize(
    "program, expected",
    [
        (dot("2048x768", "768x1", "2048x1"), True),  # a weight times a column: a decoding step's product
        (dot("1x768", "768x2048", "1x2048"), True),  # a row times a weight
        (dot("64x768", "768x1", "64x1"), False),  # matrix-vector, but small: stays in the CPU's caches
        (dot("16x768", "768x2048", "16x2048"), False),  # matrix-matrix: oneDNN GEMM on the classic runtime
        (module("  return %arg0 : tensor<4xf32>", "%arg0: tensor<4xf32>", "tensor<4xf32>"), False),  # no product
    ],
)
def test_thunk_runtime_for_big_matrix_vector_products_only(program, expected):
    assert thunk(program) is (expected or not CLASSIC)


def test_one_matrix_matrix_product_keeps_the_classic_runtime():
    body = (
        "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
        "(tensor<4096x768xf32>, tensor<768x1xf32>) -> tensor<4096x1xf32>\n"
        "  %1 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0] : "
        "(tensor<4096x768xf32>, tensor<768x8xf32>) -> tensor<4096x8xf32>\n"
        "  return %1 : tensor<4096x8xf32>"
    )
    program = module(
        body, "%arg0: tensor<4096x768xf32>, %arg1: tensor<768x1xf32>, %arg2: tensor<768x8xf32>", "tensor<4096x8xf32>"
    )
    assert thunk(program) is not CLASSIC


def conv(channels: int, size: int, extra_body: str = "", extra_args: str = "") -> bytes:
    """A 3x3 convolution, NHWC input and HWIO kernel (the layouts tp.Conv's programs use on the CPU), with
    `extra_body` (ops on `extra_args`) before its return."""
    x, k = f"1x{size}x{size}x{channels}", f"3x3x{channels}x{channels}"
    body = (
        f"  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
        "window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
        f"feature_group_count = 1 : i64}} : (tensor<{x}xf32>, tensor<{k}xf32>) -> tensor<{x}xf32>\n"
        f"{extra_body}  return %0 : tensor<{x}xf32>"
    )
    return module(body, f"%arg0: tensor<{x}xf32>, %arg1: tensor<{k}xf32>{extra_args}", f"tensor<{x}xf32>")


@pytest.mark.parametrize(
    "program, expected",
    [
        (conv(512, 7), True),  # 2.4M kernel elements: oneDNN would copy them into its layout on every call
        (conv(64, 56), False),  # 37K kernel elements: the classic runtime's oneDNN convolution is faster
    ],
)
def test_thunk_runtime_for_big_convolution_kernels(program, expected):
    assert thunk(program) is (expected or not CLASSIC)


def test_convolutions_beside_a_matrix_matrix_product_keep_the_classic_runtime():
    product = (
        "  %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0] : "
        "(tensor<16x768xf32>, tensor<768x2048xf32>) -> tensor<16x2048xf32>\n"
    )
    program = conv(512, 7, product, ", %arg2: tensor<16x768xf32>, %arg3: tensor<768x2048xf32>")
    assert thunk(program) is not CLASSIC


@pytest.mark.parametrize("runtime", ["auto", "classic"])
def test_convolution_program_runs_the_same_on_both_runtimes(monkeypatch, runtime):
    monkeypatch.setenv("TRIPY_XLA_CPU_RUNTIME", runtime)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 7, 7, 512)).astype(np.float32)
    k = rng.standard_normal((3, 3, 512, 512)).astype(np.float32)
    exe = compile_cpu(conv(512, 7))
    out = np.asarray(_xla.execute(exe, [_xla.to_device(x, "cpu", 0), _xla.to_device(k, "cpu", 0)])[0])
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    expected = sum(padded[:, i : i + 7, j : j + 7, :] @ k[i, j] for i in range(3) for j in range(3))
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-2)


@classic_only
@pytest.mark.parametrize("runtime, classic", [("auto", False), ("classic", True), ("thunk", False)])
def test_environment_variable_overrides_the_choice(monkeypatch, runtime, classic):
    monkeypatch.setenv("TRIPY_XLA_CPU_RUNTIME", runtime)
    _, options = pipeline.for_xla(dot("2048x768", "768x1", "2048x1"), "cpu", 3)
    assert (("xla_cpu_use_thunk_runtime", False) in options) is classic
    assert runtime in cpu_plan.fingerprint("cpu", 0)  # a forced runtime never loads another's cache entries


@pytest.mark.parametrize("runtime", ["auto", "classic"])
def test_matrix_vector_program_runs_the_same_on_both_runtimes(monkeypatch, runtime):
    monkeypatch.setenv("TRIPY_XLA_CPU_RUNTIME", runtime)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2048, 768)).astype(np.float32)
    x = rng.standard_normal((768, 1)).astype(np.float32)
    exe = compile_cpu(dot("2048x768", "768x1", "2048x1"))
    out = _xla.execute(exe, [_xla.to_device(w, "cpu", 0), _xla.to_device(x, "cpu", 0)])
    np.testing.assert_allclose(np.asarray(out[0]), w @ x, rtol=1e-4, atol=1e-4)


def test_convolution_programs_send_their_convolutions_to_ynnpack_where_xla_has_it():
    ynn = _xla.accepts_cpu_option(*cpu_plan.YNN_CONVOLUTIONS)  # (jaxlib 0.10: yes; 0.6: no such option)
    _, options = pipeline.for_xla(conv(512, 7), "cpu", 3)
    assert (cpu_plan.YNN_CONVOLUTIONS in options) is ynn
    _, options = pipeline.for_xla(dot("2048x768", "768x1", "2048x1"), "cpu", 3)
    assert cpu_plan.YNN_CONVOLUTIONS not in options
    assert not _xla.accepts_cpu_option("xla_cpu_no_such_option", "1")
