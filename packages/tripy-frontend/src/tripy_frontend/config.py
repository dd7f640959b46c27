"""``tp.config``: global settings, with nvtripy's names.

    tp.config.enable_input_validation = False   # skip argument type/dtype checks at API calls

``timing_cache_file_path`` is a TensorRT setting: it is read only where the MLIR-TensorRT GPU backend
compiles; XLA (CPU, and GPU through JAX's CUDA plugin) has no timing cache and ignores it.
``extra_error_information`` is accepted for nvtripy code: tripy's error reports already include every
detail nvtripy adds on request (the user's line, the FlatIR expression, each input's origin).
"""

from __future__ import annotations

import os
import tempfile
from typing import List

timing_cache_file_path: str = os.path.join(tempfile.gettempdir(), "tripy-cache")
"""Path to a TensorRT timing cache file (MLIR-TensorRT GPU backend only)."""

enable_input_validation: bool = True
"""Whether public API functions check their arguments' types and dtypes at the call."""

extra_error_information: List[str] = []
"""Extra information to add to error reports (accepted for nvtripy code; tripy's reports are always complete)."""
