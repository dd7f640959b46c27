"""tp.compile compiles once for the whole declared range: sweeping every size in range compiles nothing
(counted through the backend), after tp.compile and after Executable.load in a new process, and the
results match NumPy."""

import io
import json
import math
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import tripy as tp
import tripy_backend
from tripy_backend import range_plan

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def bounded_programs_only(request, monkeypatch):
    """Most tests here are about bounded programs, which a cheap program would mostly not use: it gets a static
    program for each of the sizes nearest opt (``range_plan.EXACT_SIZES``). They run without those; tests that
    take `plan` run both ways. (Nor the finer buckets of a program that is not cheap: ``range_plan.FINER_BOUNDED``.)"""
    if "plan" not in request.fixturenames:
        monkeypatch.setattr(range_plan, "EXACT_SIZES", 0)
        monkeypatch.setattr(range_plan, "FINER_BOUNDED", 0)


@pytest.fixture(params=["bounded only", "exact sizes"])
def plan(request, monkeypatch):
    if request.param == "bounded only":
        monkeypatch.setattr(range_plan, "EXACT_SIZES", 0)
        monkeypatch.setattr(range_plan, "FINER_BOUNDED", 0)
    return request.param


def erf(x):
    return np.vectorize(math.erf)(x)


class MLP(tp.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = tp.Linear(64, 128)
        self.fc2 = tp.Linear(128, 64)

    def forward(self, x):
        return self.fc2(tp.gelu(self.fc1(x)))


def mlp_reference(w, x):
    h = x @ w["fc1.weight"].T + w["fc1.bias"]
    h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
    return h @ w["fc2.weight"].T + w["fc2.bias"]


def attention(x):
    B, T, C = x.shape
    D = C // 2  # shape values that become Python numbers
    q = tp.permute(tp.reshape(x, (B, T, 2, D)), (0, 2, 1, 3))
    s = (q @ tp.transpose(q, -2, -1)) * (1 / math.sqrt(D))
    s = tp.masked_fill(s, tp.tril(tp.ones((T, T), dtype=tp.float32)) == 0, float("-inf"))
    return tp.reshape(tp.permute(tp.softmax(s, dim=-1) @ q, (0, 2, 1, 3)), (B, T, C))


def attention_reference(x):
    n = x.shape[1]
    q = x.reshape(1, n, 2, 8).transpose(0, 2, 1, 3)
    s = q @ q.transpose(0, 1, 3, 2) / math.sqrt(8)
    s = np.where(np.tril(np.ones((n, n))) > 0, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ q).transpose(0, 2, 1, 3).reshape(1, n, 16)


@pytest.fixture(scope="module")
def mlp():
    m = MLP()
    m.initialize_dummy_parameters()
    weights = {k: np.from_dlpack(v).astype(np.float64) for k, v in m.state_dict().items()}
    return m, weights


def test_mlp_every_batch_size_without_compiling(mlp, plan):
    m, w = mlp
    exe = tp.compile(m, args=[tp.InputInfo(((1, 8, 64), 64), tp.float32)])
    before = tripy_backend.compilation_count()
    for n in range(1, 65):
        x = RNG.standard_normal((n, 64)).astype(np.float32)
        out = np.from_dlpack(exe(tp.Tensor(x)))
        assert out.shape == (n, 64)
        assert np.allclose(out, mlp_reference(w, x), rtol=1e-4, atol=1e-4), n
    assert tripy_backend.compilation_count() == before


def test_attention_every_length_without_compiling(plan):
    exe = tp.compile(attention, args=[tp.InputInfo((1, (1, 32, 128), 16), tp.float32)])
    before = tripy_backend.compilation_count()
    for n in range(1, 129):
        x = RNG.standard_normal((1, n, 16)).astype(np.float32)
        out = np.from_dlpack(exe(tp.Tensor(x)))
        assert np.allclose(out, attention_reference(x), rtol=1e-4, atol=1e-5), n
    assert tripy_backend.compilation_count() == before


def test_shape_values_as_python_numbers_match_eager():
    x = RNG.standard_normal((1, 5, 16)).astype(np.float32)
    exe = tp.compile(attention, args=[tp.InputInfo((1, (1, 4, 8), 16), tp.float32)])
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), np.from_dlpack(attention(tp.Tensor(x))), atol=1e-6)
    assert np.allclose(np.from_dlpack(attention(tp.Tensor(x))), attention_reference(x), atol=1e-5)


