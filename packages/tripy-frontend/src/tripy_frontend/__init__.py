"""tripy frontend: Tensor, operations, modules, compile, error reports.

Every public name is registered in ``tripy_frontend.export.PUBLIC_API``; ``tripy`` re-exports them.
Each op lives in its own module under ``tripy_frontend.ops``; all of them are imported here, and the
Tensor methods they register are attached to ``Tensor`` once they are all loaded.
"""

import importlib.metadata as _metadata
import importlib as _importlib
import importlib.util
import pkgutil as _pkgutil

from tripy_flatir import dtypes as _dtypes
from tripy_flatir.exceptions import TripyException, TripyWarning
from tripy_flatir.logging import logger
from tripy_frontend.export import public_api
from tripy_frontend.public_names import DOCUMENT_UNDER, PUBLIC_API
from tripy_frontend.tensor import Tensor
from tripy_frontend import device as _device_module  # noqa: F401
from tripy_frontend import distributed as _distributed  # noqa: F401
from tripy_frontend import sharding as _sharding  # noqa: F401
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tracebacks import api_boundary

# The version is the distribution's (its pyproject.toml), read back at run time: one source.
__version__ = _metadata.version("tripy-frontend")


def _load_submodules(package: str) -> None:
    pkg = _importlib.import_module(package)
    for m in _pkgutil.iter_modules(pkg.__path__):
        _importlib.import_module(f"{package}.{m.name}")


for _pkg in ("tripy_frontend.ops", "tripy_frontend.nn", "tripy_frontend.compiler"):
    if _importlib.util.find_spec(_pkg) is not None:
        _load_submodules(_pkg)

for _name, _method in TENSOR_METHOD_REGISTRY.methods.items():
    setattr(Tensor, _name, api_boundary(_method))
# Tensor's own entry points that can raise a report (converting, printing) are API boundaries too (eval,
# __init__ and __dlpack__ are ones themselves: they are on the eager hot path, where a wrapper costs a call).
for _name in ("tolist", "__array__", "__bool__", "__int__", "__float__", "__index__", "__repr__", "__str__"):
    setattr(Tensor, _name, api_boundary(vars(Tensor)[_name]))

for _dt in _dtypes.ALL_DTYPES:
    PUBLIC_API[_dt.name] = _dt
PUBLIC_API["dtype"] = _dtypes.dtype
PUBLIC_API["floating"] = _dtypes.floating
PUBLIC_API["integer"] = _dtypes.integer
PUBLIC_API["config"] = _importlib.import_module("tripy_frontend.config")
PUBLIC_API["types"] = _importlib.import_module("tripy_frontend.types")
PUBLIC_API["logger"] = logger
PUBLIC_API["TripyException"] = TripyException
PUBLIC_API["TripyWarning"] = TripyWarning
# The reference pages of the names defined below the frontend (or modules), which register here.
DOCUMENT_UNDER.update({name: "dtypes_devices" for name in ("dtype", "floating", "integer")})
DOCUMENT_UNDER.update({dt.name: "dtypes_devices" for dt in _dtypes.ALL_DTYPES})
DOCUMENT_UNDER.update(
    config="configuration", types="configuration", logger="logging", TripyException="logging", TripyWarning="logging"
)

__all__ = ["PUBLIC_API", "public_api", "Tensor", "TripyException", "TripyWarning", "logger"]
