"""No import cycles inside a package, counting imports inside functions (imports for type checking only aside),
and function-level imports of tripy's own modules do not grow: each one usually hides a cycle."""

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1] / "packages"
PACKAGES = {
    "tripy_flatir": "tripy-flatir",
    "tripy_trace": "tripy-trace",
    "tripy_backend": "tripy-backend",
    "tripy_frontend": "tripy-frontend",
    "tripy_importers": "tripy-importers",
    "tripy_serve": "tripy-serve",
}
# The cycles left, each to be taken apart (none left: keep it that way).
KNOWN_CYCLES: List[Set[str]] = []
MAX_FUNCTION_LEVEL_IMPORTS = 0


def _modules(package: str) -> Dict[str, Path]:
    src = ROOT / PACKAGES[package] / "src"
    out = {}
    for path in src.glob(f"{package}/**/*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test)


def _tripy_imports(path: Path) -> List[Tuple[str, List[str], bool]]:
    """Each import of a tripy module: (module, the names imported from it, whether it is inside a function)."""
    found: List[Tuple[str, List[str], bool]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom) and child.level == 0 and (child.module or "").startswith("tripy"):
                found.append((child.module, [a.name for a in child.names], inside))
            elif isinstance(child, ast.Import):
                found.extend((a.name, [], inside) for a in child.names if a.name.startswith("tripy"))
            walk(child, inside)

    walk(ast.parse(path.read_text()), False)
    return found


def _imports(path: Path, modules: Dict[str, Path]) -> Set[str]:
    """The modules of the same package that `path` imports, package inits aside (importing a submodule runs its
    package's __init__ anyway)."""
    out: Set[str] = set()
    for module, names, _ in _tripy_imports(path):
        subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in modules]
        out.update(subs if names and len(subs) == len(names) else [module, *subs])
    return {m for m in out if m in modules and modules[m].name != "__init__.py"}


def _cycles(edges: Dict[str, Set[str]]) -> List[Set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    out: List[Set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles_inside_a_package(package):
    modules = _modules(package)
    edges = {m: _imports(path, modules) - {m} for m, path in modules.items()}
    cycles = [c for c in _cycles(edges) if c not in KNOWN_CYCLES]
    assert not cycles, f"import cycles in {package} (counting function-level imports): {cycles}"


def test_function_level_imports_of_tripy_modules_do_not_grow():
    count = sum(
        inside for package in PACKAGES for path in _modules(package).values() for _, _, inside in _tripy_imports(path)
    )
    assert count <= MAX_FUNCTION_LEVEL_IMPORTS, (
        f"{count} function-level imports of tripy modules (at most {MAX_FUNCTION_LEVEL_IMPORTS}): import at module "
        "level, or take apart the cycle that needs it"
    )
