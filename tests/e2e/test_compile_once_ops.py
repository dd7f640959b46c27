"""Compile once for every op family: a program compiled for a range runs every shape in it without compiling at
call time, in this process and after Executable.load in a new one, whether bounded dims express it or it gets a
static program per shape (``tripy_backend.range_plan.plan_sizes``). Each family is swept over 5 sizes per range
against NumPy, and against eager mode."""

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tripy as tp
import tripy_backend
from tripy_backend import range_plan, ranges

# the NumPy references of pooling and resize (tests run with --import-mode=importlib: no sibling imports)
_spec = importlib.util.spec_from_file_location(
    "pool_resize", os.path.join(os.path.dirname(__file__), "test_ops_pool_resize.py")
)
_pool_resize = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_pool_resize)
pool_ref, resize_ref = _pool_resize.pool_ref, _pool_resize.resize_ref

RNG = np.random.default_rng(0)
BATCH = (1, 2, 8)  # buckets 1, 2, 4, 8: sizes 3, 5, 6 and 7 run padded where bounded dims express the program
SIDE = tp.NamedDimension("side", 6, 8, 10)  # square images, 5 sizes


@pytest.fixture(autouse=True)
def bounded_programs_only(monkeypatch):
    """A cheap program would get a static program for each of the sizes nearest opt (``range_plan.EXACT_SIZES``):
    without those, the families that bounded dims express run padded, the others get a program per size. (Nor the
    finer buckets of a program that is not cheap: ``range_plan.FINER_BOUNDED``.)"""
    monkeypatch.setattr(range_plan, "EXACT_SIZES", 0)
    monkeypatch.setattr(range_plan, "FINER_BOUNDED", 0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def layer(cls, *args, **kwargs):
    m = cls(*args, **kwargs)
    m.load_state_dict({k: rand(*v.shape) for k, v in m.state_dict().items()})
    return m, {k: np.from_dlpack(v).astype(np.float64) for k, v in m.state_dict().items()}


def conv_ref(x, w, b, pad):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))  # n c h w kh kw
    return np.einsum("nchwij,ocij->nohw", windows, w) + b[None, :, None, None]


def conv_transpose_ref(x, w, b):
    n, c, h, wd = x.shape
    k = w.shape[2]
    out = np.zeros((n, w.shape[1], h + k - 1, wd + k - 1))
    for i in range(k):
        for j in range(k):
            out[:, :, i : i + h, j : j + wd] += np.einsum("nchw,co->nohw", x, w[:, :, i, j])
    return out + b[None, :, None, None]


CONV, CONV_W = layer(tp.Conv, 3, 4, (3, 3), padding=((1, 1), (1, 1)))
STRIDED, STRIDED_W = layer(tp.Conv, 3, 2, (3, 2), stride=(2, 1), padding=((1, 0), (2, 1)), dilation=(1, 2))


