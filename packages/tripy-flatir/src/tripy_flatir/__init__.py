"""tripy FlatIR: the lowest layer of tripy.

Owns dtypes, devices, the base exception, FlatIR tensors/ops/functions, and their lowering to
StableHLO MLIR through the MLIR Python bindings. Usable on its own by tool authors:

    from tripy_flatir import FlatIRFunction, FlatIRTensor, float32, device
    from tripy_flatir.ops import TanhOp
"""

import importlib.metadata as _metadata
from tripy_flatir import dtypes
from tripy_flatir.device import device
from tripy_flatir.dtypes import (
    bfloat16,
    bool,
    dtype,
    float8,
    float16,
    float32,
    int4,
    int8,
    int32,  # noqa: A004
    int64,
)
from tripy_flatir.exceptions import TripyException, TripyWarning, raise_error
from tripy_flatir.function import FlatIRFunction
from tripy_flatir.logging import logger
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor

# The version is the distribution's (its pyproject.toml), read back at run time: one source.
__version__ = _metadata.version("tripy-flatir")

__all__ = [
    "dtypes",
    "device",
    "dtype",
    "float32",
    "float16",
    "bfloat16",
    "float8",
    "int4",
    "int8",
    "int32",
    "int64",
    "bool",
    "TripyException",
    "TripyWarning",
    "raise_error",
    "FlatIRFunction",
    "FlatIRTensor",
    "DYNAMIC",
    "logger",
]
