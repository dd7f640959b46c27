"""Generates the API reference: one page per name in ``tripy.__all__``, grouped by family.

``reference_groups.PAGES`` is the table of contents; each public name declares its page where it is defined
(``@public_api(document_under=...)``). The build fails (ExtensionError) if a public name declares none or a
page that does not exist, so a new op cannot ship without a reference page. References to where a public class is defined (``tripy_frontend.tensor.Tensor``, in
signatures) are resolved to its public page; any other unresolved reference to tripy fails the build.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Dict, Tuple

import builtins

from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform

from reference_groups import FLATIR_PAGE, PAGES, names_by_page


def _heading(text: str, char: str) -> str:
    return f"{text}\n{char * len(text)}\n"


def _dtype_table(func: Any) -> str:
    constraints = getattr(func, "__tripy_dtype_constraints__", None)
    variables = getattr(func, "__tripy_dtype_variables__", None)
    if not constraints:
        return ""
    lines = [
        "",
        ".. rubric:: Data types",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - argument",
        "     - type variable",
    ]
    for arg, var in constraints.items():
        lines += [f"   * - ``{arg}``", f"     - ``{var if isinstance(var, str) else ', '.join(var)}``"]
    lines += [""]
    for var, types in (variables or {}).items():
        lines.append(f"- ``{var}``: {', '.join(f'``{t}``' for t in types)}")
    exceptions = getattr(func, "__tripy_dtype_exceptions__", None) or []
    for exc in exceptions:
        lines.append("- not supported: " + ", ".join(f"``{k}={v}``" for k, v in exc.items()))
    return "\n".join(lines) + "\n"


def _page(name: str, obj: Any) -> str:
    import tripy as tp
    from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY

    text = [f".. _tripy.{name}:", "", _heading(f"tripy.{name}", "="), ".. currentmodule:: tripy", ""]
    if isinstance(obj, tp.dtype) and obj.itemsize < 0:
        members = ", ".join(
            f"``{d.name}``"
            for d in vars(tp).values()
            if isinstance(d, tp.dtype) and d.itemsize > 0 and issubclass(d, obj)
        )
        text += [
            f".. py:data:: {name}",
            "   :type: tripy.dtype",
            "",
            f"   A category of data types, for ``issubclass(t.dtype, tripy.{name})``: {members}.",
            "",
        ]
    elif isinstance(obj, tp.dtype):
        kind = "floating-point" if obj.is_floating else "integer" if obj.is_integer else "boolean"
        numpy = f"``numpy.{obj.numpy_dtype}``" if obj.numpy_dtype is not None else "no NumPy equivalent"
        text += [
            f".. py:data:: {name}",
            "   :type: tripy.dtype",
            "",
            f"   The {kind} data type ``{obj.name}``: {obj.itemsize * 8:g} bits per element; "
            f"NumPy: {numpy}. See :class:`tripy.dtype`.",
            "",
        ]
    elif name == "logger":
        text += [
            ".. py:data:: logger",
            "",
            "   The process-wide :class:`tripy_flatir.logging.Logger`. Topics: "
            + ", ".join(f"``{t}``" for t in _topics())
            + " (or ``all``).",
            "",
            ".. autoclass:: tripy_flatir.logging.Logger",
            "   :members:",
            "   :no-index-entry:",
            "",
        ]
    elif inspect.ismodule(obj):
        text += [f".. automodule:: {obj.__name__}", "   :members:", "   :no-index:", ""]
    elif inspect.isclass(obj):
        text += [f".. autoclass:: {name}", "   :members:", "   :inherited-members:" if name == "Sequential" else ""]
        if obj is tp.Tensor:
            dunders = sorted(n for n in TENSOR_METHOD_REGISTRY.methods if n.startswith("__"))
            text += [f"   :special-members: {', '.join(dunders)}"]
        text += [""]
    else:
        text += [f".. autofunction:: {name}", "", _dtype_table(obj)]
        for cls in RETURNED_CLASSES.get(name, ()):  # (the classes it returns, which tripy does not export)
            text += [f".. autoclass:: {cls}", "   :members:", ""]
    return "\n".join(text) + "\n"


# Functions whose results are classes of a lower layer, documented on the function's page.
RETURNED_CLASSES = {
    "profile": [
        "tripy_backend.profiling.Profile",
        "tripy_backend.profiling.Row",
        "tripy_backend.profiling.Call",
        "tripy_backend.profiling.OpRun",
    ]
}


def _topics() -> Tuple[str, ...]:
    from tripy_flatir.logging import TOPICS

    return TOPICS


def generate(app: Sphinx) -> None:
    import tripy as tp
    from tripy_frontend.public_names import DOCUMENT_UNDER

    try:
        names = names_by_page(list(tp.__all__), DOCUMENT_UNDER)
    except ValueError as e:
        raise ExtensionError(str(e)) from None
    out = Path(app.srcdir) / "reference"
    out.mkdir(exist_ok=True)
    files: Dict[Path, str] = {}
    index = [
        _heading("API reference", "="),
        "Every public name of ``import tripy as tp``, by family.",
        "",
        ".. toctree::",
        "   :maxdepth: 2",
        "",
    ]
    for page, title, intro in PAGES:
        index.append(f"   {page}")
        group = [_heading(title, "="), intro, "", ".. toctree::", "   :maxdepth: 1", ""]
        group += [f"   tripy.{n}" for n in names[page]]
        files[out / f"{page}.rst"] = "\n".join(group) + "\n"
        for n in names[page]:
            files[out / f"tripy.{n}.rst"] = _page(n, getattr(tp, n))
    index.append("   flatir")
    files[out / "flatir.rst"] = FLATIR_PAGE
    files[out / "index.rst"] = "\n".join(index) + "\n"
    for stale in set(out.glob("*.rst")) - set(files):
        stale.unlink()
    for path, content in files.items():  # rewrite only what changed, so incremental builds stay incremental
        if not path.exists() or path.read_text() != content:
            path.write_text(content)


def resolve_internal(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """Annotations name where a class is defined (``tripy_frontend.tensor.Tensor``); point them at the
    public name's page. Anything else left unresolved stays an error."""
    import tripy as tp

    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target.startswith("tripy_"):
        return None
    short = target.rsplit(".", 1)[-1]
    if short not in tp.__all__:
        return None
    py = env.get_domain("py")
    for role in ("class", "obj", "func", "data"):
        ref = py.resolve_xref(env, node.get("refdoc"), app.builder, role, f"tripy.{short}", node, contnode)
        if ref is not None:
            return ref
    return None


class BuiltinTypesStayBuiltin(SphinxPostTransform):
    """Inside ``tripy`` a bare ``bool`` in a signature would resolve to ``tripy.bool`` (the dtype); it
    means Python's ``bool``, so point it at ``builtins`` (undocumented here: plain text)."""

    default_priority = 5  # before Sphinx resolves references (10)

    def run(self, **kwargs: Any) -> None:
        for node in self.document.findall(addnodes.pending_xref):
            target = node.get("reftarget", "")
            if node.get("refdomain") == "py" and isinstance(getattr(builtins, target, None), type):
                node["reftarget"] = f"builtins.{target}"


def setup(app: Sphinx) -> Dict[str, Any]:
    app.add_post_transform(BuiltinTypesStayBuiltin)
    app.connect("builder-inited", generate)
    app.connect("missing-reference", resolve_internal)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
