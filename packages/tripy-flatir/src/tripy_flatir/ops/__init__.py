"""FlatIR operations, one per file. Each maps 1:1 onto an MLIR operation.

Import an op from its own module (``from tripy_flatir.ops.tanh import TanhOp``) or from here.
"""

import importlib
import pkgutil

from tripy_flatir.ops.base import BaseFlatIROp

__all__ = ["BaseFlatIROp"]

for _m in pkgutil.iter_modules(__path__):
    if _m.name == "base":
        continue
    _mod = importlib.import_module(f"{__name__}.{_m.name}")
    for _name, _obj in vars(_mod).items():
        if isinstance(_obj, type) and issubclass(_obj, BaseFlatIROp) and _obj.__module__ == _mod.__name__:
            globals()[_name] = _obj
            __all__.append(_name)
