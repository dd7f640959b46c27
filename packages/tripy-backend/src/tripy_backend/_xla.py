"""The one adapter between tripy and jaxlib's XLA/PJRT runtime.

Everything that touches jaxlib's runtime API (clients, compilation, buffers, shape refinement) goes
through here, so a jax/jaxlib upgrade changes this file only.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np


_started: set = set()


@functools.lru_cache(maxsize=None)
def client(platform: str = "cpu") -> Any:
    import jax.extend.backend as jax_backend

    c = jax_backend.get_backend(platform)
    _started.add(platform)
    return c


def started_platforms() -> set:
    """PJRT platforms whose clients have been created in this process."""
    return set(_started)


def platform_available(platform: str) -> bool:
    try:
        client(platform)
        return True
    except Exception:
        return False


def device_handle(platform: str, index: int) -> Any:
    devices = client(platform).local_devices()
    return devices[index]


def compile(module_bytes: bytes, platform: str, index: int) -> Any:
    """Compile a (statically shaped) StableHLO module; returns a loaded executable."""
    import jaxlib._jax as jx

    c = client(platform)
    dev = device_handle(platform, index)
    options = jx.CompileOptions()
    if hasattr(c, "compile_and_load"):
        return c.compile_and_load(module_bytes, jx.DeviceList((dev,)), options)
    return c.compile(module_bytes, options)  # older jaxlib


def refine_shapes(module_bytes: bytes) -> bytes:
    """StableHLO shape refinement: propagate the static argument types through shape arithmetic."""
    import jaxlib._jax as jx

    out = jx.mlir.refine_polymorphic_shapes(module_bytes, enable_shape_assertions=True, validate_static_shapes=True,
                                            enable_shardy=False)
    return out if isinstance(out, bytes) else out.encode()


def execute(executable: Any, buffers: Sequence[Any]) -> list:
    return executable.execute(list(buffers))


def to_device(array: np.ndarray, platform: str, index: int) -> Any:
    c = client(platform)
    return c.buffer_from_pyval(array, device_handle(platform, index))


def runtime_error_types() -> tuple:
    import jaxlib._jax as jx

    return (jx.XlaRuntimeError,) if hasattr(jx, "XlaRuntimeError") else (RuntimeError,)


def xla_version() -> str:
    import jaxlib

    return f"jaxlib-{jaxlib.__version__}"
