import math
from typing import Any, Optional, Union

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.ops.iota import iota
from tripy_frontend.tensor import Tensor

Number = Union[int, float]


@public_api()
def arange(start: Number, stop: Optional[Number] = None, step: Number = 1,
           dtype: dtypes.dtype = dtypes.float32) -> Tensor:
    """Evenly spaced values in [start, stop) with the given step; ``arange(stop)`` starts at 0.

    .. code-block:: python

        assert tp.arange(5, dtype=tp.int32).tolist() == [0, 1, 2, 3, 4]
        assert tp.arange(1.0, 2.0, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    """
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise_error(f"tripy.arange: {name} must be a Python number, not {type(v).__name__}.", _stack.capture())
    if step == 0:
        raise_error("tripy.arange: step must not be zero.", _stack.capture())
    if dtype.is_integer and not all(float(v).is_integer() for v in (start, stop, step)):
        raise_error(f"tripy.arange: start, stop and step must be integers for dtype {dtype}.", _stack.capture())
    size = max(0, math.ceil((stop - start) / step))
    out = iota((size,), 0, dtype)
    if step != 1:
        out = out * step
    if start != 0:
        out = out + start
    return out