_LOAD_AND_SWEEP = textwrap.dedent("""
    import sys, numpy as np, tripy as tp, tripy_backend
    exe = tp.Executable.load(sys.argv[1])
    before = tripy_backend.compilation_count()
    for n in range(1, 65):
        x = np.load(sys.argv[2])[:n]
        np.save(sys.argv[3] + f"/{n}.npy", np.from_dlpack(exe(tp.Tensor(x))))
    print("compilations:", before, tripy_backend.compilation_count() - before)
""")


def _run_in_new_process(path, tmp_path):
    x = RNG.standard_normal((64, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, TRIPY_CACHE_DIR="")
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_SWEEP, str(path), str(tmp_path / "x.npy"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return x, proc


def test_saved_mlp_runs_every_batch_size_in_a_new_process_without_compiling(mlp, plan, tmp_path):
    m, w = mlp
    exe = tp.compile(m, args=[tp.InputInfo(((1, 8, 64), 64), tp.float32)])
    path = tmp_path / "mlp.tpexe"
    exe.save(str(path))
    x, proc = _run_in_new_process(path, tmp_path)
    assert "compilations: 0 0" in proc.stdout  # neither at load nor during the sweep
    for n in range(1, 65):
        assert np.allclose(np.load(tmp_path / f"{n}.npy"), mlp_reference(w, x[:n]), rtol=1e-4, atol=1e-4), n


def test_compiled_code_from_another_host_is_rebuilt_with_a_warning(mlp, tmp_path):
    m, w = mlp
    exe = tp.compile(m, args=[tp.InputInfo(((1, 8, 64), 64), tp.float32)])
    path = tmp_path / "mlp.tpexe"
    exe.save(str(path))
    with zipfile.ZipFile(path) as z:
        members = {name: z.read(name) for name in z.namelist()}
    header = json.loads(members["tripy_executable.json"])
    header["compiled"]["fingerprint"] = "jaxlib=0.0.0;platform=elsewhere"
    members["tripy_executable.json"] = json.dumps(header).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    path.write_bytes(buf.getvalue())
    before = tripy_backend.compilation_count()
    with pytest.warns(UserWarning, match="another compiler or on another kind of host; compiling it again"):
        loaded = tp.Executable.load(str(path))
    assert tripy_backend.compilation_count() > before
    x = RNG.standard_normal((5, 64)).astype(np.float32)
    assert np.allclose(np.from_dlpack(loaded(tp.Tensor(x))), mlp_reference(w, x), rtol=1e-4, atol=1e-4)


def test_compile_topic_logs_each_compilation(logged):
    _, text = logged(lambda: tp.compile(lambda x: x * 2.0, args=[tp.InputInfo(((1, 2, 4), 3), tp.float32)], wait=True))
    lines = [line for line in text.splitlines() if "test_compile_topic_logs_each_compilation" in line]  # (not others')
    started = [line for line in lines if "bucket" in line and line.endswith(" ...")]
    buckets = [line for line in lines if "bucket" in line and not line.endswith(" ...")]
    assert len(buckets) == 3  # bounds 1, 2, 4
    assert all(line.startswith("[compile] XLA:CPU: tripy.compile(") and line.endswith(" s") for line in buckets)
    # Each compile is logged as it starts too (what is running now), and so is each stage of tp.compile.
    assert len(started) == 3 and all(
        line.startswith("[compile] XLA:CPU: tripy.compile(") and "): compiling (bucket" in line for line in started
    )
    assert any(line.startswith("[compile] tripy.compile(") and ": tracing " in line for line in lines)
    # Each program's first run (one-time set-up costs) happens in tp.compile, not in a user's first call.
    assert sum("ran each ready program once" in line for line in lines) == 1
    assert "3 programs cover x[0] in [1, 4] (plan: x[0] <= 1, 2, 4;" in text


def test_the_compile_log_says_what_is_ready_and_what_compiles_in_the_background(logged):
    _, text = logged(lambda: tp.compile(lambda x: x * 2.0, args=[tp.InputInfo(((1, 4, 64), 3), tp.float32)]))
    # the cover (x[0] <= 64, made for the whole range); the rest later, opt's static program (x[0] = 4) first
    assert "ready in " in text
    # 1, 2, 3, 4, 8, 16, 32, and (independent rows, not cheap here: ``range_plan.finer``) 6, 12, 24, 48
    assert "one program for the whole range; 11 more compile in the background" in text
    assert "bucket 8/8 of the declared range: x[0] <= 64" in text  # (the only compile it waited for)


def test_a_program_that_computes_much_gets_bounded_programs_only(logged):
    w = tp.Tensor(RNG.standard_normal((1024, 1024)).astype(np.float32))
    exe, text = logged(
        lambda: tp.compile(lambda x: x @ w, args=[tp.InputInfo(((1, 8, 64), 1024), tp.float32)], wait=True)
    )
    assert "a cheap program" not in text  # 134 MFLOP at 64 rows
    lines = [line for line in text.splitlines() if "computes_much" in line]  # (not earlier tests' background compiles)
    # 1, 2, 4, 8, 16, 32, 64 (independent rows: no 7, ``range_plan.for_rows``) and 3, 6, 12, 24, 48 (``finer``)
    assert "(plan: x[0] <= 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64;" in text
    assert sum("bucket" in line and not line.endswith(" ...") for line in lines) == 12
    for n in (5, 20):
        exe(tp.ones((n, 1024))).eval()
    assert not exe._program._launchers  # (no static programs for its calls' shapes)


def test_a_program_with_dependent_rows_gets_the_largest_finer_buckets(logged, monkeypatch):
    monkeypatch.setattr(range_plan, "FINER_BOUNDED", 2)  # (the module's fixture turns them off)
    exe, text = logged(
        lambda: tp.compile(
            lambda x: x - tp.mean(x, dim=0), args=[tp.InputInfo(((1, 8, 64), 16), tp.float32)], wait=True
        )
    )
    assert "are independent" not in text  # (a mean over the rows: each depends on all)
    # powers of two, opt - 1 and opt, then 48 and 24 (``range_plan.finer``: the 2 largest 3 * 2**k for bounded programs)
    assert "(plan: x[0] <= 1, 2, 4, 7, 8, 16, 24, 32, 48, 64;" in text
    before = tripy_backend.compilation_count()
    for n in (20, 40, 64):  # (in the buckets of 24, 48 and 64)
        x = RNG.standard_normal((n, 16)).astype(np.float32)
        np.testing.assert_allclose(np.from_dlpack(exe(tp.Tensor(x))), x - x.mean(axis=0), rtol=1e-5, atol=1e-5)
    assert tripy_backend.compilation_count() == before


def _causal_attention_plus_sum(x):
    """NumPy's softmax(x x^T, masked where a row would read a later one) x, plus the sum of the rows."""
    scores = x @ x.T
    scores = np.where(np.arange(len(x))[None, :] > np.arange(len(x))[:, None], -np.inf, scores)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ x + x.sum(axis=0)


def test_what_reads_across_the_rows_runs_every_size_in_static_programs(logged):
    """Causal attention over a range of tokens, and a sum over them: each real row reads the others only through
    reductions and products over them, which read the padding as what adds nothing (``passes.independent_rows``),
    so the plan's programs are static programs at their bounds."""

    def attend(x):
        T = x.shape[0]
        future = tp.iota((T, T), dim=1, dtype=tp.int32) > tp.iota((T, T), dim=0, dtype=tp.int32)
        scores = tp.masked_fill(x @ tp.transpose(x, 0, 1), future, float("-inf"))
        return tp.softmax(scores, dim=-1) @ x + tp.sum(x, dim=0)

    exe, text = logged(lambda: tp.compile(attend, args=[tp.InputInfo(((1, 4, 16), 8), tp.float32)]))
    assert "the rows along x[0] are independent: the plan's programs are static programs at their bounds" in text
    before = tripy_backend.compilation_count()
    for ready in (False, True):
        for n in (1, 2, 3, 4, 7, 9, 16):
            x = RNG.standard_normal((n, 8)).astype(np.float32) / 2
            got = np.from_dlpack(exe(tp.Tensor(x)))
            assert got.shape == (n, 8), n
            np.testing.assert_allclose(got, _causal_attention_plus_sum(x.astype(np.float64)), rtol=1e-4, atol=1e-4)
        assert exe.wait(timeout=600), ready
    assert tripy_backend.compilation_count() == before


def test_program_without_bounded_form_still_runs_every_shape(logged):
    exe, text = logged(
        lambda: tp.compile(lambda t: tp.topk(t, 2, 1)[0], args=[tp.InputInfo((2, (2, 3, 6)), tp.float32)])
    )
    assert "no bounded programs (stablehlo.sort over a dynamic dim is not supported with bounded dims)" in text
    for n in (2, 5):
        x = RNG.standard_normal((2, n)).astype(np.float32)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), -np.sort(-x, axis=1)[:, :2])


