"""Compile a StableHLO module for a device."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from tripy_flatir.device import device as Device
from tripy_flatir.mlir_utils import bytecode
from tripy_backend.program import Program, SavedCode


module_to_bytecode = bytecode


def compile(module: Any, input_shapes: Sequence[Tuple[int, ...]], device: Device,
            optimization_level: int = 3, name: str = "program", saved: Optional[SavedCode] = None,
            num_devices: int = 1, runtime_inputs: Optional[int] = None) -> Program:
    """Compile an MLIR module (``ir.Module``) or its bytecode. `input_shapes` uses -1 for dynamic dims.
    `optimization_level` (0-5): on XLA:CPU, 4 and 5 trade ~1.6x longer compiles for faster programs
    (XLA's classic CPU runtime, which sends matrix products to optimized GEMM kernels). `saved`: compiled
    code from ``Program.saved_code`` (of a saved executable), loaded instead of compiled where it fits.
    `num_devices` > 1: an SPMD program (static shapes; see ``tripy_flatir.sharding.annotate``). `runtime_inputs`:
    how many of the inputs are the caller's (the rest are baked-in data), for error messages."""
    data = module if isinstance(module, (bytes, bytearray)) else module_to_bytecode(module)
    program = Program(bytes(data), input_shapes, device, optimization_level, name, saved, num_devices)
    program.runtime_inputs = runtime_inputs
    return program
