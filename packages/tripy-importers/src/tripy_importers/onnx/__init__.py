"""``from_onnx``: ONNX models as tripy modules."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Sequence

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_importers import report
from tripy_importers.module import ImportedModule
from tripy_importers.onnx import program as _program


@public_api(document_under="importers")
def from_onnx(model: Any, dims: Optional[Mapping[str, Sequence[int]]] = None) -> ImportedModule:
    """Import an ONNX model (opset 17 or newer) as a ``tp.Module`` made of tripy's own ops.

    Args:
        model: A path to a ``.onnx`` file, or an ``onnx.ModelProto``.
        dims: The range of each symbolic dim of the model's inputs, by its name: ``{"batch": (1, 4, 16)}`` as
            (min, opt, max). A symbolic dim left out gets the range ``(1, 64, 4096)``, and a log line says so.

    Returns:
        A module whose call takes ``tp.Tensor`` s in the order of the graph's inputs and returns its outputs (one
        ``tp.Tensor``, or a tuple). ``state_dict()`` holds the initializers under their ONNX names (small integer
        ones, shape constants, are folded instead), and ``input_infos`` declares each input's dims: dims that
        share a symbol share one ``tp.NamedDimension``, so they stay equal.

    Every operator tripy cannot import yet is reported at once, by ONNX operator type and node name, before
    anything runs.

    .. code-block:: python

        import importlib.util

        if importlib.util.find_spec("onnx"):
            from onnx import TensorProto, helper

            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])
            graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
            relu = tp.from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
                                dims={"batch": (1, 2, 8)})
            assert relu.input_infos[0].shape_bounds.max == (8, 3)
            assert np.from_dlpack(relu(tp.Tensor([[-1.0, 0.0, 2.0]]))).tolist() == [[0.0, 0.0, 2.0]]
        else:  # without ONNX, the call says what to install
            try:
                tp.from_onnx("model.onnx")
            except tp.TripyException as error:
                assert "pip install 'tripy-importers[onnx]'" in str(error)
    """
    onnx = report.require("onnx", "onnx", "tp.from_onnx")
    if isinstance(model, (str, os.PathLike)):
        model = onnx.load(os.fspath(model))
    elif not isinstance(model, onnx.ModelProto):
        raise_error(
            f"tp.from_onnx expects a path or an onnx.ModelProto, but got {type(model).__name__}.", _stack.capture()
        )
    return _program.convert(onnx, model, dict(dims or {}))


__all__ = ["from_onnx"]
