"""tripy Trace: the 1:1 graph of what the user called, with rank/shape/dtype/device inference and
lowering to FlatIR. Each trace op lives in its own module under ``tripy_trace.ops``."""

from tripy_trace.tensor import TraceTensor
from tripy_trace.trace import Trace

__version__ = "0.1.0"
__all__ = ["Trace", "TraceTensor"]
