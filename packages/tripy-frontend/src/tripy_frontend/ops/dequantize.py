from typing import Any, Optional

from tripy_flatir import dtypes
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.cast import cast
from tripy_frontend.ops.common import FLOAT_TYPES
from tripy_frontend.ops.quantize import QUANTIZED_TYPES, scale_operand
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_types",
    dtype_constraints={"input": "T1", "dtype": "T2", "scale": "T2", RETURN: "T2"},
    dtype_variables={"T1": QUANTIZED_TYPES, "T2": FLOAT_TYPES},
)
def dequantize(input: Tensor, scale: Any, dtype: dtypes.dtype, dim: Optional[int] = None) -> Tensor:
    """Dequantize an int4, int8 or float8 tensor to the floating-point `dtype`: ``convert(x) * scale``.

    With ``dim=None`` the scale is per tensor (a number or a rank-0 tensor), or, for int4, block-wise (a
    ``[blocks, D1]`` scale for a ``[D0, D1]`` input, as in :func:`quantize`); with `dim` it is per channel
    (a 1-D tensor or a sequence with one value per entry of ``input.shape[dim]``). A scale tensor must
    have dtype `dtype` and be a constant: one that holds data, not one computed by operations that have not
    run (as in nvtripy).

    Args:
        input: A tensor of dtype ``tp.int4``, ``tp.int8`` or ``tp.float8``.
        scale: The scale: a constant tensor, a number or a sequence of numbers.
        dtype: ``tp.float32``, ``tp.float16`` or ``tp.bfloat16``.
        dim: The channel dim for per-channel dequantization, or None.

    Returns:
        A tensor of dtype `dtype`, shaped like `input`.

    .. code-block:: python

        q = tp.Tensor(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8))
        out = tp.dequantize(q, [0.5, 2.0], tp.float32, dim=0)
        assert out.tolist() == [[0.5, 1.0, 1.5], [8.0, 10.0, 12.0]]
        assert tp.dequantize(q, 0.25, tp.float32).tolist()[0] == [0.25, 0.5, 0.75]
        q4 = tp.quantize(tp.Tensor([[0.0, 1.0], [2.0, 3.0]]), [[1.0, 1.0]], tp.int4)
        assert tp.dequantize(q4, [[1.0, 1.0]], tp.float32).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    """
    return cast(input, dtype) * scale_operand(input, scale, dtype, dim, "tripy.dequantize", input.dtype)
