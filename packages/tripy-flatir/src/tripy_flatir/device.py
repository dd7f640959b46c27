"""Devices: where a tensor's data lives and where a program runs."""

from __future__ import annotations
from tripy_flatir.exceptions import TripyException


class device:
    """A device, written ``"cpu"``, ``"gpu"`` or ``"gpu:1"``.

    This is plain data; whether a device is usable is decided by the backend.
    """

    __slots__ = ("kind", "index")

    KINDS = ("cpu", "gpu")

    def __init__(self, device: str) -> None:

        if not isinstance(device, str):
            raise TripyException(f"device must be a string like 'cpu' or 'gpu:0', but got {type(device).__name__}.")
        kind, _, index = device.partition(":")
        kind = kind.strip().lower()
        if kind not in self.KINDS:
            raise TripyException(
                f"Unknown device kind '{kind}' in '{device}'. Use one of: {', '.join(self.KINDS)} "
                "(optionally with an index, e.g. 'gpu:1')."
            )
        if index and not index.isdigit():
            raise TripyException(f"Device index must be a non-negative integer, but got '{index}' in '{device}'.")
        self.kind = kind
        self.index = int(index) if index else 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) and (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    def __str__(self) -> str:
        return f"{self.kind}:{self.index}"

    def __repr__(self) -> str:
        return f"device(kind={self.kind}, index={self.index})"


CPU = device("cpu")
