"""tripy: a debuggable, Pythonic, functional tensor library for inference.

    import tripy as tp
    out = tp.tanh(tp.full((2, 3), value=0.5))
    print(out)

This package only re-exports the public API registered by ``tripy_frontend``.
"""

import importlib.metadata as _metadata
import difflib as _difflib
from typing import Any as _Any

from tripy_frontend import PUBLIC_API as _PUBLIC_API

globals().update(_PUBLIC_API)
__all__ = sorted(_PUBLIC_API)
# The version is the distribution's (its pyproject.toml), read back at run time: one source.
__version__ = _metadata.version("tripy-inference")


def __getattr__(name: str) -> _Any:
    close = _difflib.get_close_matches(name, __all__, n=1)
    hint = f" Did you mean: 'tripy.{close[0]}'?" if close else ""
    raise AttributeError(f"Module: 'tripy' does not have attribute: '{name}'.{hint}")


def __dir__() -> list:
    return __all__
