from tripy_trace.ops.cumsum import Cumsum
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES, normalize_dim
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_reductions",
    dtype_constraints={"input": "T1", RETURN: "T1"},
    dtype_variables={"T1": NUMERIC_TYPES},
)
def cumsum(input: Tensor, dim: int) -> Tensor:
    """Cumulative sum along `dim`: element ``i`` is the sum of elements ``0..i``.

    Integer inputs keep their dtype (NumPy and PyTorch widen to int64). ``inf`` and ``nan`` propagate
    as in NumPy.

    Args:
        input: A floating-point or integer tensor.
        dim: The dim to accumulate along.

    Returns:
        A tensor of the same shape and dtype as `input`.

    .. code-block:: python

        x = tp.reshape(tp.arange(6, dtype=tp.float32), (2, 3))
        assert tp.cumsum(x, dim=1).tolist() == [[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]]
        assert tp.cumsum(x, dim=0).tolist() == [[0.0, 1.0, 2.0], [3.0, 5.0, 7.0]]
    """
    d = normalize_dim(dim, input.rank, "tripy.cumsum")
    if input.rank == 0:
        return input
    return Tensor._from_op(Cumsum, [input], dim=d)
