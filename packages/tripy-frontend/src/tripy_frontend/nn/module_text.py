"""How modules print and compare: ``repr()`` (tripy's detailed form), ``str()`` (nvtripy's form) and ``==``
(field by field, as nvtripy's dataclass modules compare)."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from tripy_frontend.nn.parameter import ParameterBase, static_shape
from tripy_frontend.tensor import Tensor


def repr_text(module: Any) -> str:
    """Parameters with their shapes (``?`` where only known at run time) and whether they are set, then children."""
    lines = [f"{type(module).__name__}("]
    for name, p in module.named_parameters():
        shape = static_shape(p)
        shape_s = "unknown" if shape is None else "[" + ", ".join("?" if d < 0 else str(d) for d in shape) + "]"
        state = "" if isinstance(p, Tensor) else ", not set"
        lines.append(f"    {name}: Parameter(shape={shape_s}, dtype={p.dtype}{state}),")
    for name, child in module.named_children():
        body = repr(child).replace("\n", "\n    ")
        lines.append(f"    {name}: {body},")
    lines.append(")")
    return "\n".join(lines) if len(lines) > 2 else f"{type(module).__name__}()"


def str_text(module: Any) -> str:
    """nvtripy's layout: ``name: Parameter = (shape=..., dtype=...),`` lines, then ``name: Module = ...,``."""
    body = ""
    for name, p in module.named_parameters():
        body += f"{name}: Parameter = (shape={_shape_tuple(p)}, dtype={p.dtype}),\n"
    for name, child in module.named_children():
        body += f"{name}: Module = {str(child).strip()},\n"
    return f"{type(module).__name__}(\n" + textwrap.indent(body, " " * 4) + ")"


def _shape_tuple(p: Any) -> Any:
    shape = static_shape(p)
    return None if shape is None else tuple(shape)


def equal(a: Any, b: Any) -> bool:
    """Field-by-field equality of module attributes: tensors compare by dtype, shape and values; unset
    parameters by their expected shape and dtype; containers entry by entry."""
    if a is b:
        return True
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return (
            isinstance(a, Tensor)
            and isinstance(b, Tensor)
            and a.dtype is b.dtype
            and tuple(a.trace_tensor.shape) == tuple(b.trace_tensor.shape)
            and bool(np.array_equal(np.asarray(a), np.asarray(b)))
        )
    if isinstance(a, ParameterBase) or isinstance(b, ParameterBase):
        return type(a) is type(b) and a.shape == b.shape and a.dtype is b.dtype
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    return bool(a == b)
