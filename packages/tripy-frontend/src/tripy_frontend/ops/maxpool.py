from typing import Optional, Sequence

from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.ops.pooling import pool
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_nn", dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": NUMERIC_TYPES}
)
def maxpool(
    input: Tensor,
    kernel_dims: Sequence[int],
    stride: Optional[Sequence[int]] = None,
    padding: Optional[Sequence[Sequence[int]]] = None,
) -> Tensor:
    r"""Max pooling over the spatial dims of an (N, C, H, W) or (N, C, D, H, W) tensor.

    Each spatial output size is ``floor((size + pad_before + pad_after - kernel) / stride) + 1``.
    Padded positions never win (they act as -inf).

    Args:
        input: The input tensor.
        kernel_dims: The window size per spatial dim (2 or 3 entries).
        stride: The step between windows per spatial dim. Defaults to 1 in every dim.
        padding: A (before, after) pair per spatial dim. Defaults to no padding.

    .. code-block:: python

        input = tp.reshape(tp.arange(16, dtype=tp.float32), (1, 1, 4, 4))
        out = tp.maxpool(input, kernel_dims=(2, 2), stride=(2, 2))
        assert out.tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return pool(input, "max", kernel_dims, stride, padding, True)
