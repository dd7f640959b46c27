"""The models the tritonclient conformance tests serve (HTTP and gRPC), and what NumPy says they answer."""

import ml_dtypes
import numpy as np

import tripy as tp

RNG = np.random.default_rng(0)
DTYPES = {
    "BOOL": (tp.bool, np.bool_),
    "INT8": (tp.int8, np.int8),
    "INT32": (tp.int32, np.int32),
    "INT64": (tp.int64, np.int64),
    "FP16": (tp.float16, np.float16),
    "BF16": (tp.bfloat16, ml_dtypes.bfloat16),
    "FP32": (tp.float32, np.float32),
}


def all_types():
    """One input and one output of each datatype: numbers plus one (or doubled, for floats), booleans negated."""

    def fn(b, i8, i32, i64, f16, bf16, f32):
        return ~b, i8 + 1, i32 + 1, i64 + 1, f16 * 2.0, bf16 * 2.0, f32 * 2.0

    infos = [tp.InputInfo(((1, 2, 8), 3), dt) for dt, _ in DTYPES.values()]
    return tp.compile(fn, args=infos)


def all_types_expected(arrays):
    b, *numbers = arrays
    return [~b] + [a + a.dtype.type(1) for a in numbers[:3]] + [a * a.dtype.type(2) for a in numbers[3:]]


def random_array(np_dtype, shape):
    if np_dtype == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    if np.issubdtype(np_dtype, np.integer):
        return RNG.integers(-100, 100, shape).astype(np_dtype)
    return RNG.normal(size=shape).astype(np_dtype)


def save_models(d):
    """Save ``types`` (every datatype), ``log`` (NaN and infinities) and ``mlp`` (batched) in `d`; returns the MLP's
    weight (its output is tanh(x @ weight))."""
    all_types().save(str(d / "types.tpexe"))
    tp.compile(lambda x: tp.log(x), args=[tp.InputInfo(((1, 2, 8), 4), tp.float32)]).save(str(d / "log.tpexe"))
    weight = RNG.normal(size=(16, 8)).astype(np.float32)
    w = tp.Tensor(weight)
    tp.compile(lambda x: tp.tanh(x @ w), args=[tp.InputInfo(((1, 4, 16), 16), tp.float32)]).save(str(d / "mlp.tpexe"))
    return weight
