"""Which devices can run tripy programs, and which compiler serves each.

CPU programs are compiled by XLA:CPU (embedded in jaxlib). For ``gpu`` devices tripy picks, in order:
MLIR-TensorRT (the ``mlir-tensorrt-jax`` PJRT plugin) when it is installed and sees a GPU, else XLA:GPU
(JAX's CUDA plugin, ``jax[cuda12]`` at the installed jax's version). Set ``TRIPY_GPU_BACKEND=tensorrt``
or ``=xla`` to choose one explicitly.

Error messages name the plugin package itself (``install_command``), not an extra of the meta package: it works
whichever index tripy came from, and never names ``tripy`` (on PyPI an unrelated project; tripy's meta
distribution is ``tripy-inference``, see docs/guides/releasing.rst).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from typing import Optional

from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException
from tripy_backend import _xla

# name -> (PJRT platform, the Python package that provides it, compiler name shown to users, what to install)
GPU_BACKENDS = {
    "tensorrt": ("mlir_tensorrt", "mlir_tensorrt_jax", "MLIR-TensorRT", "mlir-tensorrt-jax>=0.4"),
    "xla": ("cuda", "jax_cuda12_plugin", "XLA:GPU", "jax[cuda12]=={jax}"),
}
ENV_VAR = "TRIPY_GPU_BACKEND"


def install_command(name: str) -> str:
    """The pip command that installs GPU backend `name` next to the jax tripy runs with."""
    import importlib.metadata

    requirement = GPU_BACKENDS[name][3].format(jax=importlib.metadata.version("jax"))
    return f"pip install '{requirement}'"


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def requested_gpu_backend() -> Optional[str]:
    choice = os.environ.get(ENV_VAR, "").strip().lower()
    if choice and choice not in GPU_BACKENDS:
        raise TripyException(f"{ENV_VAR}={choice!r} is not a GPU backend; use one of: {', '.join(GPU_BACKENDS)}.")
    return choice or None


@functools.lru_cache(maxsize=None)
def _usable(name: str) -> bool:
    platform_name, package, _, _ = GPU_BACKENDS[name]
    return _installed(package) and _xla.platform_available(platform_name)


def gpu_backend() -> Optional[str]:
    """The GPU backend to use ('tensorrt' or 'xla'), or None if none can run here."""
    requested = requested_gpu_backend()
    if requested is not None:
        return requested if _usable(requested) else None
    return next((name for name in GPU_BACKENDS if _usable(name)), None)


def check_device(device: Device) -> None:
    """Raise a clear error if no backend can run programs on `device`."""
    if device.kind == "cpu":
        if device.index != 0:
            raise TripyException(f"There is only one CPU device (cpu:0); got '{device}'.")
        return
    name = gpu_backend()
    if name is None:
        requested = requested_gpu_backend()
        if requested is not None:
            _, package, compiler, _ = GPU_BACKENDS[requested]
            why = f"{ENV_VAR}={requested} asks for {compiler}, but " + (
                "no NVIDIA GPU is visible to it."
                if _installed(package)
                else f"it is not installed: {install_command(requested)}"
            )
        else:
            why = (
                "no GPU backend is installed or no NVIDIA GPU was found. Install one: "
                f"{install_command('tensorrt')} (MLIR-TensorRT; needs CUDA 13 and TensorRT 10) or "
                f"{install_command('xla')} (XLA:GPU)."
            )
        raise TripyException(
            f"Device '{device}' is not available: {why} tripy runs on the CPU by default (tp.device('cpu'))."
        )
    count = len(_xla.client(GPU_BACKENDS[name][0]).local_devices())
    if device.index >= count:
        raise TripyException(
            f"Device '{device}' does not exist: {GPU_BACKENDS[name][2]} sees {count} GPU(s) (gpu:0 to gpu:{count - 1})."
        )


def compiler_name(device: Device) -> str:
    if device.kind == "cpu":
        return "XLA:CPU"
    name = gpu_backend()
    return GPU_BACKENDS[name][2] if name else "none"


def platform(device: Device) -> str:
    if device.kind == "cpu":
        return "cpu"
    name = gpu_backend()
    if name is None:
        check_device(device)
    return GPU_BACKENDS[name or "xla"][0]


def configure_tensorrt(builder_optimization_level: int = 3, extra_flags: str = "") -> None:
    """Options for MLIR-TensorRT's engine builder (higher levels build slower, run faster). Must be
    called before the first GPU program is compiled: the plugin reads them when it starts."""
    if not 0 <= builder_optimization_level <= 5:
        raise TripyException(f"builder_optimization_level must be in [0, 5], but got {builder_optimization_level}.")
    if GPU_BACKENDS["tensorrt"][0] in _xla.started_platforms():
        raise TripyException("configure_tensorrt() must be called before the first GPU program is compiled.")
    flags = f"--tensorrt-builder-opt-level={builder_optimization_level}"
    os.environ["MLIR_TRT_FLAGS"] = f"{flags} {extra_flags}".strip()


def join_processes(coordinator: str, num_processes: int, process_id: int, host: str) -> None:
    """This process's CPU devices join those of the other processes (see ``_xla.join_processes``)."""
    _xla.join_processes(coordinator, num_processes, process_id, host)
