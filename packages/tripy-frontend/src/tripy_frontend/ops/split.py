from typing import Any, Sequence, Tuple, Union

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.tensor import DYNAMIC
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, normalize_dim
from tripy_frontend.tensor import DimensionSize, Tensor
from tripy_frontend.types import IntLike


@public_api(
    document_under="ops_shape", dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": ALL_TYPES}
)
def split(input: Tensor, num_split_or_sizes: Union[int, Sequence[IntLike]], dim: int = 0) -> Tuple[Tensor, ...]:
    """Split a tensor into pieces along `dim`.

    Args:
        input: The input tensor.
        num_split_or_sizes: An int ``n``: split into ``n`` pieces of ``ceil(size / n)`` elements each; if
            the size is not divisible by ``n``, the last pieces are smaller (possibly empty).
            A sequence of ints or DimensionSizes: the size of each piece; they must add up to the size of
            the dim.
        dim: The dim to split.

    Returns:
        A tuple of tensors, as in nvtripy 0.1.7 (older nvtripy returned a list: a tuple indexes, unpacks
        and iterates the same way; ``list(tp.split(...))`` gives a list).

    .. code-block:: python

        input = tp.reshape(tp.arange(12, dtype=tp.int32), (6, 2))
        a, b, c = tp.split(input, 3)
        assert b.tolist() == [[4, 5], [6, 7]]
        first, rest = tp.split(input, [1, 5], dim=0)
        assert first.shape == (1, 2) and rest.shape == (5, 2)
        first, rest = tp.split(input, [input.shape[1], 4])
        assert rest.shape == (4, 2)
        left, right = tp.split(input, 2, dim=1)
        assert left.tolist() == [[0], [2], [4], [6], [8], [10]]
    """

    dim = normalize_dim(dim, input.rank, "tripy.split")
    if input.rank == 0:
        raise_error("tripy.split: the input must have at least one dim.", _stack.capture())
    size: Any = input.shape[dim]
    static_size = input.trace_tensor.shape[dim]
    if isinstance(num_split_or_sizes, int) and not isinstance(num_split_or_sizes, bool):
        n = num_split_or_sizes
        if n <= 0:
            raise_error(f"tripy.split: the number of pieces must be positive, but got {n}.", _stack.capture())
        chunk = (size + (n - 1)) // n  # DimensionSize arithmetic: folds when static
        bounds = []
        start: Any = 0
        for i in range(n):
            stop = start + chunk
            bounds.append((start, stop if i < n - 1 else None))
            start = stop
    elif isinstance(num_split_or_sizes, Sequence) and not isinstance(num_split_or_sizes, (str, Tensor)):
        sizes = list(num_split_or_sizes)
        if not sizes:
            raise_error("tripy.split: the list of sizes must not be empty.", _stack.capture())
        for s in sizes:
            if not isinstance(s, (int, DimensionSize)) or isinstance(s, bool) or (isinstance(s, int) and s < 0):
                raise_error(f"tripy.split: sizes must be non-negative ints, but got {sizes}.", _stack.capture())
        if static_size != DYNAMIC and all(isinstance(s, int) for s in sizes) and sum(sizes) != static_size:
            raise_error(
                f"tripy.split: the sizes {sizes} add up to {sum(sizes)}, but dim {dim} of the input (shape "
                f"{list(input.trace_tensor.shape)}) has size {static_size}.",
                _stack.capture(),
                ["The sizes of the pieces must add up to the size of the dim."],
                [input.stack_info],
            )
        bounds = []
        start = 0
        for s in sizes:
            bounds.append((start, start + s))
            start = start + s
    else:
        raise_error(
            f"tripy.split: num_split_or_sizes must be an int or a sequence of ints, but got "
            f"{type(num_split_or_sizes).__name__}.",
            _stack.capture(),
        )
    lead = (slice(None),) * dim
    return tuple(input[lead + (slice(lo, hi),)] for lo, hi in bounds)
