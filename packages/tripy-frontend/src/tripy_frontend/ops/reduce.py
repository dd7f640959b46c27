"""Shared body of the reductions (each public reduction has its own file)."""

from __future__ import annotations

from typing import Any

from tripy_trace.ops.reduce import Reduce
from tripy_frontend.ops.common import normalize_dims
from tripy_frontend.tensor import Tensor


def reduce(input: Tensor, kind: str, dim: Any, keepdim: bool, what: str) -> Tensor:
    dims = normalize_dims(dim, input.rank, what)
    if input.rank == 0:  # dim 0 / -1 of a scalar is accepted (as in PyTorch); there is nothing to reduce
        dims = ()
    if not dims:
        return input
    return Tensor._from_op(Reduce, [input], kind=kind, dims=dims, keepdim=bool(keepdim))