def strided_ref(x):
    """STRIDED's convolution: kernel 3x2, stride (2, 1), padding ((1, 0), (2, 1)), dilation (1, 2)."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 0), (2, 1)))
    w = STRIDED_W["weight"]
    h = (x.shape[2] - 3) // 2 + 1
    wd = x.shape[3] - 2
    out = np.zeros((x.shape[0], w.shape[0], h, wd))
    for i in range(3):
        for j in range(2):
            out += np.einsum("nchw,oc->nohw", x[:, :, i : i + 2 * (h - 1) + 1 : 2, 2 * j : 2 * j + wd], w[:, :, i, j])
    return out + STRIDED_W["bias"][None, :, None, None]


UP, UP_W = layer(tp.ConvTranspose, 3, 2, (2, 2))
TABLE = rand(10, 4)
PADS = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}

# name: (function, input shape with its dynamic dims, the size of an input, NumPy reference)
IMAGE = ((BATCH, 3, 6, 6), lambda n: rand(n, 3, 6, 6))
SQUARE = ((2, 3, SIDE, SIDE), lambda n: rand(2, 3, n, n))
FAMILIES = {
    "conv (batch)": (CONV, *IMAGE, lambda x: conv_ref(x, CONV_W["weight"], CONV_W["bias"], 1)),
    "conv (height and width)": (CONV, *SQUARE, lambda x: conv_ref(x, CONV_W["weight"], CONV_W["bias"], 1)),
    "conv_transpose (batch)": (UP, *IMAGE, lambda x: conv_transpose_ref(x, UP_W["weight"], UP_W["bias"])),
    "conv_transpose (height and width)": (UP, *SQUARE, lambda x: conv_transpose_ref(x, UP_W["weight"], UP_W["bias"])),
    "conv strided and dilated (height and width)": (STRIDED, *SQUARE, lambda x: strided_ref(x)),
    "maxpool (batch)": (lambda x: tp.maxpool(x, (2, 2), (2, 2)), *IMAGE, lambda x: pool_ref(x, "max", (2, 2), (2, 2))),
    "maxpool (height and width)": (
        lambda x: tp.maxpool(x, (3, 3), (1, 1), ((1, 1), (1, 1))),
        *SQUARE,
        lambda x: pool_ref(x, "max", (3, 3), (1, 1), ((1, 1), (1, 1))),
    ),
    "avgpool (batch)": (lambda x: tp.avgpool(x, (3, 3), (2, 2)), *IMAGE, lambda x: pool_ref(x, "avg", (3, 3), (2, 2))),
    "avgpool (height and width)": (
        lambda x: tp.avgpool(x, (2, 2), (2, 2)),
        *SQUARE,
        lambda x: pool_ref(x, "avg", (2, 2), (2, 2)),
    ),
    "maxpool strided and padded (height and width)": (
        lambda x: tp.maxpool(x, (3, 3), (2, 2), ((1, 0), (0, 1))),
        *SQUARE,
        lambda x: pool_ref(x, "max", (3, 3), (2, 2), ((1, 0), (0, 1))),
    ),
    "avgpool without the padding (height and width)": (
        lambda x: tp.avgpool(x, (3, 2), (2, 3), ((1, 1), (1, 0)), count_include_pad=False),
        *SQUARE,
        lambda x: pool_ref(x, "avg", (3, 2), (2, 3), ((1, 1), (1, 0)), count_include_pad=False),
    ),
    "pad constant (height and width)": (
        lambda x: tp.pad(x, ((0, 0), (0, 0), (1, 2), (2, -1)), value=-1.0),
        *SQUARE,
        lambda x: np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 0)), constant_values=-1.0)[..., :-1],
    ),
    "pad constant (batch)": (
        lambda x: tp.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), value=-1.0),
        *IMAGE,
        lambda x: np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), constant_values=-1.0),
    ),
    **{
        f"pad {mode} (batch)": (
            lambda x, mode=mode: tp.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), mode=mode),
            *IMAGE,
            lambda x, mode=mode: np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), mode=PADS[mode]),
        )
        for mode in PADS
    },
    **{
        f"pad {mode} (height and width)": (
            lambda x, mode=mode: tp.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), mode=mode),
            *SQUARE,
            lambda x, mode=mode: np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), mode=PADS[mode]),
        )
        for mode in PADS
    },
    **{
        f"resize {mode} (batch)": (
            lambda x, mode=mode: tp.resize(x, scales=(1, 1, 2, 2), mode=mode),
            *IMAGE,
            lambda x, mode=mode: resize_ref(x, mode, x.shape[:2] + (12, 12)),
        )
        for mode in ("nearest", "linear", "cubic")
    },
    **{
        f"resize {mode} (height and width)": (
            lambda x, mode=mode: tp.resize(x, scales=(1, 1, 2, 1.5), mode=mode),
            *SQUARE,
            lambda x, mode=mode: resize_ref(x, mode, x.shape[:2] + (2 * x.shape[2], 3 * x.shape[3] // 2)),
        )
        for mode in ("nearest", "linear", "cubic")
    },
    "resize to a given shape (height)": (
        lambda x: tp.resize(x, (x.shape[0], 3, 7, x.shape[3])),
        *SQUARE,
        lambda x: resize_ref(x, "linear", x.shape[:2] + (7, x.shape[3])),
    ),
    "flip (batch)": (lambda x: tp.flip(x, dim=(2, 3)), *IMAGE, lambda x: np.flip(x, (2, 3))),
    "flip (height and width)": (lambda x: tp.flip(x, dim=(2, 3)), *SQUARE, lambda x: np.flip(x, (2, 3))),
    "topk over a static dim": (
        lambda x: tp.topk(x, 2, dim=1)[0],
        (BATCH, 6),
        lambda n: rand(n, 6),
        lambda x: -np.sort(-x, axis=1)[:, :2],
    ),
    "topk over the dynamic dim": (
        lambda x: tp.topk(x, 2, dim=1)[0],
        (2, (4, 6, 8)),
        lambda n: rand(2, n),
        lambda x: -np.sort(-x, axis=1)[:, :2],
    ),
    "cumsum over the dynamic dim": (
        lambda x: tp.cumsum(x, dim=0),
        (BATCH, 3),
        lambda n: rand(n, 3),
        lambda x: np.cumsum(x, axis=0),
    ),
    "take over the dynamic dim (indices clamped)": (
        lambda x: tp.gather(x, 0, tp.Tensor(np.array([0, 2, 9, -1], np.int32))),
        (BATCH, 3),
        lambda n: rand(n, 3),
        lambda x: x[np.clip([0, 2, 9, len(x) - 1], 0, len(x) - 1)],
    ),
    "strided slices over the dynamic dim": (
        lambda x: tp.concatenate([x[1::3], x[: x.shape[0] - 1 : 2]], dim=0) * 2.0,
        (BATCH, 3),
        lambda n: rand(n, 3),
        lambda x: np.concatenate([x[1::3], x[: len(x) - 1 : 2]]) * 2.0,
    ),
    "masked_fill": (
        lambda x: tp.masked_fill(x, x > 0.5, -2.0),
        (BATCH, 3),
        lambda n: rand(n, 3),
        lambda x: np.where(x > 0.5, -2.0, x),
    ),
    "embedding (gather)": (
        lambda i: tp.gather(tp.Tensor(TABLE), 0, i),
        (BATCH,),
        lambda n: RNG.integers(0, 10, n).astype(np.int32),
        lambda i: TABLE[i],
    ),
    "concatenate": (
        lambda x: tp.concatenate([x, x * 2.0], dim=0),
        (BATCH, 3),
        lambda n: rand(n, 3),
        lambda x: np.concatenate([x, x * 2.0]),
    ),
    # ops that mix the rows of a padded dim: XLA masks the sum; merging the batch with the dims after it keeps
    # the real rows first; merging a dynamic dim with the one before it puts padding between real rows
    "conv, then a sum over the batch": (
        lambda x: tp.sum(CONV(x), dim=0),
        *IMAGE,
        lambda x: conv_ref(x, CONV_W["weight"], CONV_W["bias"], 1).sum(0),
    ),
    "maxpool, then a reshape merging the batch": (
        lambda x: tp.reshape(tp.maxpool(x, (2, 2), (2, 2)), (-1, 9)),
        *IMAGE,
        lambda x: pool_ref(x, "max", (2, 2), (2, 2)).reshape(-1, 9),
    ),
    "reshapes [B, T, C] -> [B * T, C] -> [B, T, C]": (
        lambda x: tp.reshape(tp.reshape(x, (-1, 4)) * 2.0, (-1, 3, 4)),
        (BATCH, 3, 4),
        lambda n: rand(n, 3, 4),
        lambda x: x * 2.0,
    ),
    "flip, then a reshape merging a dynamic dim with the one before": (
        lambda x: tp.reshape(tp.flip(x, dim=2), (-1, 4)),
        (2, BATCH, 4),
        lambda n: rand(2, n, 4),
        lambda x: np.flip(x, 2).reshape(-1, 4),
    ),
}
# The families whose padded dims stay padded (bounded programs, one per bucket): every family over a batch, and
# the windows, pads, resizes and flips over the image's height and width (``tripy_backend.passes.masked_reads``: XLA
# masks the padding of pooling and pads and reverses flips itself; a convolution's padding is set to 0, a
# gather's indices clamped to the real size). The others get a static program per shape: a sort over a padded
# dim would read its padding.
BOUNDED = {name for name in FAMILIES if "(batch)" in name or "(height" in name} | {
    "topk over a static dim",
    "cumsum over the dynamic dim",
    "embedding (gather)",
    "concatenate",
    "take over the dynamic dim (indices clamped)",
    "strided slices over the dynamic dim",
    "masked_fill",
    "conv, then a sum over the batch",
    "maxpool, then a reshape merging the batch",
    "reshapes [B, T, C] -> [B * T, C] -> [B, T, C]",
    "flip, then a reshape merging a dynamic dim with the one before",
}


def sizes(shape):
    """5 sizes of the family's range, padded ones among them."""
    ((lo, _, hi),) = {d if isinstance(d, tuple) else d.bounds for d in shape if not isinstance(d, int)}
    return [1, 3, 5, 6, 8] if (lo, hi) == (1, 8) else list(range(lo, hi + 1))


