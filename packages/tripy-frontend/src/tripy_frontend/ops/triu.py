from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import CONSTANT_TYPES
from tripy_frontend.ops.tril import triangle
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_shape", dtype_constraints={"tensor": "T1", RETURN: "T1"}, dtype_variables={"T1": CONSTANT_TYPES}
)
def triu(tensor: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of each matrix in `tensor` (its last two dims; leading dims are a batch),
    with every element below the `diagonal`-th diagonal set to zero. ``diagonal=0`` is the main
    diagonal, positive values are above it and negative values below.

    Args:
        tensor: A tensor of rank 2 or more (any dtype but ``tp.int4``: tripy cannot lower an int4 constant yet).
        diagonal: Which diagonal is the first one kept.

    Returns:
        A tensor of the same shape and dtype.

    .. code-block:: python

        x = tp.iota((3, 3), dim=0) + 1.0
        assert tp.triu(x).tolist() == [[1.0, 1.0, 1.0], [0.0, 2.0, 2.0], [0.0, 0.0, 3.0]]
        assert np.array_equal(np.from_dlpack(tp.triu(x, diagonal=1)), np.triu(np.from_dlpack(x), 1))
    """
    return triangle(tensor, diagonal, lower=False)
