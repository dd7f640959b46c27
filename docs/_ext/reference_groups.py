"""The API reference's table of contents: every name in ``tripy.__all__``, grouped by family.

Sphinx-free, so the test suite checks it too (tests/docs/test_docs_code_blocks.py) and a new public
name without a reference page fails ``uv run pytest`` as well as ``bash docs/build``.
"""

from __future__ import annotations

from typing import List, Tuple

# (page, title, introduction, names)
GROUPS: List[Tuple[str, str, str, List[str]]] = [
    ("tensors", "Tensors", "A ``tripy.Tensor`` is one output of the graph your code builds; "
     "``tripy.DimensionSize`` is a dimension size that is itself a (rank-0) tensor.",
     ["Tensor", "DimensionSize"]),
    ("ops_creation", "Ops: creating tensors", "Tensors filled with constants, ranges and copies.",
     ["arange", "copy", "full", "full_like", "iota", "iota_like", "ones", "ones_like", "zeros", "zeros_like"]),
    ("ops_elementwise", "Ops: elementwise math", "Elementwise functions (the operators ``+ - * / // % ** @`` and "
     "comparisons are ``Tensor`` methods).",
     ["abs", "cos", "exp", "log", "maximum", "minimum", "rsqrt", "sin", "sqrt", "tanh", "where", "masked_fill"]),
    ("ops_activations", "Ops: activations", "Activation functions and softmax.",
     ["gelu", "relu", "sigmoid", "silu", "softmax"]),
    ("ops_reductions", "Ops: reductions and comparisons", "Reductions over dims, scans, top-k and whole-tensor tests.",
     ["all", "allclose", "any", "argmax", "argmin", "cumsum", "equal", "max", "mean", "min", "prod", "sum",
      "topk", "var"]),
    ("ops_shape", "Ops: shape and layout", "Reshaping, reordering, joining, splitting and indexing.",
     ["concatenate", "expand", "flatten", "flip", "gather", "outer", "pad", "permute", "repeat", "reshape",
      "split", "squeeze", "stack", "transpose", "tril", "triu", "unsqueeze"]),
    ("ops_nn", "Ops: pooling and resizing", "Windowed reductions and image resizing.",
     ["avgpool", "maxpool", "resize"]),
    ("ops_types", "Ops: casting and quantization", "Changing a tensor's data type.",
     ["cast", "dequantize", "quantize"]),
    ("modules", "Modules", "``tripy.Module`` and the layers built on it; see :doc:`/guides/modules`.",
     ["Module", "Sequential", "Linear", "Conv", "ConvTranspose", "Embedding", "BatchNorm", "GroupNorm",
      "InstanceNorm", "LayerNorm"]),
    ("compile", "Compiling and executables", "Ahead-of-time compilation; see :doc:`/guides/eager_and_compiled`.",
     ["compile", "Executable", "InputInfo", "DimensionInputInfo", "NamedDimension", "Bounds", "Stream", "default_stream"]),
    ("sharding", "Sharding across devices", "Meshes of devices, how tensors are split over them, and several "
     "processes as one platform; see :doc:`/guides/sharding`.",
     ["Mesh", "Sharding", "shard", "initialize_distributed"]),
    ("dtypes_devices", "Data types and devices", "Each data type exists once; compare with ``==`` or ``is``.",
     ["dtype", "bool", "bfloat16", "float16", "float32", "float8", "int4", "int8", "int32", "int64", "integer", "floating", "device"]),
    ("logging", "Logging and errors", "IR dumps and diagnostics by topic, and the exception tripy raises; "
     "see :doc:`/guides/debugging`.",
     ["logger", "TripyException"]),
    ("configuration", "Configuration, types and plugins", "Process-wide settings, the type aliases of tripy's "
     "signatures, and TensorRT plugins (which need the MLIR-TensorRT backend).",
     ["config", "types", "plugin"]),
]


# Not part of ``tripy.__all__``: the classes a tool author uses with only ``tripy-flatir`` installed.
FLATIR_PAGE = """FlatIR (tripy-flatir)
=====================

The classes a tool author builds FlatIR with, with only ``tripy-flatir`` installed; see
:doc:`/guides/flatir`. Each op is a class in its own module under ``tripy_flatir.ops``.

.. autoclass:: tripy_flatir.FlatIRFunction
   :members:

.. autoclass:: tripy_flatir.FlatIRTensor
   :members:

.. autoclass:: tripy_flatir.ops.base.BaseFlatIROp
   :members: build, to_mlir, result_type
"""


def check_groups(public: List[str]) -> None:
    """Raise ValueError unless every public name is listed exactly once and every listed name is public."""
    listed = [n for _, _, _, names in GROUPS for n in names]
    missing = sorted(set(public) - set(listed))
    unknown = sorted(set(listed) - set(public))
    twice = sorted({n for n in listed if listed.count(n) > 1})
    problems = []
    if missing:
        problems.append(f"public names missing from the reference (add them to GROUPS in {__file__}): {missing}")
    if unknown:
        problems.append(f"names in GROUPS that are not in tripy.__all__: {unknown}")
    if twice:
        problems.append(f"names listed twice in GROUPS: {twice}")
    if problems:
        raise ValueError("; ".join(problems))