def compile_family(name):
    func, shape, _, _ = FAMILIES[name]
    dtype = tp.int32 if "gather" in name else tp.float32
    return tp.compile(func, args=[tp.InputInfo(shape, dtype)], wait=True)  # (the log names the whole plan)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_size_in_range_without_compiling(name, logged):
    func, shape, make, reference = FAMILIES[name]
    exe, text = logged(lambda: compile_family(name))
    assert ("plan: a static program per shape" in text) == (name not in BOUNDED)
    if name in BOUNDED:  # the log names the bucket plan: the batch's bounds, or the image side's
        # (independent rows that are not cheap get 3 and 6 too: ``range_plan.finer``)
        assert re.search(r"\(plan: (\w+\[\d\] <= 1, 2, (3, )?4, (6, )?8|side <= 7, 8, 10);", text), text
    before = tripy_backend.compilation_count()
    outputs = {}
    for n in sizes(shape):
        x = make(n)
        out = np.from_dlpack(exe(tp.Tensor(x)))
        want = reference(x)
        assert out.shape == want.shape and np.allclose(out, want, rtol=1e-4, atol=1e-4), n
        outputs[n] = (x, out)
    assert tripy_backend.compilation_count() == before
    for n in (sizes(shape)[0], sizes(shape)[-1]):  # eager mode gives the same
        x, out = outputs[n]
        assert np.allclose(np.from_dlpack(func(tp.Tensor(x))), out, rtol=1e-5, atol=1e-5), n


