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
from tripy_frontend.tensor import Tensor


@public_api(dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": CONSTANT_TYPES})
def pad(input: Tensor, pad: Sequence[Sequence[Any]], mode: str = "constant",
        value: Union[int, float, bool] = 0) -> Tensor:
    """Pad a tensor with a constant value.

    Args:
        input: The input tensor (any dtype but ``tp.int4``: tripy cannot lower an int4 constant yet).
        pad: One ``(before, after)`` pair per dim of `input`: how many elements to add before the first and
            after the last element of that dim. Entries are ints or DimensionSizes; a negative amount
            removes elements instead.
        mode: The padding mode. Only ``"constant"`` is supported.
        value: The value of the added elements.

    .. code-block:: python

        input = tp.reshape(tp.arange(6, dtype=tp.float32), (2, 3))
        out = tp.pad(input, ((1, 0), (0, 2)), value=-1.0)
        expected = np.pad(np.arange(6, dtype=np.float32).reshape(2, 3), ((1, 0), (0, 2)), constant_values=-1.0)
        assert np.array_equal(np.from_dlpack(out), expected)
    """
    what = "tripy.pad"
    if mode != "constant":
        raise_error(f"{what}: unsupported padding mode {mode!r}.", _stack.capture(), ["Only mode='constant' is supported."])
    if isinstance(pad, Tensor) or not isinstance(pad, Sequence) or not all(
            isinstance(p, Sequence) and not isinstance(p, Tensor) and len(p) == 2 for p in pad):
        raise_error(f"{what}: `pad` must be a sequence of (before, after) pairs, one per dim, but got {pad!r}.",
                    _stack.capture())
    if len(pad) != input.rank:
        raise_error(f"{what}: `pad` must have one (before, after) pair per dim of the input, which has rank "
                    f"{input.rank} (shape {list(input.trace_tensor.shape)}), but got {len(pad)} pair(s).",
                    _stack.capture(), [], [input.stack_info])
    low, low_t = _amounts([p[0] for p in pad], what)
    high, high_t = _amounts([p[1] for p in pad], what)
    value_t = _pad_value(value, input, what)
    inputs = [input, value_t]
    if low_t is not None or high_t is not None:
        inputs += [low_t if low_t is not None else constant(list(low), dtypes.int32),
                   high_t if high_t is not None else constant(list(high), dtypes.int32)]
    return Tensor._from_op(Pad, inputs, low=low, high=high)


def _amounts(values: List[Any], what: str) -> Any:
    """Padding amounts (ints, possibly negative, or DimensionSizes) -> (static amounts with None where
    only known at run time, all amounts as a 1-D int32 tensor or None when all are static)."""
    from tripy_frontend.dimension_size import DimensionSize, static_value

    for v in values:
        if not isinstance(v, (int, np.integer, DimensionSize)) or isinstance(v, (bool, np.bool_)):
            raise_error(f"{what}: padding amounts must be ints or DimensionSizes, but got {type(v).__name__}.",
                        _stack.capture())
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
            raise_error(f"{what}: cannot pad a bool tensor with {value!r}.", _stack.capture(), ["Use 0/1 or False/True."])
        return constant(bool(value), dt, input.device)
    if not dt.is_floating and float(value) != int(value):
        raise_error(f"{what}: cannot pad a {dt} tensor with the non-integer value {value!r}.", _stack.capture(),
                    ["Cast the tensor to a floating-point dtype first with tripy.cast()."])
    return constant(value, dt, input.device)
