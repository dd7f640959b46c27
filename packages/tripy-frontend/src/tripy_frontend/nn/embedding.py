"""tp.Embedding: a lookup table of vectors indexed by integer ids."""

from __future__ import annotations

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import dtype_rules, public_api
from tripy_frontend.nn.module import Module
from tripy_frontend.nn.parameter import unset
from tripy_frontend.nn.utils import check_float_dtype, check_int_arg
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.gather import gather


@public_api(document_under="modules")
class Embedding(Module):
    """A lookup table: ``embedding(ids)`` gives row ``ids[...]`` of ``weight`` for each id, so an
    input of shape ``S`` gives an output of shape ``S + [embedding_dim]``.

    ``weight`` has PyTorch's shape ``[num_embeddings, embedding_dim]``.

    .. code-block:: python

        embedding = tp.Embedding(num_embeddings=4, embedding_dim=2)
        table = np.arange(8, dtype=np.float32).reshape(4, 2)
        embedding.load_state_dict({"weight": table})
        out = embedding(tp.Tensor([[0, 3], [2, 2]]))
        assert np.array_equal(np.from_dlpack(out), table[[[0, 3], [2, 2]]])
    """

    num_embeddings: int
    """The number of rows of the table."""
    embedding_dim: int
    """The size of each vector."""
    dtype: dtypes.dtype
    """The data type of the table."""
    weight: Tensor
    """The table, of shape ``[num_embeddings, embedding_dim]``."""

    def __init__(self, num_embeddings: int, embedding_dim: int, dtype: dtypes.dtype = dtypes.float32) -> None:
        """
        Args:
            num_embeddings: The number of rows of the table.
            embedding_dim: The size of each vector.
            dtype: The data type of the table.
        """
        super().__init__()
        self.num_embeddings = check_int_arg(num_embeddings, "tp.Embedding: num_embeddings")
        self.embedding_dim = check_int_arg(embedding_dim, "tp.Embedding: embedding_dim")
        self.dtype = check_float_dtype(dtype, "tp.Embedding")
        self.weight = unset((num_embeddings, embedding_dim), dtype)

    @dtype_rules({"x": "T1"}, {"T1": (dtypes.int32, dtypes.int64)}, name="tp.Embedding")
    def forward(self, x: Tensor) -> Tensor:
        """
        Args:
            x: An int32 or int64 tensor of ids in ``[0, num_embeddings)`` (any shape).

        Returns:
            The vectors, of shape ``x.shape + [embedding_dim]``.
        """

        if not isinstance(x, Tensor):
            raise_error(
                f"tp.Embedding expects a tensor of int32 or int64 ids, but got {type(x).__name__}.",
                _stack.capture(),
                ["Make the ids a tensor, e.g. tp.Tensor([[1, 2, 3]]) (int32)."],
            )
        return gather(self.weight, 0, x)
