from tripy_frontend.export import public_api
from tripy_frontend.ops.abs import abs as _abs
from tripy_frontend.ops.all import all as _all
from tripy_frontend.ops.common import FLOAT_TYPES
from tripy_frontend.tensor import Tensor
from tripy_flatir.ops.is_finite import IsFiniteOp
from tripy_frontend.ops.unary import unary


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", "other": "T1"},
    dtype_variables={"T1": FLOAT_TYPES},
)
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08) -> bool:
    r"""Whether every element satisfies :math:`|\text{input} - \text{other}| \le \text{atol} +
    \text{rtol} \cdot |\text{other}|` (NumPy broadcasting applies). Equal infinities count as
    close; NaN is never close to anything. The comparison runs as a tripy program; only the final
    bool is read back.

    Args:
        input: A floating-point tensor.
        other: A tensor of the same dtype.
        rtol: The relative tolerance.
        atol: The absolute tolerance.

    Returns:
        A Python bool.

    .. code-block:: python

        assert tp.allclose(tp.Tensor([1e-7]), tp.Tensor([1.1e-7]))
        assert not tp.allclose(tp.Tensor([1.0, 2.0]), tp.Tensor([1.0, 2.1]))
    """
    # As in NumPy: the tolerance test only where `other` is finite (an infinite `other` would make the
    # tolerance infinite); infinities are close only to themselves, via ==.
    finite = unary(other, IsFiniteOp, "isfinite")
    close = ((_abs(input - other) <= atol + rtol * _abs(other)) & finite) | (input == other)
    return bool(_all(close))
