"""tripy's optional native kernels (the ``tripy-kernels`` distribution: oneDNN convolutions and max pools, and a
GroupNorm, as XLA FFI handlers): whether they are installed and in use, and their registration with XLA:CPU (once per
process, through ``_xla``).

The ``onednn-convolutions``, ``onednn-pooling`` and ``group-norms`` passes use them when ``enabled()``;
``TRIPY_KERNELS=0`` turns them off (programs then compile to XLA's own ops). A program's compiled code records which kernels it calls (``cpu_plan.fingerprint``
names ``tag()``), so that saved code which needs them is not loaded where they are missing (``missing_error``)."""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from typing import Any, Dict, Optional, Sequence

from tripy_flatir.exceptions import TripyWarning
from tripy_backend import _xla

try:  # (optional: a native package; `scripts/kernels-deps` builds it)
    import tripy_kernels
except ImportError:
    tripy_kernels = None  # type: ignore[assignment]

_kernels: Optional[Any] = tripy_kernels  # (None once XLA refuses it)

ENV_VAR = "TRIPY_KERNELS"
CONVOLUTION = "tripy_onednn_convolution_f32"
CONVOLUTION_POST = "tripy_onednn_convolution_post_f32"  # (with a fused epilogue: ``post``, these codes)
GROUP_NORM = "tripy_group_norm_f32"  # (a GroupNorm with its scale and shift, and a SiLU: the ``group-norms`` pass)
MAX_POOL = "tripy_onednn_max_pool_f32"  # (a max pool: the ``onednn-pooling`` pass)
ADD_CHANNELS, ADD_TENSOR, RELU = 1, 2, 3
NONE = "none"
_registered = False
_lock = threading.Lock()


def installed() -> Optional[Any]:
    """The ``tripy_kernels`` module, registered with XLA:CPU; None if it is not installed, or XLA refuses it (built
    against another jaxlib's XLA FFI: a warning says so, once)."""
    global _registered, _kernels
    if _kernels is None:
        return None
    with _lock:
        if not _registered:
            try:
                for name, capsule in _kernels.handlers().items():
                    _xla.register_cpu_custom_call(name, capsule)
            except Exception as e:
                _kernels = None
                message = f"tripy-kernels is installed but XLA does not take its kernels ({e}); rebuild it for this jaxlib (scripts/kernels-deps)"
                warnings.warn(message, TripyWarning, stacklevel=2)
                return None
            _registered = True
    return _kernels


def enabled() -> bool:
    """Whether programs compiled now call the kernels: installed, and not turned off (``TRIPY_KERNELS=0``)."""
    return os.environ.get(ENV_VAR, "1") != "0" and installed() is not None


def tag() -> str:
    """What compiled code made now may call: ``tripy-kernels <version>``, or ``none``."""
    return f"tripy-kernels {_kernels.__version__}" if enabled() and _kernels is not None else NONE


def has(target: str) -> bool:
    """Whether the installed kernels have the handler `target` (``CONVOLUTION_POST``, ``GROUP_NORM``, ``MAX_POOL``:
    a build from before one has none of it)."""
    return _kernels is not None and target in _kernels.handlers()


def slow(x: Sequence[int], w: Sequence[int], y: Sequence[int], attributes: Dict[str, Any]) -> bool:
    """Whether the installed kernels would run this convolution (shapes `x`, `w` -> `y`; the handler's
    `attributes`) with oneDNN's reference kernel only: many times slower than XLA's, so it stays XLA's."""
    fast = getattr(_kernels, "fast", None)  # (a build from before the kernels could say)
    return fast is not None and not fast(x, w, y, attributes)


def missing_error(saved_tag: str) -> Optional[str]:
    """Why saved code that calls the kernels `saved_tag` (a ``tag()``) cannot load here; None if it can."""
    if saved_tag == NONE or installed() is not None:
        return None
    return (
        f"its compiled code calls tripy's native kernels ({saved_tag}: oneDNN convolutions and pools, GroupNorms), "
        "which are not installed here. Install them (scripts/kernels-deps in a tripy checkout, or pip install "
        "./native/tripy-kernels), or load it with trust_compiled_code=False to compile its StableHLO without them."
    )


def pin(buffers: Sequence[Any]) -> None:
    """Tell the kernels that these CPU buffers (an executable's baked-in data: tripy's own copies, which nothing
    writes) hold the same contents for as long as they live, so that a convolution reads its weights' laid-out copy
    without fingerprinting them on every call (``tripy_kernels.pin``); each is unpinned as it is freed."""
    k = installed() if enabled() else None
    if k is None or not hasattr(k, "pin"):  # (an older tripy-kernels: every call fingerprints)
        return
    for b in buffers:
        try:
            devices = b.devices()
            if len(devices) != 1 or next(iter(devices)).platform != "cpu":
                continue
            address = b.unsafe_buffer_pointer()
        except (AttributeError, TypeError, ValueError, RuntimeError):  # (not a single-device array)
            continue
        k.pin(address)
        weakref.finalize(b, k.unpin, address)