def test_a_program_without_bounded_form_gets_a_static_program_per_size(logged):
    exe, text = logged(lambda: compile_family("topk over the dynamic dim"))
    assert (
        "no bounded programs (stablehlo.sort over a dynamic dim is not supported with bounded dims); a static program for each "
        "of the 5 shapes in range, compiled now" in text
    )
    assert "5 programs cover x[1] in [4, 8] (plan: a static program per shape, x[1] = 4..8;" in text


def test_a_range_too_wide_for_a_program_per_size_says_which_sizes_compile_at_call_time(monkeypatch, logged):
    monkeypatch.setattr(range_plan, "MAX_STATIC_PROGRAMS", 3)
    exe, text = logged(
        lambda: tp.compile(
            lambda x: tp.topk(x, 2, dim=1)[0], args=[tp.InputInfo((2, (2, 5, 100)), tp.float32)], wait=True
        )
    )
    assert (
        "the range is too wide for a static program per shape (at most 3): x[1] = 4..6 compile now; other "
        "sizes of x[1] compile at their first call"
    ) in text
    before = tripy_backend.compilation_count()
    for n in (4, 5, 6):
        exe(tp.Tensor(rand(2, n)))
    assert tripy_backend.compilation_count() == before
    x = rand(2, 99)
    assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), -np.sort(-x, axis=1)[:, :2])
    assert tripy_backend.compilation_count() == before + 1


