"""Errors of the importers: every unsupported operator of a model in one report, and a missing extra."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Dict, List, NoReturn, Tuple

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error

# How many places of one unsupported operator a report lists before it counts the rest.
_MAX_PLACES = 3


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import `module` (torch, onnx) or raise a tripy error that says which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise_error(
            f"{what} needs the '{module}' package, which is not installed ({e}).",
            _stack.capture(),
            [f"Install it with: pip install 'tripy-importers[{extra}]' (or 'tripy-inference[{extra}]')."],
        )
        raise AssertionError("unreachable")


def unsupported(source: str, missing: List[Tuple[str, str]], supported: int) -> NoReturn:
    """Raise one error naming each unsupported operator and where the model uses it.

    `missing` holds (operator, where) pairs, in graph order; `supported` is how many operators the importer has.
    """
    places: Dict[str, List[str]] = {}
    for op, where in missing:
        places.setdefault(op, []).append(where)
    lines = []
    for op, wheres in places.items():
        shown = wheres[:_MAX_PLACES]
        more = f" (and {len(wheres) - len(shown)} more)" if len(wheres) > len(shown) else ""
        lines.append(f"{op}: used {len(wheres)} time(s){more}")
        lines.extend(f"    at {w}" for w in shown)
    raise_error(
        f"This {source} model uses {len(places)} operator(s) that tripy cannot import yet.",
        _stack.capture(),
        lines
        + [
            f"tripy imports {supported} {source} operators; the 'Bring your own model' guide lists "
            "them. Replace the operators above in the model, or open an issue that names them."
        ],
    )