@pytest.mark.parametrize(
    "func,reference,lo,hi",
    [
        (lambda a: (a * 2.0)[:-5], lambda x: (x * 2.0)[:-5], 1, 8),  # empty for n <= 5; size 1 at bound 6
        (lambda a: tp.sin(a)[:-5], lambda x: np.sin(x)[:-5], 2, 5),  # empty result of a computed slice
        (lambda a: a * 2.0, lambda x: x * 2.0, 0, 4),  # an empty input (size 0 shares no bound with size 1)
        (lambda a: tp.sum(a, dim=0), lambda x: np.sum(x, axis=0), 0, 4),
    ],
)
def test_sizes_of_zero_and_one_in_every_bucket(func, reference, lo, hi):
    # Found by the differential fuzz: a padded dim of bound 1 cannot say that it is empty, so such
    # buckets are compiled per shape (and size 0 gets its own bound); results must match at every size.
    exe = tp.compile(func, args=[tp.InputInfo(((lo, lo + 1, hi), 2), tp.float32)])
    before = tripy_backend.compilation_count()
    for n in range(lo, hi + 1):
        x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
        got = np.from_dlpack(exe(tp.Tensor(x)))
        want = reference(x)
        assert got.shape == want.shape and np.allclose(got, want), n
    assert tripy_backend.compilation_count() == before  # (such a bucket's sizes get buckets of their own)


