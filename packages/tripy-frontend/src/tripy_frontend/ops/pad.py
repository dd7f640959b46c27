from typing import Any, List, Sequence, Union

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.pad import Pad
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import CONSTANT_TYPES, constant
from tripy_frontend.ops.concatenate import concatenate
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import DimensionSize, Tensor, static_value
from tripy_frontend.ops.gather import gather
from tripy_frontend.ops.abs import abs
from tripy_frontend.ops.arange import arange
from tripy_frontend.ops.maximum import maximum
from tripy_frontend.ops.minimum import minimum
from tripy_frontend.ops.where import where


@public_api(
    document_under="ops_shape", dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": CONSTANT_TYPES}
)
def pad(
    input: Tensor, pad: Sequence[Sequence[Any]], mode: str = "constant", value: Union[int, float, bool] = 0
) -> Tensor:
    """Pad a tensor: with a constant value, or with its own elements.

    Args:
        input: The input tensor (any dtype but ``tp.int4``: tripy cannot lower an int4 constant yet).
        pad: One ``(before, after)`` pair per dim of `input`: how many elements to add before the first and
            after the last element of that dim. Entries are ints or DimensionSizes; with ``"constant"``, a
            negative amount removes elements instead.
        mode: ``"constant"`` (fill with `value`), or, as PyTorch's ``pad`` names them, ``"reflect"`` (mirror
            the elements next to the edge, without repeating it: ``[1, 2, 3]`` padded by 2 before is
            ``[3, 2, 1, 2, 3]``), ``"replicate"`` (repeat the edge element) or ``"circular"`` (wrap around).
            The other modes need static, non-negative amounts; over a dim whose size is only known at run
            time (a compiled range), ``"reflect"`` needs a size larger than each amount and ``"circular"``
            one at least as large (as in PyTorch); a size out of that range gives undefined values there.
        value: The value of the added elements (``"constant"`` only).

    .. code-block:: python

        input = tp.reshape(tp.arange(6, dtype=tp.float32), (2, 3))
        out = tp.pad(input, ((1, 0), (0, 2)), value=-1.0)
        expected = np.pad(np.arange(6, dtype=np.float32).reshape(2, 3), ((1, 0), (0, 2)), constant_values=-1.0)
        assert np.array_equal(np.from_dlpack(out), expected)
        out = tp.pad(tp.Tensor([1.0, 2.0, 3.0]), [(2, 1)], mode="reflect")
        assert out.tolist() == [3.0, 2.0, 1.0, 2.0, 3.0, 2.0]
    """
    what = "tripy.pad"
    if mode not in ("constant", *_INDEX_MODES):
        raise_error(
            f"{what}: unsupported padding mode {mode!r}.",
            _stack.capture(),
            ["Supported modes: 'constant', " + ", ".join(repr(m) for m in _INDEX_MODES) + "."],
        )
    if (
        isinstance(pad, Tensor)
        or not isinstance(pad, Sequence)
        or not all(isinstance(p, Sequence) and not isinstance(p, Tensor) and len(p) == 2 for p in pad)
    ):
        raise_error(
            f"{what}: `pad` must be a sequence of (before, after) pairs, one per dim, but got {pad!r}.",
            _stack.capture(),
        )
    if len(pad) != input.rank:
        raise_error(
            f"{what}: `pad` must have one (before, after) pair per dim of the input, which has rank "
            f"{input.rank} (shape {list(input.trace_tensor.shape)}), but got {len(pad)} pair(s).",
            _stack.capture(),
            [],
            [input.stack_info],
        )
    low, low_t = _amounts([p[0] for p in pad], what)
    high, high_t = _amounts([p[1] for p in pad], what)
    if mode != "constant":
        return _pad_from_input(input, low, high, mode, what)
    value_t = _pad_value(value, input, what)
    inputs = [input, value_t]
    if low_t is not None or high_t is not None:
        inputs += [
            low_t if low_t is not None else constant(list(low), dtypes.int32),
            high_t if high_t is not None else constant(list(high), dtypes.int32),
        ]
    return Tensor._from_op(Pad, inputs, low=low, high=high)


