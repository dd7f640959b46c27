"""The API reference's table of contents: every name in ``tripy.__all__``, on the page its definition declares.

Sphinx-free, so the test suite checks it too (tests/docs/test_docs_code_blocks.py) and a new public
name without a reference page fails ``uv run pytest`` as well as ``bash docs/build``.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

# (page, title, introduction), in the reference's order. Which names go on a page is declared where each name is
# defined (``@public_api(document_under=...)``), and collected from ``tripy_frontend.public_names.DOCUMENT_UNDER``.
PAGES: List[Tuple[str, str, str]] = [
    (
        "tensors",
        "Tensors",
        "A ``tripy.Tensor`` is one output of the graph your code builds; "
        "``tripy.DimensionSize`` is a dimension size that is itself a (rank-0) tensor.",
    ),
    ("ops_creation", "Ops: creating tensors", "Tensors filled with constants, ranges and copies."),
    (
        "ops_elementwise",
        "Ops: elementwise math",
        "Elementwise functions (the operators ``+ - * / // % ** @`` and comparisons are ``Tensor`` methods).",
    ),
    ("ops_activations", "Ops: activations", "Activation functions and softmax."),
    ("ops_reductions", "Ops: reductions and comparisons", "Reductions over dims, scans, top-k and whole-tensor tests."),
    ("ops_shape", "Ops: shape and layout", "Reshaping, reordering, joining, splitting and indexing."),
    ("ops_nn", "Ops: pooling and resizing", "Windowed reductions and image resizing."),
    ("ops_types", "Ops: casting and quantization", "Changing a tensor's data type."),
    ("modules", "Modules", "``tripy.Module`` and the layers built on it; see :doc:`/guides/modules`."),
    (
        "importers",
        "Importing models",
        "PyTorch programs and ONNX models as tripy modules (the ``torch`` and "
        "``onnx`` extras); see :doc:`/guides/importers`.",
    ),
    ("compile", "Compiling and executables", "Ahead-of-time compilation; see :doc:`/guides/eager_and_compiled`."),
    (
        "sharding",
        "Sharding across devices",
        "Meshes of devices, how tensors are split over them, and several "
        "processes as one platform; see :doc:`/guides/sharding`.",
    ),
    ("dtypes_devices", "Data types and devices", "Each data type exists once; compare with ``==`` or ``is``."),
    (
        "logging",
        "Logging and errors",
        "IR dumps and diagnostics by topic, the exception tripy raises and the "
        "warning it gives; see :doc:`/guides/debugging`.",
    ),
    (
        "configuration",
        "Configuration, types and plugins",
        "Process-wide settings, the type aliases of tripy's "
        "signatures, and TensorRT plugins (which need the MLIR-TensorRT backend).",
    ),
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


def names_by_page(public: List[str], document_under: Dict[str, str]) -> Dict[str, List[str]]:
    """Each page's public names, sorted. Raises ValueError unless every public name declares a page of PAGES."""
    pages: Dict[str, List[str]] = {page: [] for page, _, _ in PAGES}
    undeclared = sorted(n for n in public if n not in document_under)
    unknown = sorted(
        f"{n} -> {document_under[n]!r}"
        for n in public
        if document_under.get(n, "") not in pages and n in document_under
    )
    problems = []
    if undeclared:
        problems.append(
            f"public names without a reference page (declare one where each is defined: "
            f"@public_api(document_under=...)): {undeclared}"
        )
    if unknown:
        problems.append(f"reference pages that do not exist (the pages are PAGES in {__file__}): {unknown}")
    if problems:
        raise ValueError("; ".join(problems))
    for name in sorted(public):
        pages[document_under[name]].append(name)
    return pages
