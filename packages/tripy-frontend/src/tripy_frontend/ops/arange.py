import math
from typing import Any, Optional, Union

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.tensor import DimensionSize, Tensor, static_value
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import IOTA_TYPES
from tripy_frontend.ops.iota import iota
from tripy_frontend.ops.cast import cast

Number = Union[int, float, DimensionSize]


def _static(v: Any) -> Any:
    """A Python number for a number or a statically known DimensionSize; None for a run-time size."""
    return static_value(v) if isinstance(v, DimensionSize) else v


@public_api(
    document_under="ops_creation", dtype_constraints={"dtype": "T1", RETURN: "T1"}, dtype_variables={"T1": IOTA_TYPES}
)
def arange(
    start: Number,
    stop: Optional[Union[Number, dtypes.dtype]] = None,
    step: Number = 1,
    dtype: dtypes.dtype = dtypes.float32,
) -> Tensor:
    """Evenly spaced values in [start, stop) with the given step; ``arange(stop)`` and nvtripy's
    ``arange(stop, dtype)`` start at 0.
    Bounds may be DimensionSizes (e.g. ``tp.arange(x.shape[0])``), also ones only known at run time.
    Every dtype but ``tp.bool``.

    .. code-block:: python

        assert tp.arange(5, dtype=tp.int32).tolist() == [0, 1, 2, 3, 4]
        assert tp.arange(3, tp.int32).tolist() == [0, 1, 2]
        assert tp.arange(1.0, 2.0, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
        assert tp.arange(tp.ones((3, 2)).shape[0], dtype=tp.int32).tolist() == [0, 1, 2]
    """
    end: Optional[Number]
    if isinstance(stop, dtypes.dtype):  # nvtripy's arange(stop, dtype)
        dtype, end = stop, None
    else:
        end = stop
    if end is None:
        start, end = 0, start
    values = [_static(v) for v in (start, end, step)]
    if values[2] == 0:
        raise_error("tripy.arange: step must not be zero.", _stack.capture())
    if None not in values:
        start, end, step = values
        if dtype.is_integer and not all(float(v).is_integer() for v in values):
            raise_error(f"tripy.arange: start, stop and step must be integers for dtype {dtype}.", _stack.capture())
        size: Any = max(0, math.ceil((end - start) / step))
    else:
        # A bound known only at run time: the size is computed in the program (integer bounds and step).
        if not all(isinstance(v, (int, DimensionSize)) for v in (start, end, step)) or values[2] is None:
            raise_error(
                "tripy.arange: with a run-time size as a bound, start and stop must be ints or "
                "DimensionSizes and step a Python int.",
                _stack.capture(),
            )
        s = int(step)  # type: ignore[arg-type]
        size = (end - start + (s - 1)) // s if s > 0 else (start - end + (-s - 1)) // (-s)
    out = iota((size,), 0, dtype)
    if values[2] != 1:
        out = out * values[2]
    if _static(start) != 0:
        out = out + (
            start
            if not isinstance(start, DimensionSize) or static_value(start) is not None
            else _as_dtype(start, dtype)
        )
    return out


def _as_dtype(size: DimensionSize, dtype: dtypes.dtype) -> Tensor:

    return cast(size, dtype)
