"""Errors about a size (an allocation that fails, a shape whose element count overflows) name no operation:
point them at the op with the largest result, which is where the user's too-large shape is."""

from __future__ import annotations

import re
from typing import List, Optional, Tuple
from tripy_flatir.mlir_utils import context

_SIZE_ERROR = re.compile(r"RESOURCE_EXHAUSTED|[Oo]ut of memory|overflow in static extent")
_TENSOR_TYPE = re.compile(r"tensor<((?:[0-9?]+x)*)([a-z]+)(\d+)>")


def largest_op(module_bytes: bytes, message: str) -> Tuple[List[str], List[str]]:
    """For a size error: (a line saying which tensor is largest, [that op's MLIR location]); else ([], [])."""
    if not _SIZE_ERROR.search(message):
        return [], []
    found = _largest(module_bytes)
    if found is None:
        return [], []
    nbytes, type_text, location = found
    return [f"The largest tensor of the program is a {type_text} ({nbytes:,} bytes): too large to allocate."], [
        location
    ]


def _largest(module_bytes: bytes) -> Optional[Tuple[int, str, str]]:
    from jax.extend.mlir import ir

    best: Optional[Tuple[int, str, str]] = None
    with context():
        module = ir.Module.parse(module_bytes)
        for fn in module.body.operations:
            for region in fn.regions:
                for block in region.blocks:
                    for op in block.operations:
                        for result in op.results:
                            m = _TENSOR_TYPE.fullmatch(str(result.type))
                            if m is None:
                                continue
                            n = 1
                            for d in m.group(1).split("x")[:-1]:
                                n *= int(d) if d != "?" else 1
                            nbytes = n * max(int(m.group(3)) // 8, 1)
                            if best is None or nbytes > best[0]:
                                best = (nbytes, str(result.type), str(op.location))
    return best