# Modes that pad with the input's own elements, and NumPy's name for the same index pattern.
_INDEX_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_from_input(input: Tensor, low: Any, high: Any, mode: str, what: str) -> Tensor:
    """Pad each dim by gathering the input's elements at positions that follow `mode` (the positions are
    NumPy's padding of ``arange(size)``, a constant index vector; the gather runs in the program)."""

    shape = input.trace_tensor.shape
    out = input
    for d, (lo, hi) in enumerate(zip(low, high)):
        if lo == 0 and hi == 0:
            continue
        if lo is None or hi is None or lo < 0 or hi < 0:
            raise_error(
                f"{what}: mode={mode!r} needs static, non-negative padding amounts, but dim {d} has padding "
                f"({'?' if lo is None else lo}, {'?' if hi is None else hi}).",
                _stack.capture(),
            )
        n = shape[d]
        if n < 0:  # (a size known at run time only: the positions are computed in the program)
            out = gather(out, d, _run_time_positions(input.shape[d], lo, hi, mode))
            continue
        if n == 0 or (mode == "reflect" and max(lo, hi) >= n):
            raise_error(
                f"{what}: mode={mode!r} cannot pad dim {d} of size {n} by ({lo}, {hi}).",
                _stack.capture(),
                [
                    "'reflect' padding must be smaller than the size of the dim (as in PyTorch); "
                    "every mode needs a non-empty dim."
                ],
                [input.stack_info],
            )
        index = np.pad(np.arange(n, dtype=np.int32), (lo, hi), mode=_INDEX_MODES[mode])  # type: ignore[call-overload]
        out = gather(out, d, constant(index, dtypes.int32, input.device))
    return out


def _run_time_positions(n: Any, lo: int, hi: int, mode: str) -> Tensor:
    """The positions `_pad_from_input` gathers along a dim of run-time size `n` (a DimensionSize), as NumPy pads
    ``arange(n)`` by ``(lo, hi)`` in `mode`, for the sizes that mode takes (``n > max(lo, hi)`` to reflect,
    ``n >= max(lo, hi)`` to wrap around): ``j = i - lo`` clamped, mirrored or wrapped into ``[0, n)``."""
    j = arange(n + (lo + hi), dtype=dtypes.int32) - lo
    last = n - 1
    if mode == "replicate":
        return minimum(maximum(j, 0), last)
    if mode == "reflect":
        return last - abs(last - abs(j))
    return where(j < 0, j + n, where(j > last, j - n, j))


def _amounts(values: List[Any], what: str) -> Any:
    """Padding amounts (ints, possibly negative, or DimensionSizes) -> (static amounts with None where
    only known at run time, all amounts as a 1-D int32 tensor or None when all are static)."""

    for v in values:
        if not isinstance(v, (int, np.integer, DimensionSize)) or isinstance(v, (bool, np.bool_)):
            raise_error(
                f"{what}: padding amounts must be ints or DimensionSizes, but got {type(v).__name__}.", _stack.capture()
            )
    static = tuple(static_value(v) if isinstance(v, DimensionSize) else int(v) for v in values)
    if None not in static:
        return static, None
    parts = [reshape(v if isinstance(v, DimensionSize) else constant(int(v), dtypes.int32), (1,)) for v in values]
    return static, concatenate(parts, 0)


def _pad_value(value: Any, input: Tensor, what: str) -> Tensor:
    dt = input.dtype
    if not isinstance(value, (int, float, np.number, np.bool_)):
        raise_error(f"{what}: value must be a Python number, but got {type(value).__name__}.", _stack.capture())
    if dt is dtypes.bool:
        if value not in (0, 1):
            raise_error(
                f"{what}: cannot pad a bool tensor with {value!r}.", _stack.capture(), ["Use 0/1 or False/True."]
            )
        return constant(bool(value), dt, input.device)
    if not dt.is_floating and float(value) != int(value):
        raise_error(
            f"{what}: cannot pad a {dt} tensor with the non-integer value {value!r}.",
            _stack.capture(),
            ["Cast the tensor to a floating-point dtype first with tripy.cast()."],
        )
    return constant(value, dt, input.device)
