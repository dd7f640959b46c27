"""The ONNX operator table: importing this package registers every operator module's functions."""

from tripy_importers.onnx.ops import creation, elementwise, nn, reductions, shapes  # noqa: F401
from tripy_importers.onnx.ops.registry import OPS, Dims

__all__ = ["OPS", "Dims"]
