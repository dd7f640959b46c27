"""FlatIR tensors: the values flowing between FlatIR ops."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple

from tripy_flatir.device import device as Device
from tripy_flatir.dtypes import dtype as DType

if TYPE_CHECKING:
    from tripy_flatir.ops.base import BaseFlatIROp
    from tripy_flatir.stack_info import StackInfo

DYNAMIC = -1  # a dimension whose size is only known at run time

_inter_ids = itertools.count()


def shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYNAMIC else str(d) for d in shape) + "]"


class FlatIRTensor:
    """A tensor in the FlatIR graph: rank, shape (``-1`` where only known at run time), dtype, device.

    ``stack_info`` and ``reason`` tell error reports where this tensor came from in user code and,
    for tensors a lowering introduced, why the lowering introduced it. ``sizes``, where the trace filled it in
    for a lowering that asks: per dim, what the trace knows of its size, as values that compare equal for two
    dims of the same size at run time (None: not known). ``size_sources``, where the trace filled it in: per dim, a
    tensor of the function (an input) and its dim that the trace knows to have the same size at run time, which a
    lowering reads the size from instead (None: none known), so that every read of one size is the same op.
    """

    __slots__ = (
        "name",
        "shape",
        "dtype",
        "device",
        "producer",
        "stack_info",
        "reason",
        "origin",
        "sizes",
        "size_sources",
    )

    def __init__(
        self, name: str, shape: Sequence[int], dtype: DType, device: Device, reason: Optional[str] = None
    ) -> None:
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.device = device
        self.producer: Optional["BaseFlatIROp"] = None
        self.stack_info: Optional["StackInfo"] = None
        self.reason = reason  # why a lowering introduced this tensor (None for 1:1 lowerings)
        self.origin: Optional[str] = None  # the user-level operation this tensor is part of, e.g. "'+'"
        self.sizes: Optional[Sequence[Any]] = None
        self.size_sources: Optional[Sequence[Optional[Tuple["FlatIRTensor", int]]]] = None

    @classmethod
    def build(cls, shape: Sequence[int], dtype: DType, device: Device, reason: Optional[str] = None) -> "FlatIRTensor":
        """An intermediate tensor created by a lowering (named ``t_inter<N>``)."""
        return cls(f"t_inter{next(_inter_ids)}", shape, dtype, device, reason)

    def like(self) -> "FlatIRTensor":
        """A fresh tensor with the same name, type and metadata but no producer."""
        t = FlatIRTensor(self.name, self.shape, self.dtype, self.device, self.reason)
        t.stack_info, t.origin, t.sizes, t.size_sources = self.stack_info, self.origin, self.sizes, self.size_sources
        return t

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return DYNAMIC not in self.shape

    def mlir_type(self) -> Any:
        from jax.extend.mlir import ir

        dims = [ir.ShapedType.get_dynamic_size() if d == DYNAMIC else d for d in self.shape]
        return ir.RankedTensorType.get(dims, self.dtype.mlir_type())

    def type_str(self) -> str:
        return f"[rank=({self.rank}), shape=({shape_str(self.shape)}), dtype=({self.dtype}), loc=({self.device})]"

    def __str__(self) -> str:
        return f"{self.name}: {self.type_str()}"

    __repr__ = __str__