_LOAD_AND_SWEEP = textwrap.dedent("""
    import sys, numpy as np, tripy as tp, tripy_backend
    folder, count = sys.argv[1], int(sys.argv[2])
    for k in range(count):
        start = tripy_backend.compilation_count()
        exe = tp.Executable.load(f"{folder}/{k}.tpexe")
        loaded = tripy_backend.compilation_count()
        inputs = np.load(f"{folder}/{k}.npz")
        np.savez(f"{folder}/{k}.out.npz", **{n: np.from_dlpack(exe(tp.Tensor(x))) for n, x in inputs.items()})
        print("compilations:", loaded - start, tripy_backend.compilation_count() - loaded)
""")


def test_saved_programs_run_every_size_in_a_new_process_without_compiling(tmp_path):
    names = [
        "conv (batch)",
        "conv (height and width)",
        "conv_transpose (height and width)",
        "maxpool (batch)",
        "avgpool without the padding (height and width)",
        "resize linear (batch)",
        "resize cubic (height and width)",
        "pad reflect (batch)",
        "pad constant (height and width)",
        "pad reflect (height and width)",
        "flip (batch)",
        "flip (height and width)",
        "take over the dynamic dim (indices clamped)",
        "strided slices over the dynamic dim",
        "reshapes [B, T, C] -> [B * T, C] -> [B, T, C]",
        "flip, then a reshape merging a dynamic dim with the one before",
        "cumsum over the dynamic dim",
        "topk over a static dim",
        "topk over the dynamic dim",
    ]
    inputs = []
    for k, name in enumerate(names):
        compile_family(name).save(str(tmp_path / f"{k}.tpexe"))
        _, shape, make, _ = FAMILIES[name]
        inputs.append({str(n): make(n) for n in sizes(shape)})
        np.savez(tmp_path / f"{k}.npz", **inputs[-1])
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_SWEEP, str(tmp_path), str(len(names))],
        capture_output=True,
        text=True,
        env=dict(os.environ, TRIPY_CACHE_DIR=""),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    counts = [line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("compilations:")]
    # No call compiles; loading compiles nothing either, but for the sorts, whose compiled code XLA:CPU cannot
    # serialize on jaxlib 0.10 (Executable.load compiles them from the StableHLO, as the saved plan has them: the 4
    # bounded programs of a top-k over a static dim, the 5 static ones of a top-k over the dynamic dim).
    at_load = {"topk over a static dim": ("0", "4"), "topk over the dynamic dim": ("0", "5")}
    for name, (loading, calls) in zip(names, counts):
        assert calls == "0" and loading in at_load.get(name, ("0",)), (name, loading, calls)
    for k, name in enumerate(names):
        outputs = np.load(tmp_path / f"{k}.out.npz")
        for n, x in inputs[k].items():
            assert np.allclose(outputs[n], FAMILIES[name][3](x), rtol=1e-4, atol=1e-4), (name, n)


def test_a_bucket_without_a_bounded_program_gets_a_bucket_per_size_saved_and_loaded(tmp_path, logged):
    # x[:-5] of a bucket of 3..4 rows would have a padded dim of bound 1 that cannot say it is empty: sizes 3 and 4
    # get buckets (static programs) of their own, compiled by tp.compile and saved; no call compiles, before or
    # after Executable.load in a new process.
    exe, text = logged(
        lambda: tp.compile(lambda x: (x * 2.0)[:-5], args=[tp.InputInfo(((1, 2, 8), 2), tp.float32)], wait=True)
    )
    assert (
        "bucket 3/4 of the declared range: no bounded program (a size computed at run time is bounded by 0 or 1 "
        "here); each of its sizes gets a bucket of its own" in text
    )
    assert "(plan: x[0] <= 1, 2, 3, 4, 8;" in text
    inputs = {str(n): rand(n, 2) for n in range(1, 9)}
    before = tripy_backend.compilation_count()
    for x in inputs.values():
        assert np.array_equal(np.from_dlpack(exe(tp.Tensor(x))), (x * 2.0)[:-5]), len(x)
    assert tripy_backend.compilation_count() == before
    exe.save(str(tmp_path / "0.tpexe"))
    np.savez(tmp_path / "0.npz", **inputs)
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_SWEEP, str(tmp_path), "1"],
        capture_output=True,
        text=True,
        env=dict(os.environ, TRIPY_CACHE_DIR=""),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "compilations: 0 0" in proc.stdout
    outputs = np.load(tmp_path / "0.out.npz")
    for n, x in inputs.items():
        assert np.array_equal(outputs[n], (x * 2.0)[:-5]), n


