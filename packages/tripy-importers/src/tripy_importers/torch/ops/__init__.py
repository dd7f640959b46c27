"""The ATen operator table: importing this package registers every operator module's functions."""

from tripy_importers.torch.ops import creation, elementwise, nn, reductions, shapes  # noqa: F401
from tripy_importers.torch.ops.registry import KEEP, OPS

__all__ = ["KEEP", "OPS"]
