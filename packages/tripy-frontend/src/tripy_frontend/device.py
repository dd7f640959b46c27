"""``tp.device``: a device that the backend can actually run programs on."""

from __future__ import annotations

from tripy_backend.devices import check_device, compiler_name
from tripy_flatir import stack_info as _stack
from tripy_flatir.device import device as _Device
from tripy_flatir.exceptions import TripyException, raise_error
from tripy_frontend.public_names import public_class


@public_class(document_under="dtypes_devices")
class device(_Device):
    """A device: ``tp.device("cpu")``, ``tp.device("gpu")``, ``tp.device("gpu:1")``.

    Creating a device that no installed backend can use raises an error that says what to install.

    .. code-block:: python

        cpu = tp.device("cpu")
        assert str(cpu) == "cpu:0"
    """

    __slots__ = ()

    def __init__(self, device: str) -> None:
        super().__init__(device)
        try:
            check_device(self)
        except TripyException as e:  # report it at the user's line
            raise_error(str(e), _stack.capture())

    def __repr__(self) -> str:
        return f"device(kind={self.kind}, index={self.index}, compiler={compiler_name(self)})"
