"""Where the user called a ``tp.Executable``: recorded for every result tensor, so that reports about
it point at the call. On the hot path of compiled calls, hence cached per calling instruction."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from tripy_flatir.stack_info import SourceFrame, StackInfo, is_library_module, line_at


class _CallSite(StackInfo):
    """One frame, whose line number is worked out only when a report needs it (reading
    ``frame.f_lineno`` costs more than the rest of a compiled call's bookkeeping; the code object and
    instruction offset determine it)."""

    __slots__ = ()

    @property
    def frames(self) -> List[SourceFrame]:
        if self._frames is None:
            self._raw = [(code, lasti, line_at(code, lasti) if line < 0 else line) for code, lasti, line in self._raw]
        return StackInfo.frames.fget(self)  # type: ignore[attr-defined,no-any-return]


# Call sites seen before: (id of the code, instruction offset) of the calling frame -> its StackInfo.
# A loop that calls an executable from one line makes one record; the record holds the code object, so
# the id stays valid while the entry exists. (Code objects hash by content, which is slow; ids are not.)
SITES: Dict[Tuple[int, int], StackInfo] = {}
_MAX_SITES = 4096


def call_site(frame: Any) -> StackInfo:
    """Where the user called: the first non-tripy frame at or above `frame` (the caller's frame)."""
    key = (id(frame.f_code), frame.f_lasti)
    site = SITES.get(key)
    if site is not None:
        return site
    user = frame
    while user is not None and is_library_module(user.f_globals.get("__name__", "")):
        user = user.f_back
    site = _CallSite([(user.f_code, user.f_lasti, -1)]) if user is not None else StackInfo([])
    if user is frame:  # a library caller may be reached from many user lines: not cached
        if len(SITES) >= _MAX_SITES:
            SITES.clear()
        SITES[key] = site
    return site
