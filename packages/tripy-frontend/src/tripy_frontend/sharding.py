"""tp.Mesh and tp.Sharding: devices with named axes, and how a tensor is split over them.

They describe; ``tp.shard`` (stored data), ``tp.InputInfo(..., sharding=...)`` (a compiled function's input)
and ``tp.compile`` (one SPMD program for the mesh) act on the description. The backend's form of a sharding
is ``tripy_flatir.sharding.Layout``; this module checks the user's description and names the user's line.
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Optional, Sequence, Tuple

from tripy_backend import memory
from tripy_flatir import stack_info as _stack
from tripy_flatir.device import CPU
from tripy_flatir.exceptions import raise_error
from tripy_flatir.sharding import Layout
from tripy_frontend.export import public_api

_DEVICE_FLAG = "XLA_FLAGS=--xla_force_host_platform_device_count={n}"


@public_api(document_under="sharding")
class Mesh:
    """A grid of devices with a name for each axis: the first ``prod(shape)`` devices of the CPU, row-major.

    On one machine, XLA's CPU platform has as many devices as the environment variable
    ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` says (1 without it); it is read once, when tripy
    first runs something, so set it before that. Across processes (see the *Sharding across devices* guide)
    the devices are those of every process, numbered by process.

    Args:
        shape: The number of devices along each axis.
        axis_names: A distinct name for each axis.

    .. code-block:: python

        mesh = tp.Mesh((1,), ("model",))
        assert mesh.shape == (1,) and mesh.axis_names == ("model",) and mesh.size == 1
    """

    __slots__ = ("shape", "axis_names")

    def __init__(self, shape: Sequence[int], axis_names: Sequence[str]) -> None:
        where = _stack.capture()
        shape, axis_names = tuple(shape), tuple(axis_names)
        if not shape or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in shape):
            raise_error(f"tripy.Mesh: shape must be one or more positive ints, but got {shape}.", where)
        if len(axis_names) != len(shape) or len(set(axis_names)) != len(axis_names):
            raise_error(
                f"tripy.Mesh: axis_names must give a distinct name to each of the {len(shape)} axes, but got "
                f"{axis_names}.",
                where,
            )
        available = memory.device_count(CPU)
        if math.prod(shape) > available:
            raise_error(
                f"tripy.Mesh: a mesh of shape {shape} needs {math.prod(shape)} devices, but the CPU has {available}.",
                where,
                [
                    f"Set {_DEVICE_FLAG.format(n=math.prod(shape))} in the environment before tripy first runs "
                    "anything (it is read once, when the runtime starts)."
                ],
            )
        self.shape: Tuple[int, ...] = shape
        self.axis_names: Tuple[str, ...] = axis_names

    @property
    def size(self) -> int:
        """The number of devices."""
        return math.prod(self.shape)

    @classmethod
    def _saved(cls, shape: Sequence[int], axis_names: Sequence[str]) -> "Mesh":
        """A mesh from a saved executable (not checked against this process's devices: loading does that)."""
        mesh = cls.__new__(cls)
        mesh.shape, mesh.axis_names = tuple(shape), tuple(axis_names)
        return mesh

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self.shape == other.shape and self.axis_names == other.axis_names

    def __hash__(self) -> int:
        return hash((self.shape, self.axis_names))

    def __repr__(self) -> str:
        return f"Mesh({dict(zip(self.axis_names, self.shape))})"


@public_api(document_under="sharding")
class Sharding:
    """How a tensor is split over a :class:`Mesh`: for each dim, the name of the mesh axis that splits it, or
    None (the dim is whole on every device). A mesh axis that splits no dim holds a copy on each of its devices.

    Args:
        mesh: The devices.
        spec: One entry per dim of the tensor: a mesh axis name or None.

    .. code-block:: python

        mesh = tp.Mesh((1,), ("model",))
        columns = tp.Sharding(mesh, (None, "model"))  # a matrix split by columns
        assert columns.spec == (None, "model")
    """

    __slots__ = ("mesh", "spec")

    def __init__(self, mesh: Mesh, spec: Sequence[Optional[str]]) -> None:
        where = _stack.capture()
        spec = tuple(spec)
        for axis in spec:
            if axis is not None and axis not in mesh.axis_names:
                close = difflib.get_close_matches(str(axis), mesh.axis_names, n=1)
                raise_error(
                    f"tripy.Sharding: {axis!r} is not an axis of {mesh}."
                    + (f" Did you mean {close[0]!r}?" if close else ""),
                    where,
                    [f"The mesh's axes are {mesh.axis_names}; use None for a dim that is not split."],
                )
        used = [a for a in spec if a is not None]
        if len(set(used)) != len(used):
            raise_error(
                f"tripy.Sharding: spec {spec} splits two dims along the same mesh axis.",
                where,
                ["Each mesh axis can split at most one dim of a tensor."],
            )
        self.mesh = mesh
        self.spec: Tuple[Optional[str], ...] = spec

    def _layout(self, shape: Sequence[int], what: str, where: Any) -> Layout:
        """The backend's form of this sharding for a tensor of `shape`; an error at `where` (naming `what`) if the
        rank differs or a split dim does not divide evenly."""
        if len(shape) != len(self.spec):
            raise_error(
                f"{what}: {self} has {len(self.spec)} entries, but the tensor has rank {len(shape)} "
                f"(shape {list(shape)}).",
                where,
                ["Give one entry per dim: a mesh axis name or None."],
            )
        layout = Layout(self.mesh.shape, self.mesh.axis_names, self.spec)
        for d, size in enumerate(shape):
            parts = layout.parts(d)
            if size % parts:
                raise_error(
                    f"{what}: dim {d} of shape {list(shape)} is {size}, which the mesh axis "
                    f"{self.spec[d]!r} ({parts} devices) does not divide evenly.",
                    where,
                    [f"A split dim must be a multiple of its mesh axis's size ({parts})."],
                )
        return layout

    @classmethod
    def _of(cls, layout: Layout) -> "Sharding":
        sharding = cls.__new__(cls)
        sharding.mesh, sharding.spec = Mesh._saved(layout.mesh_shape, layout.axis_names), layout.spec
        return sharding

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sharding) and self.mesh == other.mesh and self.spec == other.spec

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    def __repr__(self) -> str:
        return f"Sharding({self.mesh}, {self.spec})"
