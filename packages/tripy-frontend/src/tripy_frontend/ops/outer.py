from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import NUMERIC_TYPES
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_shape",
    dtype_constraints={"vec1": "T1", "vec2": "T1", RETURN: "T1"},
    dtype_variables={"T1": NUMERIC_TYPES},
)
def outer(vec1: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors: ``out[i, j] = vec1[i] * vec2[j]``.

    Args:
        vec1: A 1-D tensor of size n.
        vec2: A 1-D tensor of size m, with the same dtype.

    Returns:
        An (n, m) tensor.

    .. code-block:: python

        out = tp.outer(tp.Tensor([1.0, 2.0]), tp.Tensor([3.0, 4.0, 5.0]))
        assert out.tolist() == [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.rank != 1:
            raise_error(
                f"tripy.outer: {name} must be 1-D, but it has rank {v.rank}.", _stack.capture(), [], [v.stack_info]
            )
    return reshape(vec1, (vec1.shape[0], 1)) * reshape(vec2, (1, vec2.shape[0]))
