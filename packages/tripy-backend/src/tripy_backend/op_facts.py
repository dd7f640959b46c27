"""What the backend's passes know about StableHLO ops, by MLIR op name, read from the FlatIR ops that emit them
(each declares its facts with itself, ``tripy_flatir.ops.base.BaseFlatIROp``): one list, whatever pass asks."""

from __future__ import annotations

from typing import Dict, List, Tuple, Type

import tripy_flatir.ops as flat_ops
from tripy_flatir.ops.base import BaseFlatIROp

_OPS: List[Type[BaseFlatIROp]] = [
    cls
    for cls in vars(flat_ops).values()
    if isinstance(cls, type) and issubclass(cls, BaseFlatIROp) and cls.mlir_op is not None
]

# Ops whose result element i is a function of their operands' elements i only (one shape for all).
ELEMENTWISE = frozenset(cls.mlir_name() for cls in _OPS if cls.elementwise)

# Which operands of a dynamic op give its result shape (not data).
SHAPE_OPERANDS: Dict[str, Tuple[int, ...]] = {cls.mlir_name(): cls.shape_operands for cls in _OPS if cls.shape_operands}

# Ops a bounded program cannot run on padded operands: the FlatIR ops that say so, and ops no FlatIR op emits
# (control flow, a plugin's custom_call, scatters and dynamic slices from a module built elsewhere), which XLA's
# dynamic padder gets wrong or crashes on.
NOT_BOUNDED = frozenset(
    {cls.mlir_name() for cls in _OPS if not cls.bounded}
    | {
        "stablehlo.scatter",
        "stablehlo.while",
        "stablehlo.if",
        "stablehlo.case",
        "stablehlo.custom_call",
        "stablehlo.select_and_scatter",
        "stablehlo.dynamic_update_slice",
        "stablehlo.dynamic_slice",
    }
)
