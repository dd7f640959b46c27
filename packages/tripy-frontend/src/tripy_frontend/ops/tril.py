from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import CONSTANT_TYPES, constant
from tripy_frontend.ops.iota import iota
from tripy_frontend.ops.where import where
from tripy_frontend.tensor import Tensor


def triangle(tensor: Tensor, diagonal: int, lower: bool) -> Tensor:
    """Shared body of tril and triu: keep (row + diagonal >= col) or (row + diagonal <= col), zero the rest."""
    what = "tripy.tril" if lower else "tripy.triu"
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise_error(f"{what}: diagonal must be an int, but got {type(diagonal).__name__}.", _stack.capture())
    if tensor.rank < 2:
        raise_error(
            f"{what}: the input must have at least 2 dims, but it has rank {tensor.rank}.",
            _stack.capture(),
            ["The last two dims are the matrix; leading dims are a batch."],
            [tensor.stack_info],
        )
    rows, cols = tensor.shape[-2], tensor.shape[-1]
    row = iota((rows, cols), dim=0, dtype=dtypes.int32)
    col = iota((rows, cols), dim=1, dtype=dtypes.int32)
    shifted = row + diagonal if diagonal else row
    keep = shifted >= col if lower else shifted <= col
    return where(keep, tensor, constant(0, tensor.dtype, tensor.device))


@public_api(
    document_under="ops_shape", dtype_constraints={"tensor": "T1", RETURN: "T1"}, dtype_variables={"T1": CONSTANT_TYPES}
)
def tril(tensor: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of each matrix in `tensor` (its last two dims; leading dims are a batch),
    with every element above the `diagonal`-th diagonal set to zero. ``diagonal=0`` is the main
    diagonal, positive values are above it and negative values below.

    Args:
        tensor: A tensor of rank 2 or more (any dtype but ``tp.int4``: tripy cannot lower an int4 constant yet).
        diagonal: Which diagonal is the last one kept.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        x = tp.iota((3, 3), dim=0) + 1.0
        assert tp.tril(x).tolist() == [[1.0, 0.0, 0.0], [2.0, 2.0, 0.0], [3.0, 3.0, 3.0]]
        assert np.array_equal(np.from_dlpack(tp.tril(x, diagonal=-1)), np.tril(np.from_dlpack(x), -1))
    """
    return triangle(tensor, diagonal, lower=True)
