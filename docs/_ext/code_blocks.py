"""The code blocks of a documentation page, for the tests that run them.

A page's ``.. code-block:: python`` blocks run in order in one namespace (a page is one session). A
``.. code-block:: text`` block with ``:caption: Output`` right after a Python block shows what that
block prints, and the tests compare it with what it really printed. Shell blocks (``sh``) are not run.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

DIRECTIVE = ".. code-block::"


@dataclass
class Block:
    language: str
    options: Dict[str, str]
    code: str
    line: int  # 1-based line of the directive in the page
    output: Optional[str] = None  # for a Python block: the Output block that follows it


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def blocks(path: Path) -> List[Block]:
    lines = Path(path).read_text().splitlines()
    found: List[Block] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped.startswith(DIRECTIVE):
            i += 1
            continue
        start, indent = i, _indent(lines[i])
        language = stripped[len(DIRECTIVE) :].strip()
        options: Dict[str, str] = {}
        i += 1
        while i < len(lines) and lines[i].strip().startswith(":") and _indent(lines[i]) > indent:
            key, _, value = lines[i].strip()[1:].partition(":")
            options[key.strip()] = value.strip()
            i += 1
        body = []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
            body.append(lines[i])
            i += 1
        found.append(Block(language, options, textwrap.dedent("\n".join(body)).strip("\n") + "\n", start + 1))
    python: List[Block] = []
    for k, block in enumerate(found):
        if block.language == "python":
            python.append(block)
        elif block.language == "text" and block.options.get("caption") == "Output":
            assert k > 0 and found[k - 1].language == "python", (
                f"{path}:{block.line}: an Output block must follow a Python block"
            )
            found[k - 1].output = block.code
    return python


class Session:
    """Runs a page's Python blocks in order, as one script: the blocks so far are written to
    ``filename`` (relative to the working directory) and each runs with its line numbers in that file,
    so tripy's error reports show the example's own lines (``--> example.py:4``)."""

    def __init__(self, filename: str = "example.py") -> None:
        self.filename = filename
        self.lines: List[str] = []
        self.namespace: Dict[str, object] = {"__name__": "__main__"}

    def run(self, code: str) -> None:
        import linecache

        offset = len(self.lines)
        self.lines += code.splitlines()
        Path(self.filename).write_text("\n".join(self.lines) + "\n")
        linecache.checkcache(self.filename)
        exec(compile("\n" * offset + code, self.filename, "exec"), self.namespace)
