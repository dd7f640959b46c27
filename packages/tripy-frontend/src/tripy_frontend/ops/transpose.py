from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES, normalize_dim
from tripy_frontend.ops.permute import permute
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor


@public_api(document_under="ops_shape")
@TENSOR_METHOD_REGISTRY("transpose")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (also ``t.transpose(dim0, dim1)``). As in PyTorch, a rank-0 tensor accepts dims 0 and -1 and
    comes back unchanged (NumPy raises).

    .. code-block:: python

        out = tp.transpose(tp.Tensor([[1, 2, 3]]), 0, 1)
        assert out.tolist() == [[1], [2], [3]]
    """
    d0 = normalize_dim(dim0, input.rank, "tripy.transpose")
    d1 = normalize_dim(dim1, input.rank, "tripy.transpose")
    if input.rank == 0:
        return input
    perm = list(range(input.rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute(input, perm)
