"""``from_torch``: PyTorch programs (``torch.export``) as tripy modules."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.logging import logger
from tripy_frontend.export import public_api
from tripy_importers import report
from tripy_importers.module import ImportedModule
from tripy_importers.torch import program as _program
from tripy_importers.torch.ops import KEEP


@public_api(document_under="importers")
def from_torch(program: Any, args: Optional[Sequence[Any]] = None, dynamic_shapes: Any = None) -> ImportedModule:
    """Import a PyTorch model as a ``tp.Module`` made of tripy's own ops.

    Args:
        program: A ``torch.export.ExportedProgram``, or a ``torch.nn.Module`` (then `args` are required and
            ``torch.export.export(program, tuple(args), dynamic_shapes=dynamic_shapes)`` is run for you; put the
            module in eval mode first).
        args: Example inputs, for a module.
        dynamic_shapes: ``torch.export``'s dynamic shapes, for a module (e.g. ``{"x": {0: Dim("batch", max=64)}}``).

    Returns:
        A module whose call takes ``tp.Tensor`` s in the order of the program's inputs and returns its outputs
        (one ``tp.Tensor``, or a tuple). ``state_dict()`` holds the weights under PyTorch's names (shared with
        PyTorch's tensors through DLPack where the dtype allows), and ``input_infos`` declares each input's
        dims, the export's dynamic ones as ``tp.NamedDimension`` s with their bounds.

    An operator tripy cannot import yet is reported with the model's source line that produced it, every one at
    once, before anything runs.

    .. code-block:: python

        import importlib.util

        if importlib.util.find_spec("torch"):
            import torch
            from torch.export import Dim, export

            model = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.ReLU()).eval()
            imported = tp.from_torch(export(model, (torch.ones(3, 4),), dynamic_shapes=({0: Dim("batch", max=8)},)))
            exe = tp.compile(imported, args=imported.input_infos)  # every batch from 1 to 8
            x = torch.randn(5, 4)
            assert np.allclose(np.from_dlpack(exe(tp.Tensor(x))), model(x).detach().numpy(), atol=1e-6)
            assert list(imported.state_dict()) == ["0.weight", "0.bias"]
        else:  # without PyTorch, the call says what to install
            try:
                tp.from_torch(None)
            except tp.TripyException as error:
                assert "pip install 'tripy-importers[torch]'" in str(error)
    """
    torch = report.require("torch", "torch", "tp.from_torch")
    example_sizes: Optional[List[Sequence[int]]] = None
    dim_names: Dict[Tuple[int, int], str] = {}
    if isinstance(program, torch.nn.Module):
        if args is None:
            raise_error(
                "tp.from_torch: a torch.nn.Module needs example inputs to export it.",
                _stack.capture(),
                ["Call tp.from_torch(module, args=(example_input, ...), dynamic_shapes=...)."],
            )
        example_sizes = [tuple(a.shape) if isinstance(a, torch.Tensor) else () for a in args]
        dim_names = _dim_names(dynamic_shapes)
        started = time.perf_counter()
        logger.info(f"tp.from_torch: exporting {type(program).__name__} with torch.export ...")
        program = torch.export.export(program, tuple(args), dynamic_shapes=dynamic_shapes)
        logger.info(f"tp.from_torch: exported in {time.perf_counter() - started:.1f} s")
    elif not isinstance(program, torch.export.ExportedProgram):
        raise_error(
            f"tp.from_torch expects a torch.export.ExportedProgram or a torch.nn.Module, but got "
            f"{type(program).__name__}.",
            _stack.capture(),
        )
    elif getattr(program, "example_inputs", None):
        flat = torch.utils._pytree.tree_leaves(program.example_inputs)
        example_sizes = [tuple(a.shape) if isinstance(a, torch.Tensor) else () for a in flat]
    table = torch.export.default_decompositions()
    for name in KEEP:
        table.pop(_overload(torch, name), None)
    program = program.run_decompositions(table)
    return _program.convert(torch, program, example_sizes, dim_names)


def _dim_names(dynamic_shapes: Any) -> Dict[Tuple[int, int], str]:
    """(input, dim) -> the name of the torch.export.Dim the user gave it, for dynamic shapes given per position."""
    names: Dict[Tuple[int, int], str] = {}
    if isinstance(dynamic_shapes, (list, tuple)):
        for i, spec in enumerate(dynamic_shapes):
            for d, dim in spec.items() if isinstance(spec, dict) else enumerate(spec or ()):
                if getattr(dim, "__name__", None):
                    names[(i, d)] = dim.__name__
    return names


def _overload(torch: Any, name: str) -> Any:
    _, op, overload = name.split(".")
    return getattr(getattr(torch.ops.aten, op), overload)


__all__ = ["from_torch"]
