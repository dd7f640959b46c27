"""tripy-kernels: native kernels that tripy's backend calls from XLA:CPU programs as XLA FFI custom calls
(``stablehlo.custom_call`` with ``api_version = 4``). It owns the handlers and nothing else: tripy's backend decides
which ops they serve (its ``onednn-convolutions`` pass) and registers them with XLA.

``handlers()``: the handlers, as capsules, by custom-call target name. ``CONVOLUTION``: the float32 convolution's
target (oneDNN; operands as XLA stores them, the layout named by attributes: see ``csrc/convolution.cc``).
``CONVOLUTION_POST``: the same with an elementwise epilogue fused (the ``post`` attribute: ``ADD_CHANNELS``,
``ADD_TENSOR``, ``RELU`` in order, each add reading the next extra operand), computed as oneDNN writes the result.
``GROUP_NORM``: a GroupNorm of float32 channels-last activations ``[N, *spatial, C]`` (operands: them, the ``[C]``
scale and shift, then float32 scalars: what divides the mean's sum, what divides the variance's, eps; attributes
``groups`` and ``silu``, 1 for a SiLU after it), on TBB's threads (``csrc/group_norm.cc``). ``MAX_POOL``: a float32
max pool by oneDNN (padding counts as -inf; attributes ``layout``, the operand's dims in the order ``[N, C,
*spatial]``, then ``window``, ``strides``, ``pad_lo``, ``pad_hi``, ``dilation`` along the spatial dims:
``csrc/pooling.cc``)."""

from __future__ import annotations

from typing import Any, Dict, Sequence

from . import _native

__version__ = "0.1.0"

CONVOLUTION = "tripy_onednn_convolution_f32"
CONVOLUTION_POST = "tripy_onednn_convolution_post_f32"
GROUP_NORM = "tripy_group_norm_f32"
MAX_POOL = "tripy_onednn_max_pool_f32"
ADD_CHANNELS = 1  # + a [C] vector along the result's feature dim (a bias, a BatchNorm's shift)
ADD_TENSOR = 2  # + a tensor of the result's shape (a residual connection)
RELU = 3  # max(x, 0)


def handlers() -> Dict[str, Any]:
    """The XLA FFI handlers (PyCapsules), by custom-call target name."""
    return dict(_native.handlers())


def fast(x: Sequence[int], w: Sequence[int], y: Sequence[int], attributes: Dict[str, Any]) -> bool:
    """Whether oneDNN runs the convolution of an input of shape `x` with weights `w` into `y` (the handler's
    `attributes`, by name; with ``post``, the fused epilogue too) with an optimized kernel; False where it has only a
    reference one (many times slower than XLA's) or none."""
    names = ("lhs", "rhs", "out", "strides", "pad_lo", "pad_hi", "dilation")
    values = (*(attributes[n] for n in names), attributes["groups"], attributes["transposed"])
    return bool(_native.fast(x, w, y, *values, attributes.get("post", ())))


def onednn_version() -> str:
    """The version of the oneDNN library the handlers run on."""
    return str(_native.onednn_version())


def pin(address: int) -> None:
    """Promise that the weights at `address` (a buffer's first byte) stay as they are until `unpin(address)`: the
    handler then uses its laid-out copy of them without reading them again (it fingerprints other weights on every
    call, to see whether they changed). Pins of one address count: each needs its unpin. tripy pins an executable's
    baked-in data (its own copies, never written) for as long as each buffer lives."""
    _native.pin(address)


def unpin(address: int) -> None:
    """Undo one `pin` of `address` (call it before the buffer's memory is freed)."""
    _native.unpin(address)


def pinned() -> int:
    """How many addresses are pinned."""
    return int(_native.pinned())
