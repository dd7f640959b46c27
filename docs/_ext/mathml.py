"""Renders math as MathML at build time (docutils' LaTeX-to-MathML converter), so pages need no
JavaScript and nothing from the network to show formulas: browsers render MathML natively."""

from __future__ import annotations

from typing import Any, Dict

from docutils import nodes
from docutils.utils.math.latex2mathml import tex2mathml
from sphinx.application import Sphinx


def _render(translator: Any, node: nodes.Element, block: bool) -> None:
    latex = node.astext() if not block else node["latex"]
    translator.body.append(tex2mathml(latex, as_block=block))
    raise nodes.SkipNode


def setup(app: Sphinx) -> Dict[str, Any]:
    app.add_html_math_renderer(
        "mathml",
        inline_renderers=(lambda self, node: _render(self, node, False), None),
        block_renderers=(lambda self, node: _render(self, node, True), None),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
