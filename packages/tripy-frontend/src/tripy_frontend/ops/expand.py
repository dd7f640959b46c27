from typing import Any, Sequence

from tripy_trace.ops.expand import Expand
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES, shape_arg
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor


@public_api(document_under="ops_shape")
@TENSOR_METHOD_REGISTRY("expand")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def expand(input: Tensor, sizes: Sequence[Any]) -> Tensor:
    """Broadcast size-1 dims (and new leading dims) to `sizes`; -1 keeps a dim's size.

    .. code-block:: python

        out = tp.expand(tp.Tensor([[1], [2]]), (2, 3))
        assert out.tolist() == [[1, 1, 1], [2, 2, 2]]
    """
    sizes = list(sizes)
    offset = len(sizes) - input.rank
    in_shape = input.shape
    for i, s in enumerate(sizes):
        if isinstance(s, int) and s == -1 and i >= offset:
            sizes[i] = in_shape[i - offset]
    static, shape_tensor = shape_arg(sizes, "tripy.expand")
    inputs = [input] + ([shape_tensor] if shape_tensor is not None else [])
    return Tensor._from_op(Expand, inputs, shape=static)