def test_an_empty_range_start_runs_empty():
    # a range from 0 runs size 0 in a program of its own (a dim bounded by 1 cannot be told it is 0)
    exe = tp.compile(lambda x: x + 1, args=[tp.InputInfo(((0, 3, 9), 2), tp.float32)])
    for n in (0, 1, 2):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        assert np.array_equal(np.asarray(exe(tp.Tensor(x))), x + 1)


def test_slices_of_a_dynamic_input_by_run_time_sizes():
    # the slice's source is itself dynamic: every bucket's program is built (none compiles at a call)
    head = tp.compile(lambda x: x[: x.shape[0] - 1] * 2, args=[tp.InputInfo(((1, 4, 9), 3), tp.float32)])
    window = tp.compile(
        lambda x, n: x[1 : n + 1], args=[tp.InputInfo(((4, 8, 12),), tp.float32), tp.DimensionInputInfo((0, 2, 3))]
    )
    before = tripy_backend.compilation_count()
    for m in (1, 2, 5, 9):
        x = np.arange(3 * m, dtype=np.float32).reshape(m, 3)
        assert np.array_equal(np.asarray(head(tp.Tensor(x))), x[: m - 1] * 2), m
    for m, n in [(4, 0), (5, 3), (12, 2), (9, 1)]:
        x = np.arange(m, dtype=np.float32)
        assert np.array_equal(np.asarray(window(tp.Tensor(x), n)), x[1 : n + 1]), (m, n)
    assert tripy_backend.compilation_count() == before


