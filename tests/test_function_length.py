"""Every function in the packages' sources reads in one screen: 60 lines or fewer, its docstring aside."""

import ast
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1] / "packages"
MAX_LINES = 60


def _length(node: ast.AST) -> int:
    """Lines from the `def` to the end of the body, less the docstring's."""
    body = node.body  # type: ignore[attr-defined]
    lines = node.end_lineno - node.lineno + 1  # type: ignore[attr-defined]
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1  # type: ignore[operator]
    return lines


def _long_functions() -> List[str]:
    out = []
    for path in sorted(ROOT.glob("*/src/**/*.py")):
        rel = path.relative_to(path.parents[len(path.relative_to(ROOT).parts) - 3]).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _length(node) > MAX_LINES:
                out.append(f"{rel}:{node.lineno} {node.name} ({_length(node)} lines)")
    return out


def test_functions_are_at_most_60_lines_docstring_aside():
    long = _long_functions()
    assert not long, f"functions over {MAX_LINES} lines (docstring aside); split them by job: {long}"
