"""tripy-kernels: native kernels that tripy's backend calls from XLA:CPU programs as XLA FFI custom calls
(``stablehlo.custom_call`` with ``api_version = 4``). It owns the handlers and nothing else: tripy's backend decides
which ops they serve (its ``onednn-convolutions`` pass) and registers them with XLA.

``handlers()``: the handlers, as capsules, by custom-call target name. ``CONVOLUTION``: the float32 convolution's
target (oneDNN; operands as XLA stores them, the layout named by attributes: see ``csrc/convolution.cc``)."""

from __future__ import annotations

from typing import Any, Dict

from . import _native

__version__ = "0.1.0"

CONVOLUTION = "tripy_onednn_convolution_f32"


def handlers() -> Dict[str, Any]:
    """The XLA FFI handlers (PyCapsules), by custom-call target name."""
    return dict(_native.handlers())


def onednn_version() -> str:
    """The version of the oneDNN library the handlers run on."""
    return str(_native.onednn_version())
