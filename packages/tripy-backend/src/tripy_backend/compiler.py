"""``Compiler``: compiles static StableHLO modules for one device, the way every program of a ``Program`` is
compiled (a static program, each bucket of a range, each specialization): the ``XLA`` passes of the pipeline,
then the compiler through the disk cache, logged on the ``compile`` topic (what, why, how long) with a progress
line, and a compiler error reported against the user's code through the ops' locations."""

from __future__ import annotations

import time
from typing import Any, Dict, Tuple, Union

from tripy_flatir import locations
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException
from tripy_flatir.logging import logger
from tripy_backend import _xla, disk_cache, pipeline, size_errors
from tripy_backend.devices import compiler_name, platform


class Compiler:
    """Compiles for `device` at `optimization_level` (`num_devices` > 1: an SPMD program); `name` is the
    program's in the log; `source` (bytecode) is the module errors are reported against."""

    def __init__(self, device: Device, optimization_level: int, name: str, num_devices: int, source: bytes) -> None:
        self.device = device
        self.optimization_level = optimization_level
        self.name = name
        self.num_devices = num_devices
        self.source = source
        # Each program loaded from bytes (a saved executable, a disk cache entry), with those bytes, by id: `code_of`
        # hands them back, because XLA:CPU serializes a deserialized program without its runtime helpers' code (a
        # tanh's, say), and those bytes fail to load ("Function wrapped_tanh not found"). An entry holds its
        # program, so the id is not reused while it lives.
        self._loaded: Dict[int, Tuple[Any, bytes]] = {}

    def compile(self, module_bytes: bytes, why: str) -> Any:
        """The compiled program (jaxlib's executable) for the static module `module_bytes`; `why` says in the log
        which program of the plan it is."""
        start = time.perf_counter()
        plat = platform(self.device)
        # (Says what is compiling as it starts; a progress bar on a terminal if it takes over a second.)
        with logger.progress(f"{compiler_name(self.device)}: {self.name}", 1) as progress:
            progress.step_started(f"compiling ({why})")
            try:
                prepared, options = pipeline.for_xla(module_bytes, plat, self.optimization_level, self.name)
                exe, loaded = disk_cache.compile(
                    prepared,
                    options,
                    plat,
                    self.device.index,  # (plain if it is off)
                    optimization_level=self.optimization_level,
                    num_devices=self.num_devices,
                )
            except Exception as e:  # compiler errors: mapped to user code through the ops' locations
                raise size_error(
                    self.source, f"{compiler_name(self.device)} failed to compile the program", str(e)
                ) from None
            progress.step_done()
        if loaded is not None:
            self._loaded[id(exe)] = (exe, loaded)
        logger.log(lambda: f"[{compiler_name(self.device)}] compiled in {time.perf_counter() - start:.4f} s", "timing")
        logger.log(
            lambda: (
                f"[compile] {compiler_name(self.device)}: {self.name} ({why}) in {time.perf_counter() - start:.3f} s"
            ),
            "compile",
        )
        return exe

    def load(self, data: bytes) -> Any:
        """The compiled program saved as `data` (``code_of``'s bytes, on the same compiler and host)."""
        exe = _xla.deserialize_executable(data, platform(self.device), self.device.index, self.num_devices)
        self._loaded[id(exe)] = (exe, data)
        return exe

    def code_of(self, exe: Any) -> bytes:
        """The compiled program `exe` as bytes that ``load`` takes: the bytes it was loaded from, if it was."""
        loaded = self._loaded.get(id(exe))
        if loaded is not None and loaded[0] is exe:
            return loaded[1]
        return _xla.serialize_executable(exe, platform(self.device))  # type: ignore[no-any-return]


def size_error(module_bytes: bytes, headline: str, error: Union[str, Exception]) -> TripyException:
    """An error report; one about a size (which names no op) is located at the largest tensor."""
    message = str(error)
    extra, located_at = size_errors.largest_op(module_bytes, message)
    return TripyException(locations.report(headline, [message, *extra], located_at))
