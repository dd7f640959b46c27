"""tripy backend: compiles StableHLO with XLA through PJRT, runs it, owns device buffers and caches.

The only layer that touches compilation and execution; everything jaxlib-specific is in ``_xla``.
"""

import importlib.metadata as _metadata
from tripy_backend._xla import compilation_count
from tripy_backend.cache import ProgramCache
from tripy_backend.devices import check_device, compiler_name
from tripy_backend.program import Program, SavedCode, compile
from tripy_flatir.mlir_utils import bytecode as module_to_bytecode
from tripy_backend.memory import to_device, to_numpy

# The version is the distribution's (its pyproject.toml), read back at run time: one source.
__version__ = _metadata.version("tripy-backend")
__all__ = [
    "compilation_count",
    "ProgramCache",
    "compile",
    "module_to_bytecode",
    "check_device",
    "compiler_name",
    "Program",
    "SavedCode",
    "to_device",
    "to_numpy",
]
