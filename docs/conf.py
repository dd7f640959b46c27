"""Sphinx configuration for the tripy documentation (built by ``bash docs/build``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "tripy"
author = "the tripy authors"
copyright = "the tripy authors"
release = version = "0.1.0"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser", "tripy_reference", "mathml"]
# Guides are reStructuredText (like the docstrings); docs/nvtripy_differences.md is Markdown (MyST).
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# Formulas in docstrings become MathML at build time: no MathJax, nothing fetched from a CDN.
html_math_renderer = "mathml"
exclude_patterns = ["_build", "_ext"]

html_theme = "furo"
html_title = "tripy"
html_static_path: list = []

# Broken references fail the build (docs/build passes -W -n). Names outside tripy (typing, NumPy, the
# standard library) are not documented here, so they are the only ones allowed to stay unresolved.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(?!tripy).*")]
# tp.logger.progress returns the logging layer's Progress, an internal helper with no page of its own; R is the
# type variable of what an executable returns (tp.compile(func: Callable[..., R]) -> Executable[R]), for type checkers;
# an importer's Step is what it builds an ImportedModule from (importers call that constructor, users do not); a
# profile's rows name the user's line (SourceFrame: file, line, code) and the XLA operation (HloOp) they come from.
nitpick_ignore = [
    ("py:class", "tripy_flatir.logging.Progress"),
    ("py:class", "tripy_frontend.compiler.executable.R"),
    ("py:class", "tripy_importers.module.Step"),
    ("py:class", "tripy_flatir.stack_info.SourceFrame"),
    ("py:class", "tripy_backend.hlo_ops.HloOp"),
]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
add_module_names = True
# Blocks without a language (diagrams) are plain text, not Python.
highlight_language = "text"