def test_a_call_waiting_for_a_bucket_that_splits_runs_in_its_new_bucket(monkeypatch, logged):
    # A call with a size of 1 waits for its bucket's program (the cover does not run sizes of 0 or 1). Here that
    # bucket (1 row, 3..4 columns) has no bounded program (x[:, :-5]) and splits while the call waits: the call
    # must find its size's new bucket, not compile at call time. (The other buckets compile slowly, so that the
    # call arrives before the split.)
    compile_bucket = ranges.RangeProgram._compile_bucket

    def slowly(self, bucket):
        if bucket != self._largest():
            time.sleep(0.2)
        compile_bucket(self, bucket)

    monkeypatch.setattr(ranges.RangeProgram, "_compile_bucket", slowly)
    x = rand(1, 3)

    def compile_call_and_wait():
        exe = tp.compile(lambda x: (x * 2.0)[:, :-5], args=[tp.InputInfo(((1, 2, 4), (1, 2, 8)), tp.float32)])
        out = np.from_dlpack(exe(tp.Tensor(x)))
        assert exe.wait(timeout=120)
        return out

    out, text = logged(compile_call_and_wait)
    assert np.array_equal(out, (x * 2.0)[:, :-5])
    assert "no bounded program (a size computed at run time is bounded by 0 or 1 here)" in text
    assert "at call time" not in text


def test_a_size_read_from_a_batch_of_one_is_static_in_its_bucket(logged):
    # A broadcast to (batch, length, 8) in the bucket of batch 1 and lengths 5..6: the batch is 1 there, static as
    # the input's dim is, not a run-time size bounded by 1 (which would split the bucket into a program per length,
    # as albert's embeddings did).
    def f(x):
        return x + tp.expand(tp.ones((1, 1, 8)) * 2.0, (x.shape[0], x.shape[1], 8))

    exe, text = logged(lambda: tp.compile(f, args=[tp.InputInfo(((1, 2, 4), (2, 3, 6), 8), tp.float32)], wait=True))
    assert "no bounded program" not in text
    assert "12 programs cover x[0] in [1, 4], x[1] in [2, 6] (plan: x[0] <= 1, 2, 4; x[1] <= 2, 3, 4, 6;" in text
    before = tripy_backend.compilation_count()
    for b, t in [(1, 5), (1, 6), (3, 5), (4, 2)]:
        x = rand(b, t, 8)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), x + 2.0), (b, t)
    assert tripy_backend.compilation_count() == before


def test_a_bounded_bucket_that_fails_after_static_ones_turns_the_plan_into_a_program_per_size(monkeypatch, logged):
    monkeypatch.setattr(range_plan, "EXACT_SIZES", 0)  # (a cheap program: every size static, no bounded bucket)
    # range 2..9: the largest bucket (9) holds one size and compiles statically; the bounded ones (e.g. 8, for 6..8)
    # cannot express the sort. The static programs already made are kept.
    exe, text = logged(
        lambda: tp.compile(
            lambda x: tp.topk(x, 2, dim=1)[0], args=[tp.InputInfo((2, (2, 5, 9)), tp.float32)], wait=True
        )
    )
    assert "no bounded programs (stablehlo.sort over a dynamic dim is not supported with bounded dims)" in text
    assert sum("x[1] = 9) in " in line for line in text.splitlines()) == 1  # compiled once, kept
    before = tripy_backend.compilation_count()
    for n in range(2, 10):
        x = rand(2, n)
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), -np.sort(-x, axis=1)[:, :2]), n
    assert tripy_backend.compilation_count() == before


