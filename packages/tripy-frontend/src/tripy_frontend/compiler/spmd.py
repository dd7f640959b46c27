"""A compiled function whose inputs or baked-in data are split across devices becomes one SPMD program.

``program_layouts`` gives the layout of each program argument (runtime inputs, then baked-in data) and checks
that they share one mesh; ``tp.compile`` writes them into the module (``tripy_flatir.sharding.annotate``) and XLA's
SPMD partitioner splits the program. ``place`` puts an argument's data where the program reads it.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

from tripy_backend import memory
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import raise_error
from tripy_flatir.sharding import Layout
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_frontend.compiler.input_info import InputInfo


def program_layouts(
    names: Sequence[str], infos: Sequence[InputInfo], stored: Sequence[Any], constraints: Sequence[Any], where: Any
) -> Optional[List[Optional[Layout]]]:
    """Each argument's layout (None: whole on every device), or None if nothing is split over several devices.
    `stored`: the Storage ops of the baked-in data; `constraints`: the program's ShardingConstraint ops. Errors
    (at `where`) for tensors on different meshes, a dynamic input of a sharded program, and a baked-in result of a
    sharded program (whose split is XLA's choice)."""
    layouts: List[Optional[Layout]] = [info.layout for info in infos]
    origins: List[Any] = [None] * len(infos)
    for op in stored:
        if isinstance(op, ShardedStorage) and op.layout is None:
            raise_error(
                "tripy.compile: the function uses a result of a sharded program as baked-in data; its split "
                "across devices was chosen by the compiler, so this program cannot be told it.",
                where,
                [
                    "Pass it as a runtime input (tripy.InputInfo(..., sharding=...)), or split it with "
                    "tripy.shard first."
                ],
                [op.outputs[0].stack_info],
            )
        layouts.append(op.layout if isinstance(op, ShardedStorage) else None)
        origins.append(op.outputs[0].stack_info)
    for op in constraints:
        layouts.append(op.layout)
        origins.append(op.outputs[0].stack_info)
    split = [(i, lay) for i, lay in enumerate(layouts) if lay is not None and lay.num_devices > 1]
    if not split:
        return None
    first, mesh = split[0][0], (split[0][1].mesh_shape, split[0][1].axis_names)
    for i, layout in split[1:]:
        if (layout.mesh_shape, layout.axis_names) != mesh:
            raise_error(
                f"tripy.compile: {_what(names, first)} and {_what(names, i)} are split over different meshes: "
                f"{_mesh_text(*mesh)} and {_mesh_text(layout.mesh_shape, layout.axis_names)}.",
                where,
                ["A sharded program runs on one mesh: give every sharding the same tripy.Mesh."],
                [o for o in (origins[first], origins[i]) if o is not None],
            )
    for name, info in zip(names, infos):
        if not info.shape_bounds.is_static():
            raise_error(
                f"tripy.compile: input '{name}' has dynamic dims, but the program is sharded across devices.",
                where,
                ["Sharded programs are compiled for one shape; give each dim a single size."],
            )
    shapes = [info.shape_bounds.min for info in infos] + [tuple(op.shape) for op in stored]
    # (every argument gets a layout on the mesh: those not split are whole on each device)
    return [
        lay if lay is not None else Layout(mesh[0], mesh[1], (None,) * len(shape))
        for lay, shape in zip(layouts, shapes)
    ]


def num_devices(layouts: Optional[Sequence[Optional[Layout]]]) -> int:
    return max((lay.num_devices for lay in layouts or () if lay is not None), default=1)


def place(buffer: Any, layout: Optional[Layout], mesh: Layout, device: Device) -> Any:
    """`buffer` as the program over `mesh` reads it: split as `layout` says, or whole on each device (None). Data
    already split that way is passed as is; other data is gathered and split again (through the host)."""
    target = layout if layout is not None else Layout(mesh.mesh_shape, mesh.axis_names, (None,) * len(buffer.shape))
    if memory.has_layout(buffer, target, device):
        return buffer
    return memory.to_devices(memory.to_numpy(buffer), target, device)


def check_device_count(layouts: Sequence[Optional[Layout]], device: Device, headline: str, where: Any) -> None:
    """A saved SPMD program runs on as many devices as its mesh has: an error (at `where`) otherwise."""
    needed = num_devices(layouts)
    available = memory.device_count(device)
    if needed > 1 and needed != available:
        raise_error(
            f"{headline}: it was compiled for a mesh of {needed} devices, but this process has {available}.",
            where,
            [
                f"Set XLA_FLAGS=--xla_force_host_platform_device_count={needed} in the environment before "
                "tripy first runs anything, or compile the function again for this process's devices."
            ],
        )


def mesh_of(layouts: Sequence[Optional[Layout]]) -> Layout:
    """A layout of an SPMD program's arguments that is split over several devices (its mesh is the program's)."""
    return next(lay for lay in layouts if lay is not None and lay.num_devices > 1)


def _what(names: Sequence[str], i: int) -> str:
    return f"input '{names[i]}'" if i < len(names) else f"tensor {i - len(names)} of the program"


def _mesh_text(shape: Sequence[int], axis_names: Sequence[str]) -> str:
    return f"Mesh({dict(zip(axis_names, shape))})"