def test_an_empty_input_next_to_padded_dims_does_not_crash():
    # Found by the differential fuzz: XLA's dynamic padder divided by a size of 0 (SIGFPE in tp.compile).
    exe = tp.compile(
        lambda a: tp.reshape(a, (0, 2, 0)),
        args=[tp.InputInfo(((0, 0, 2), (1, 2, 4), (2, 3, 5), (0, 0, 2)), tp.float32)],
    )
    for shape in [(0, 2, 3, 0), (0, 1, 2, 0)]:
        assert exe(tp.Tensor(np.zeros(shape, np.float32))).shape == (0, 2, 0)


def test_a_padded_output_reads_the_same_every_way():
    # A bounded program's dynamic output stays padded until a consumer needs a buffer of its own.
    exe = tp.compile(lambda a: a * 2.0 + 1.0, args=[tp.InputInfo(((1, 4, 16), 3), tp.float32)])
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    y = x * 2.0 + 1.0
    reads = [
        (np.asarray, y),
        (lambda t: np.array(t.tolist(), np.float32), y),
        (np.from_dlpack, y),
        (lambda t: np.from_dlpack(t - 1.0), y - 1.0),  # an eager op on it
        (lambda t: np.from_dlpack(exe(t)), y * 2.0 + 1.0),
    ]  # the executable again (size 5: padded to 16)
    for read, expected in reads:
        out = exe(tp.Tensor(x))
        assert out.shape == (5, 3)
        got = read(out)
        assert got.shape == (5, 3) and np.allclose(got, expected, rtol=1e-6)
        assert np.allclose(np.asarray(out), y, rtol=1e-6)  # (still the same after the read)


def _conv_relu(x, w, b):
    """NumPy's 3x3 convolution (padding 1, NCHW) and ReLU."""
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), (2, 3))
    return np.maximum(np.einsum("nchwij,ocij->nohw", windows, w) + b[None, :, None, None], 0.0)


def test_independent_rows_run_every_size_in_static_programs(logged):
    conv = tp.Conv(3, 4, (3, 3), padding=((1, 1), (1, 1)))
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    conv.load_state_dict({"weight": tp.Tensor(w), "bias": tp.Tensor(b)})
    exe, text = logged(
        lambda: tp.compile(lambda x: tp.relu(conv(x)), args=[tp.InputInfo(((0, 2, 6), 3, 8, 8), tp.float32)])
    )
    assert "the rows along x[0] are independent: the plan's programs are static programs at their bounds" in text
    before = tripy_backend.compilation_count()
    for ready in (False, True):  # (sizes 0 and 1 too: in a larger bucket's program while theirs compiles)
        for n in range(7):
            x = RNG.standard_normal((n, 3, 8, 8)).astype(np.float32)
            got = np.from_dlpack(exe(tp.Tensor(x)))
            assert got.shape == (n, 4, 8, 8) and np.allclose(got, _conv_relu(x, w, b), rtol=1e-4, atol=1e-4), n
        assert exe.wait(timeout=600), ready
    assert tripy_backend.compilation_count() == before
