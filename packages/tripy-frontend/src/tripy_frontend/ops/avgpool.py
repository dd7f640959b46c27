from typing import Optional, Sequence

from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import FLOAT_TYPES
from tripy_frontend.ops.pooling import pool
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_nn", dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": FLOAT_TYPES}
)
def avgpool(
    input: Tensor,
    kernel_dims: Sequence[int],
    stride: Optional[Sequence[int]] = None,
    padding: Optional[Sequence[Sequence[int]]] = None,
    count_include_pad: bool = True,
) -> Tensor:
    r"""Average pooling over the spatial dims of an (N, C, H, W) or (N, C, D, H, W) tensor.

    Each spatial output size is ``floor((size + pad_before + pad_after - kernel) / stride) + 1``.

    Args:
        input: The input tensor (floating point).
        kernel_dims: The window size per spatial dim (2 or 3 entries).
        stride: The step between windows per spatial dim. Defaults to 1 in every dim.
        padding: A (before, after) pair per spatial dim of zero padding. Defaults to no padding.
        count_include_pad: If True (the default, as in PyTorch), padded zeros count in the average: every
            window sum is divided by the kernel volume. If False, it is divided by the number of input
            elements in the window.

    .. code-block:: python

        input = tp.reshape(tp.arange(16, dtype=tp.float32), (1, 1, 4, 4))
        out = tp.avgpool(input, kernel_dims=(2, 2), stride=(2, 2))
        assert out.tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]
        padded = tp.avgpool(input, (2, 2), stride=(2, 2), padding=((1, 1), (1, 1)), count_include_pad=False)
        assert padded.tolist()[0][0][0] == [0.0, 1.5, 3.0]
    """
    return pool(input, "avg", kernel_dims, stride, padding, count_include_pad)