def test_a_reshape_splitting_a_dynamic_dim_after_a_static_one_stays_bounded_and_checks_the_sizes(logged):
    # [2 * T, C] -> [2, T, C]: padded rows would land between the real ones; the bounded program gathers the real
    # rows into place. Odd sizes cannot be split in two: a call says why, as eager mode does, and compiles nothing.
    exe, text = logged(
        lambda: tp.compile(
            lambda x: tp.reshape(x, (2, -1, 4)) * 2.0, args=[tp.InputInfo(((2, 4, 16), 4), tp.float32)], wait=True
        )
    )
    assert "(plan: x[0] <= 2, 3, 4, 8, 16;" in text
    before = tripy_backend.compilation_count()
    for n in range(2, 17, 2):
        x = rand(n, 4)
        assert np.array_equal(np.from_dlpack(exe(tp.Tensor(x))), x.reshape(2, -1, 4) * 2.0), n
    for n in (3, 7):
        with pytest.raises(tp.TripyException, match=r"not valid for input shapes \[\[" + str(n)):
            exe(tp.Tensor(rand(n, 4)))
    assert tripy_backend.compilation_count() == before


def heads(x):
    """Attention heads split off a [B, T, H * D] input, merged with the batch, and back."""
    b, t = x.shape[0], x.shape[1]
    y = tp.reshape(tp.permute(tp.reshape(x, (b, t, 2, 4)), (0, 2, 1, 3)), (b * 2, t, 4))
    y = tp.softmax(y @ tp.transpose(y, 1, 2), dim=-1) @ y
    return tp.reshape(tp.permute(tp.reshape(y, (b, 2, t, 4)), (0, 2, 1, 3)), (b, t, 8))


def heads_ref(x):
    b, t, _ = x.shape
    y = x.reshape(b, t, 2, 4).transpose(0, 2, 1, 3).reshape(b * 2, t, 4)
    a = y @ y.transpose(0, 2, 1)
    a = np.exp(a - a.max(-1, keepdims=True))
    y = (a / a.sum(-1, keepdims=True)) @ y
    return y.reshape(b, 2, t, 4).transpose(0, 2, 1, 3).reshape(b, t, 8)


RESHAPES = {  # a dynamic batch B and sequence T
    "[B, T, H * D] <-> [B, T, H, D]": (
        lambda x: tp.reshape(tp.reshape(x, (x.shape[0], x.shape[1], 2, 4)) * 2.0, (x.shape[0], x.shape[1], 8)),
        lambda x: x * 2.0,
    ),
    "[B, T, C] -> [B * T, C]": (lambda x: tp.reshape(x, (-1, 8)) * 2.0, lambda x: x.reshape(-1, 8) * 2.0),
    "[B, T, C] <-> [B * T, C]": (
        lambda x: tp.reshape(tp.reshape(x, (-1, 8)) * 2.0, (x.shape[0], x.shape[1], 8)),
        lambda x: x * 2.0,
    ),
    "attention heads": (heads, heads_ref),
}


@pytest.mark.parametrize("name", RESHAPES)
def test_reshapes_that_merge_or_split_dynamic_dims_compile_once(name, logged):
    func, reference = RESHAPES[name]
    exe, text = logged(lambda: tp.compile(func, args=[tp.InputInfo(((1, 2, 4), (2, 3, 6), 8), tp.float32)], wait=True))
    assert "12 programs cover x[0] in [1, 4], x[1] in [2, 6] (plan: x[0] <= 1, 2, 4; x[1] <= 2, 3, 4, 6;" in text
    before = tripy_backend.compilation_count()
    inputs = [rand(b, t, 8) for b in (1, 3, 4) for t in (2, 3, 5, 6)]
    outputs = [np.from_dlpack(exe(tp.Tensor(x))) for x in inputs]
    assert tripy_backend.compilation_count() == before
    for x, out in zip(inputs, outputs):
        assert out.shape == reference(x).shape and np.allclose(out, reference(x), rtol=1e-5, atol=1e-5), x.shape
    for x, out in zip(inputs[::5], outputs[::5]):  # eager mode gives the same
        assert np.allclose(np.from_dlpack(func(tp.Tensor(x))), out, rtol=1e-5, atol=1e-5), x.shape


