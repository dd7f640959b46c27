"""tripy Trace: the 1:1 graph of what the user called, with rank/shape/dtype/device inference and
lowering to FlatIR. Each trace op lives in its own module under ``tripy_trace.ops``."""

import importlib.metadata as _metadata
from tripy_trace.tensor import TraceTensor
from tripy_trace.trace import Trace

# The version is the distribution's (its pyproject.toml), read back at run time: one source.
__version__ = _metadata.version("tripy-trace")
__all__ = ["Trace", "TraceTensor"]
