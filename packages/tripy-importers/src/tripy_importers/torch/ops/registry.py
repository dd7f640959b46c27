"""The ATen operators tripy imports: each name mapped to a function of tripy's public ops.

A function takes the node's arguments as they are in the FX graph (tensors as ``tp.Tensor``, sizes as ints or
``tp.DimensionSize``, dtypes as tripy dtypes) and returns what the ATen operator returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from tripy_flatir import dtypes
from tripy_importers.module import as_dtype


@dataclass(frozen=True)
class AtenOp:
    fn: Callable[..., Any]
    # The positions of the arguments PyTorch promotes to one dtype before computing (None: no promotion).
    promote: Optional[Tuple[int, ...]]


OPS: Dict[str, AtenOp] = {}

# Composite operators kept whole instead of decomposed (tripy runs them better, or PyTorch cannot decompose them
# with dynamic shapes: scaled_dot_product_attention's decomposition fails on GPT-2's dynamic sequence in torch 2.13).
KEEP = ("aten.scaled_dot_product_attention.default",)


def aten(*names: str, promote: Optional[Tuple[int, ...]] = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function for each of `names` (``add.Tensor`` means ``aten.add.Tensor``)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            OPS[name if name.startswith("operator.") else f"aten.{name}"] = AtenOp(fn, promote)
        return fn

    return register


def promoting(fn: Callable[..., Any], positions: Tuple[int, ...], dtype: Optional[dtypes.dtype]) -> Callable[..., Any]:
    """`fn` with the tensors at `positions` cast to `dtype` first."""
    if dtype is None:
        return fn

    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(as_dtype(a, dtype) if i in positions else a for i, a in enumerate(args))
        return fn(*args, **kwargs)

    return call
