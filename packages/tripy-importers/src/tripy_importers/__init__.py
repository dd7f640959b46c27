"""tripy's importers: bring a PyTorch or ONNX model to tripy unchanged.

    import tripy as tp
    model = tp.from_torch(torch.export.export(torch_model, args, dynamic_shapes=...))
    exe = tp.compile(model, args=model.input_infos)
    model = tp.from_onnx("model.onnx", dims={"batch": (1, 4, 16)})

The foreign libraries are optional extras (``pip install 'tripy-importers[torch]'``, ``[onnx]``), imported only
when an importer is called.
"""

import importlib.metadata as _metadata

from tripy_importers.module import ImportedModule
from tripy_importers.onnx import from_onnx
from tripy_importers.torch import from_torch

__all__ = ["ImportedModule", "from_onnx", "from_torch"]
__version__ = _metadata.version("tripy-importers")
