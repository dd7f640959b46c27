"""Opening a saved executable for ``Executable.load`` (or a pickled one's bytes, for unpickling): reading and
validating the file (``artifact.py``, the format), the device and the program, each failure as a report naming
the file and why."""

from __future__ import annotations

import os
from typing import Any, List, NamedTuple, Optional

from tripy_backend import check_device, memory, portable
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException, raise_error
from tripy_flatir.sharding import Layout
from tripy_frontend.compiler import artifact, spmd


class Loaded(NamedTuple):
    """A saved executable, validated, with its baked-in data on its device."""

    contents: artifact.Contents
    module_bytes: bytes  # the shape-polymorphic program (MLIR bytecode)
    device: Device
    constants: List[Any]  # device buffers
    layouts: Optional[List[Optional[Layout]]]  # each argument's split, for an SPMD program (else None)


def file_path(path: Any, what: str, where: Any) -> str:
    """`path` (a string or path-like) as a string, or a report for `what` (e.g. "tripy.Executable.save")."""
    if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
        raise_error(f"{what}: path must be a string or path, but got {type(path).__name__}.", where)
    return os.fsdecode(os.fspath(path))


def load(path: str, where: Any) -> Loaded:
    """Read and validate the saved executable at `path`; a report naming it and why if it cannot be loaded."""
    headline = f"tripy.Executable.load: cannot load '{path}'"
    try:
        contents = artifact.read(path)
    except FileNotFoundError:
        raise_error(f"{headline}: the file does not exist.", where)
    except IsADirectoryError:
        raise_error(f"{headline}: it is a directory.", where)
    except OSError as e:
        raise_error(f"{headline}: {e.strerror or e}.", where)
    except ValueError as e:  # FormatError and malformed values
        raise_error(f"{headline}: {e}.", where)
    return _open(contents, headline, where)


def load_bytes(data: Any, where: Any) -> Loaded:
    """Validate a saved executable held in memory (a pickled one's bytes); a report saying why if it cannot be
    loaded."""
    headline = "tripy.Executable: cannot unpickle the executable"
    if not isinstance(data, bytes):
        raise_error(f"{headline}: its data must be bytes, but got {type(data).__name__}.", where)
    try:
        contents = artifact.from_bytes(data)
    except ValueError as e:  # FormatError and malformed values
        raise_error(f"{headline}: {e}.", where)
    return _open(contents, headline, where)


def _open(contents: artifact.Contents, headline: str, where: Any) -> Loaded:
    """The program and device of validated `contents`, checked, with the baked-in data on that device."""
    try:
        device = Device(contents.device)
        check_device(device)
        module_bytes = portable.deserialize(contents.program)
        artifact.check_signature(module_bytes, contents)
    except TripyException as e:
        raise_error(f"{headline}: {e}", where)
    except Exception as e:
        raise_error(
            f"{headline}: the program is corrupted or was written by an incompatible version "
            f"(StableHLO {contents.stablehlo_version}): {e}.",
            where,
        )
    layouts = [info.layout for info in contents.infos] + contents.constant_layouts
    spmd.check_device_count(layouts, device, headline, where)
    constants = [
        memory.to_device(c, device) if lay is None or lay.num_devices == 1 else memory.to_devices(c, lay, device)
        for c, lay in zip(contents.constants, contents.constant_layouts)
    ]
    return Loaded(contents, module_bytes, device, constants, layouts if spmd.num_devices(layouts) > 1 else None)
