import math
from typing import Any, Sequence

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.tensor import DYNAMIC
from tripy_trace.ops.reshape import Reshape
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES, shape_arg
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import DimensionSize, Tensor


@public_api(document_under="ops_shape")
@TENSOR_METHOD_REGISTRY("reshape")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def reshape(input: Tensor, shape: Sequence[Any]) -> Tensor:
    """Give `input` a new shape with the same number of elements (also ``t.reshape(shape)``).
    One dim may be -1: it is inferred from the others.

    .. code-block:: python

        out = tp.reshape(tp.arange(6, dtype=tp.int32), (2, -1))
        assert out.tolist() == [[0, 1, 2], [3, 4, 5]]
    """

    if isinstance(shape, (int, DimensionSize)):
        shape = (shape,)
    shape = list(shape)
    infer = [i for i, d in enumerate(shape) if isinstance(d, int) and d == -1]
    if len(infer) > 1:
        raise_error(f"tripy.reshape: only one dim may be -1, but shape {shape} has {len(infer)}.", _stack.capture())
    in_shape = input.trace_tensor.shape
    if infer:
        known = [d for i, d in enumerate(shape) if i != infer[0]]
        if DYNAMIC not in in_shape and all(isinstance(d, int) or d._static is not None for d in known):
            known_ints = [int(d) for d in known]
            total, part = math.prod(in_shape), math.prod(known_ints)
            if part == 0 or total % part:
                raise_error(
                    f"tripy.reshape: cannot reshape a tensor of shape {list(in_shape)} ({total} elements) to {shape}.",
                    _stack.capture(),
                    [],
                    [input.stack_info],
                )
            shape[infer[0]] = total // part
        else:
            volume: Any = 1
            for d in input.shape:
                volume = volume * d
            part = 1
            for d in known:
                part = part * d
            shape[infer[0]] = volume // part
    static, shape_tensor = shape_arg(shape, "tripy.reshape")
    if DYNAMIC not in in_shape and DYNAMIC not in static and math.prod(in_shape) != math.prod(static):
        raise_error(
            f"tripy.reshape: cannot reshape a tensor of shape {list(in_shape)} ({math.prod(in_shape)} elements) "
            f"to {list(static)} ({math.prod(static)} elements).",
            _stack.capture(),
            ["The number of elements must stay the same."],
            [input.stack_info],
        )
    inputs = [input] + ([shape_tensor] if shape_tensor is not None else [])
    return Tensor._from_op(Reshape, inputs, shape=static)