def test_two_batch_dims_that_must_be_equal_stay_bounded(logged):
    # SAM2's memory encoder: features and masks, each with its own dynamic batch, added after a convolution. Buckets
    # that bound the two batches apart hold no valid shapes: left out, not a reason for a program per shape.
    def fuse(pix, masks):
        return CONV(pix) + tp.maxpool(masks, (2, 2), (2, 2))

    exe, text = logged(
        lambda: tp.compile(
            fuse,
            args=[tp.InputInfo(((1, 2, 4), 3, 6, 6), tp.float32), tp.InputInfo(((1, 2, 4), 4, 12, 12), tp.float32)],
            wait=True,
        )
    )
    assert "(plan: pix[0] <= 1, 2, 4; masks[0] <= 1, 2, 4;" in text
    assert "left out (the program is not valid for its bounds" in text
    before = tripy_backend.compilation_count()
    for n in range(1, 5):
        pix, masks = rand(n, 3, 6, 6), rand(n, 4, 12, 12)
        want = conv_ref(pix, CONV_W["weight"], CONV_W["bias"], 1) + pool_ref(masks, "max", (2, 2), (2, 2))
        assert np.allclose(np.from_dlpack(exe(tp.Tensor(pix), tp.Tensor(masks))), want, rtol=1e-4, atol=1e-4), n
    assert tripy_backend.compilation_count() == before
    with pytest.raises(tp.TripyException, match="not valid for input shapes|cannot run on inputs of shapes"):
        exe(tp.Tensor(rand(3, 3, 6, 6)), tp.Tensor(rand(2, 4, 12, 12)))


def test_heads_split_with_minus_one_after_flattening_an_image_stay_bounded(logged):
    # Diffusion UNets' spatial transformers flatten a [B, C, H, W] image to [B, H*W, C] tokens, split the channels
    # into heads with reshape(t, (B, -1, heads, head_dim)), merge them back with -1 and restore [B, C, H, W]. The -1
    # dims are computed from B at run time but are the same for every B: typing them dynamic gave a reshape of two
    # dynamic dims, on which XLA's dynamic padder failed a CHECK and killed the process.
    w = rand(8, 8)

    def spatial_attention(x):
        b, c, h, wd = x.shape
        tokens = tp.permute(tp.reshape(x, (b, c, h * wd)), (0, 2, 1)) @ tp.Tensor(w)
        heads = tp.transpose(tp.reshape(tokens, (b, -1, 2, 4)), 1, 2)  # [B, 2 heads, H*W, 4]
        out = tp.softmax(heads @ tp.transpose(heads, -2, -1) * 0.5, -1) @ heads
        merged = tp.reshape(tp.transpose(out, 1, 2), (b, -1, 8))
        return tp.reshape(tp.permute(merged, (0, 2, 1)), (b, c, h, wd))

    def reference(x):
        n = x.shape[0]
        heads = (x.reshape(n, 8, 9).transpose(0, 2, 1) @ w).reshape(n, 9, 2, 4).transpose(0, 2, 1, 3)
        scores = heads @ heads.transpose(0, 1, 3, 2) * 0.5
        p = np.exp(scores - scores.max(-1, keepdims=True))
        out = (p / p.sum(-1, keepdims=True)) @ heads
        return out.transpose(0, 2, 1, 3).reshape(n, 9, 8).transpose(0, 2, 1).reshape(n, 8, 3, 3)

    exe, text = logged(
        lambda: tp.compile(spatial_attention, args=[tp.InputInfo((BATCH, 8, 3, 3), tp.float32)], wait=True)
    )
    assert re.search(r"\(plan: x\[0\] <= 1, 2, 3, 4, 6, 8;", text), text  # (independent rows: ``range_plan.finer``)
    before = tripy_backend.compilation_count()
    for n in sizes((BATCH,)):
        x = rand(n, 8, 3, 3)
        out = np.from_dlpack(exe(tp.Tensor(x)))
        assert out.shape == (n, 8, 3, 3) and np.allclose(out, reference(x), rtol=1e-4, atol=1e-4), n
    assert tripy_backend.compilation_count() == before
    x = rand(3, 8, 3, 3)
    assert np.allclose(np.from_dlpack(spatial_attention(tp.Tensor(x))), reference(x), rtol=1e-4, atol=1e-4)
