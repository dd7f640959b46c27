"""Trace tensors: the edges of the Trace graph."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Optional, Tuple

from tripy_flatir.device import device as Device
from tripy_flatir.dtypes import dtype as DType
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor, shape_str

if TYPE_CHECKING:
    from tripy_flatir.stack_info import StackInfo
    from tripy_trace.ops.base import BaseTraceOp

_ids = itertools.count()


class TraceTensor:
    """One output of a trace op. Shape dims are ``-1`` (DYNAMIC) where only known at run time.

    ``number`` counts tensors in the order they were made. An op's inputs exist before it is built, so
    every op's outputs are numbered after its inputs: ordering a graph's tensors by number orders its ops
    topologically (see ``tripy_trace.trace``).
    """

    __slots__ = ("number", "_name", "producer", "shape", "dtype", "device", "stack_info", "__weakref__")

    def __init__(
        self,
        producer: Optional["BaseTraceOp"],
        stack_info: Optional["StackInfo"] = None,
        shape: Tuple[int, ...] = (),
        dtype: Optional[DType] = None,
        device: Optional[Device] = None,
    ) -> None:
        """`shape`, `dtype`, `device`: where known when the tensor is made; otherwise inference sets them."""
        self.number = next(_ids)
        self._name: Optional[str] = None  # "t<number>" unless set (made when first asked for)
        self.producer = producer
        self.shape = shape
        self.dtype: DType = dtype  # type: ignore[assignment]
        self.device: Device = device  # type: ignore[assignment]
        self.stack_info = stack_info

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = f"t{self.number}"
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return DYNAMIC not in self.shape

    def to_flat_ir(self) -> FlatIRTensor:
        t = FlatIRTensor(self.name, self.shape, self.dtype, self.device)
        t.stack_info = self.stack_info
        return t

    def type_str(self) -> str:
        return f"[rank=({self.rank}), shape=({shape_str(self.shape)}), dtype=({self.dtype}), loc=({self.device})]"

    def __str__(self) -> str:
        return f"{self.name}: {self.type_str()}"

    __repr__ = __str__
