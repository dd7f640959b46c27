"""Where in the user's code something was created.

Captured cheaply (raw frame data only) every time a tensor is made; resolved to file, line, source
text and column range only when an error report needs it.
"""

from __future__ import annotations

import linecache
import sys
import threading
from dataclasses import dataclass
from types import CodeType, TracebackType
from typing import Optional

# Module-name prefixes of library code; frames from these are skipped when looking for user code.
_LIBRARY_PREFIXES = (
    "tripy.",
    "tripy_flatir",
    "tripy_trace",
    "tripy_backend",
    "tripy_frontend",
    "tripy_importers",
    "tripy_serve",
)


def is_library_module(module_name: str) -> bool:
    return module_name == "tripy" or module_name.startswith(_LIBRARY_PREFIXES)


@dataclass
class SourceFrame:
    file: str
    line: int
    function: str
    code: str
    column_range: Optional[tuple[int, int]]

    def __str__(self) -> str:  # (the function is unknown, "", for a frame read back from an MLIR location)
        return f"{self.file}:{self.line}" + (f" in {self.function}()" if self.function else "")


class StackInfo:
    """The user frames (innermost first) active when something was created: for each, the code object,
    the instruction offset and the line number, or -1 where the line is to be worked out from the offset
    when it is first needed."""

    __slots__ = ("_raw", "_frames")

    # How many user frames capture() records by default. Reports show the innermost one (where the user
    # made the tensor); walking further up costs every op the user calls about a microsecond.
    MAX_FRAMES = 1

    def __init__(self, raw: list[tuple[CodeType, int, int]]) -> None:
        self._raw = raw
        self._frames: Optional[list[SourceFrame]] = None

    @property
    def frames(self) -> list[SourceFrame]:
        if self._frames is None:
            self._frames = [_resolve(*r) for r in self._raw]
        return self._frames

    @property
    def user_frame(self) -> Optional[SourceFrame]:
        frames = self.frames
        return frames[0] if frames else None

    def __bool__(self) -> bool:
        return bool(self._raw)

    @classmethod
    def at(cls, frame: SourceFrame) -> "StackInfo":
        """A record of one frame given as it is (not read from Python's stack: see ``located``)."""
        info = cls([(located.__init__.__code__, -1, frame.line)])  # (a placeholder: `frames` is set)
        info._frames = [frame]
        return info


class located:
    """``with located(StackInfo.at(frame)):`` makes `frame` the user's frame of everything made in it on this
    thread: what ``capture`` gives (and so the location of each op in the MLIR, the line of error reports and
    profiles). For code that builds tripy ops on behalf of source written elsewhere: an importer makes the ops of
    a PyTorch node at the line of the PyTorch module that made the node. None: no change."""

    __slots__ = ("_info", "_previous")

    def __init__(self, info: Optional[StackInfo]) -> None:
        self._info = info
        self._previous: Optional[StackInfo] = None

    def __enter__(self) -> None:
        if self._info is not None:
            thread = threading.get_ident()
            self._previous = _GIVEN.get(thread)
            _GIVEN[thread] = self._info

    def __exit__(
        self, kind: Optional[type], value: Optional[BaseException], traceback: Optional[TracebackType]
    ) -> None:
        if self._info is not None:
            thread = threading.get_ident()
            if self._previous is None:
                del _GIVEN[thread]
            else:
                _GIVEN[thread] = self._previous


# The frame `located` gives on each thread where one is open, by thread id (empty: capture() looks no further).
_GIVEN: dict[int, StackInfo] = {}


# Module name -> is it library code? (a dict lookup per frame instead of string matching.)
_IS_LIBRARY: dict[str, bool] = {}
# capture() runs for every tensor the user makes, so it is on the eager hot path, and the frames it skips
# are tripy's own (the op, its checks, its wrappers: three or four per op). The first time it meets a
# library module it puts this name in the module's globals, so that skipping one of its frames later
# costs one ``in`` test.
LIBRARY_MARK = "__tripy_library_module__"


