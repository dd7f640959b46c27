"""Which devices can run tripy programs, and the compiler for each."""

from __future__ import annotations

from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException


def check_device(device: Device) -> None:
    """Raise a clear error if no backend can run programs on `device`."""
    if device.kind == "cpu":
        if device.index != 0:
            raise TripyException(f"There is only one CPU device (cpu:0); got '{device}'.")
        return
    if device.kind == "gpu":
        raise TripyException(
            f"Device '{device}' is not available: no GPU backend is installed or no NVIDIA GPU was found. "
            "tripy runs on the CPU by default (tp.device('cpu')).")


def compiler_name(device: Device) -> str:
    return "XLA:CPU" if device.kind == "cpu" else "XLA:GPU"


def platform(device: Device) -> str:
    return "cpu" if device.kind == "cpu" else "cuda"

