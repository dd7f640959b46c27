from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.gather import Gather
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, INDEX_TYPES, normalize_dim
from tripy_frontend.tensor import Tensor


@public_api(
    document_under="ops_shape",
    dtype_constraints={"input": "T1", "index": "T2", RETURN: "T1"},
    dtype_variables={"T1": ALL_TYPES, "T2": INDEX_TYPES},
)
def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Take the entries of `input` at positions `index` along `dim`, like
    ``numpy.take(input, index, axis=dim)``: the output's shape is
    ``input.shape[:dim] + index.shape + input.shape[dim + 1:]``.

    Args:
        input: The tensor to take values from.
        dim: The dim along which to index.
        index: An int32 or int64 tensor of indices (any rank). Negative indices count from the end;
            indices that are still out of range are clamped into range at run time.

    .. code-block:: python

        input = tp.reshape(tp.arange(6, dtype=tp.float32), (2, 3))
        out = tp.gather(input, 1, tp.Tensor([2, 0]))
        assert out.tolist() == [[2.0, 0.0], [5.0, 3.0]]
        assert tp.gather(input, 0, tp.Tensor([[1], [-2]])).shape == (2, 1, 3)
    """
    if not isinstance(input, Tensor) or not isinstance(index, Tensor):
        raise_error(
            "tripy.gather expects tripy.Tensor input and index, but got "
            f"{type(input).__name__} and {type(index).__name__}.",
            _stack.capture(),
            ["Make the index a tensor, e.g. tp.Tensor([0, 2])."],
        )
    dim = normalize_dim(dim, input.rank, "tripy.gather")
    if input.rank == 0:
        raise_error("tripy.gather: the input must have at least one dim.", _stack.capture())
    return Tensor._from_op(Gather, [input, index], dim=dim)