def capture(max_frames: int = StackInfo.MAX_FRAMES, skip: int = 0) -> StackInfo:
    """Record the innermost user (non-tripy) frames of the current call stack.

    Only the code object and instruction offset of each frame are read: the line number is worked out
    from them when a report needs it (``frame.f_lineno`` scans the code's line table on every call).
    `skip`: how many frames, starting with the caller's, are certainly tripy's and need not be looked at
    (each frame looked at costs: Python makes a frame object for it); e.g. 2 in a private helper that
    only tripy's ops call, for itself and the op."""
    if _GIVEN:  # (a frame given by an importer: see ``located``)
        given = _GIVEN.get(threading.get_ident())
        if given is not None:
            return given
    try:
        frame = sys._getframe(1 + skip)
    except ValueError:  # (a shallower stack than promised)
        frame = sys._getframe(1)
    if max_frames == 1:  # the default, on the path of every tensor the user makes: kept short
        while frame is not None:
            namespace = frame.f_globals
            if LIBRARY_MARK in namespace:
                frame = frame.f_back  # type: ignore[assignment]
                continue
            lib = _IS_LIBRARY.get(namespace.get("__name__", ""))
            if lib is None:  # a module seen for the first time
                lib = _is_library_namespace(namespace)
            if not lib:
                code, lasti = frame.f_code, frame.f_lasti
                site = _SITES.get((id(code), lasti))
                if site is None:
                    site = _site(code, lasti)
                return site
            frame = frame.f_back  # type: ignore[assignment]
        return StackInfo([])
    is_library = _IS_LIBRARY
    raw: list[tuple[CodeType, int, int]] = []
    while frame is not None and len(raw) < max_frames:
        name = frame.f_globals.get("__name__", "")
        lib = is_library.get(name)
        if lib is None:
            lib = is_library[name] = is_library_module(name)
        if not lib:
            raw.append((frame.f_code, frame.f_lasti, -1))
        frame = frame.f_back  # type: ignore[assignment]
    return StackInfo(raw)


# One-frame stack infos by (id of the code, instruction offset): a line that makes tensors in a loop
# shares one record (a StackInfo is immutable; its frames are resolved once). The record holds the code
# object, so the id stays valid while the entry exists.
_SITES: dict[tuple[int, int], StackInfo] = {}
_MAX_SITES = 1 << 14


def _is_library_namespace(namespace: dict) -> bool:
    """Whether a module's globals are a tripy module's (then marked with ``LIBRARY_MARK``)."""
    name = namespace.get("__name__", "")
    lib = _IS_LIBRARY.get(name)
    if lib is None:
        lib = _IS_LIBRARY[name] = is_library_module(name)
    if lib:
        namespace[LIBRARY_MARK] = True
    return lib


def _site(code: CodeType, lasti: int) -> StackInfo:
    if len(_SITES) >= _MAX_SITES:
        _SITES.clear()
    site = _SITES[(id(code), lasti)] = StackInfo([(code, lasti, -1)])
    return site


def line_at(code: CodeType, lasti: int) -> int:
    """The line number of the instruction at byte offset `lasti` in `code` (what ``frame.f_lineno`` says
    while the frame is at that instruction)."""
    if lasti >= 0:
        for start, end, line in code.co_lines():
            if start <= lasti < end and line is not None:
                return line
    return code.co_firstlineno


def _resolve(code: CodeType, lasti: int, lineno: int) -> SourceFrame:
    if lineno < 0:
        lineno = line_at(code, lasti)
    column_range = None
    positions = getattr(code, "co_positions", None)
    if positions is not None and lasti >= 0:
        try:
            start_line, end_line, start_col, end_col = list(positions())[lasti // 2]
            if start_line == end_line == lineno and start_col is not None and end_col is not None:
                column_range = (start_col, end_col)
        except (IndexError, ValueError):
            pass
    text = linecache.getline(code.co_filename, lineno).rstrip("\n")
    return SourceFrame(code.co_filename, lineno, code.co_name, text, column_range)
