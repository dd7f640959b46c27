"""``tp.Stream`` and ``tp.default_stream`` (and ``Executable.stream``, in ``executable.py``): nvtripy's
execution-stream API.

On a GPU a stream is an ordered queue of work. tripy's CPU backend (XLA:CPU) runs a program in the
calling thread by default, and :meth:`Stream.synchronize` waits for nothing. Reading a result (NumPy,
``tolist``, printing) always waits for its program: with ``TRIPY_CPU_ASYNC_DISPATCH=1``, and for a padded call
of a range executable, which was measured returning before XLA had finished its program.
"""

from __future__ import annotations

from typing import Dict, Optional

from tripy_flatir import stack_info as _stack
from tripy_flatir.device import CPU
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api


@public_api(document_under="compile")
class Stream:
    """An execution stream for compiled functions (:attr:`Executable.stream`).

    Args:
        priority: The stream's priority; only 0 is supported, as in nvtripy.

    .. code-block:: python

        stream_a = tp.Stream()
        stream_b = tp.Stream()
        assert stream_a != stream_b

        linear = tp.Linear(2, 3)
        linear.initialize_dummy_parameters()
        compiled_linear = tp.compile(linear, args=[tp.InputInfo((2, 2), dtype=tp.float32)])
        compiled_linear.stream = stream_a
        out = compiled_linear(tp.ones((2, 2), dtype=tp.float32))
        compiled_linear.stream.synchronize()
        assert tp.equal(out, linear(tp.ones((2, 2), dtype=tp.float32)))
    """

    def __init__(self, priority: int = 0) -> None:
        if priority != 0:
            raise_error(
                f"tripy.Stream: priority must be 0, but got {priority}.",
                _stack.capture(),
                ["Stream priorities are not supported (nvtripy has the same limit)."],
            )
        self.device: Device = CPU

    def synchronize(self) -> None:
        """Block until all work queued on this stream is complete (see the module notes for the CPU)."""

    def __str__(self) -> str:
        return f"<Stream(id={id(self)})>"

    __repr__ = __str__


_DEFAULT_STREAMS: Dict[str, Stream] = {}


@public_api(document_under="compile")
def default_stream(device: Optional[Device] = None) -> Stream:
    """The default stream of a device (one per device; the same object on every call).

    Args:
        device: The device; by default, the one tripy runs on (the CPU, unless a GPU backend is used).

    .. code-block:: python

        assert tp.default_stream() is tp.default_stream()
    """
    device = device or CPU
    if device.index != 0:
        raise_error(
            f"tripy.default_stream: only device index 0 has a default stream, but got {device}.", _stack.capture()
        )
    if str(device) not in _DEFAULT_STREAMS:
        stream = Stream()
        stream.device = device
        _DEFAULT_STREAMS[str(device)] = stream
    return _DEFAULT_STREAMS[str(device)]
