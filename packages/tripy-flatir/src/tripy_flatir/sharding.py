"""How a tensor is laid out over a mesh of devices, and the SPMD annotations that say so in StableHLO.

A ``Layout`` is a device mesh (its shape and axis names, devices numbered row-major) and, for each dim of
one tensor, the mesh axis that splits it (or None: that dim is whole on every device). Mesh axes that split
no dim replicate the tensor along them. ``annotate`` writes a module's layouts as GSPMD annotations
(``mhlo.sharding`` on the arguments, ``mhlo.num_partitions`` on the module), which XLA's SPMD partitioner
reads: it splits the program into one per device and inserts the communication (all-gathers, all-reduces)
that the layouts need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from tripy_flatir import dtypes
from tripy_flatir.mlir_utils import context, ir, main_function


@dataclass(frozen=True)
class Layout:
    mesh_shape: Tuple[int, ...]
    axis_names: Tuple[str, ...]
    spec: Tuple[Optional[str], ...]  # per tensor dim: the mesh axis that splits it, or None

    @property
    def num_devices(self) -> int:
        return int(np.prod(self.mesh_shape))

    def parts(self, dim: int) -> int:
        """Into how many pieces `dim` is split."""
        axis = self.spec[dim]
        return 1 if axis is None else self.mesh_shape[self.axis_names.index(axis)]

    def is_replicated(self) -> bool:
        return all(self.parts(d) == 1 for d in range(len(self.spec)))

    def gspmd(self) -> str:
        """The GSPMD sharding text, e.g. ``{devices=[1,2]0,1}``: the tile counts per dim (then the
        replication count, if some mesh axis splits no dim) and the devices in tile order."""
        if self.is_replicated():
            return "{replicated}"
        used = [self.axis_names.index(a) for a in self.spec if a is not None]
        unused = [i for i in range(len(self.mesh_shape)) if i not in used]
        order = np.arange(self.num_devices).reshape(self.mesh_shape).transpose(used + unused).ravel()
        tiles = [self.parts(d) for d in range(len(self.spec))]
        replicas = int(np.prod([self.mesh_shape[i] for i in unused]))
        devices = ",".join(str(int(i)) for i in order)
        if replicas > 1:
            return f"{{devices=[{','.join(map(str, tiles + [replicas]))}]{devices} last_tile_dim_replicate}}"
        return f"{{devices=[{','.join(map(str, tiles))}]{devices}}}"

    def to_json(self) -> Any:
        return {"mesh_shape": list(self.mesh_shape), "axis_names": list(self.axis_names), "spec": list(self.spec)}

    @classmethod
    def from_json(cls, data: Any) -> "Layout":
        """Rebuild from ``to_json``; raises ValueError on malformed data."""
        try:
            layout = cls(
                tuple(int(n) for n in data["mesh_shape"]),
                tuple(str(a) for a in data["axis_names"]),
                tuple(None if a is None else str(a) for a in data["spec"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"invalid sharding: {e}") from None
        if len(layout.mesh_shape) != len(layout.axis_names) or any(
            a is not None and a not in layout.axis_names for a in layout.spec
        ):
            raise ValueError("invalid sharding: its axes do not match its mesh")
        return layout


def annotate(module: Any, layouts: Sequence[Optional[Layout]], num_devices: int) -> None:
    """Mark `module` (an ``ir.Module``, changed in place) as one SPMD program over `num_devices` devices,
    its main function's arguments laid out as `layouts` (None: replicated)."""
    with module.context:
        _annotate(module, layouts, num_devices)


def _annotate(module: Any, layouts: Sequence[Optional[Layout]], num_devices: int) -> None:
    i32 = ir.IntegerType.get_signless(32)
    module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, num_devices)
    module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
    fn = main_function(module)
    old = list(fn.attributes["arg_attrs"]) if "arg_attrs" in fn.attributes else []
    arg_attrs = []
    for i, layout in enumerate(layouts):
        entries = {a.name: a.attr for a in ir.DictAttr(old[i])} if i < len(old) else {}
        entries["mhlo.sharding"] = ir.StringAttr.get(layout.gspmd() if layout is not None else "{replicated}")
        arg_attrs.append(ir.DictAttr.get(entries))
    fn.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)


def result_types(module_bytes: bytes) -> Tuple[List[Tuple[int, ...]], List[Any]]:
    """The static shapes and NumPy dtypes of a module's results (an SPMD program's results are assembled from
    per-device pieces into arrays of these shapes)."""
    with context():
        module = ir.Module.parse(module_bytes)  # (kept: its ops die with it)
        fn = main_function(module)
        types = [
            ir.RankedTensorType(t) for t in ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results
        ]
        by_name = {str(dt.mlir_type()): dt.numpy_dtype for dt in dtypes.ALL_DTYPES}
        return [tuple(t.shape) for t in types], [by_name[str(t.element_type)] for t in types]
