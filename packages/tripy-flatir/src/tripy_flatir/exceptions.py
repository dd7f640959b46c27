"""The tripy exception and the error report that points at the user's code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, Optional, Sequence, Tuple

if TYPE_CHECKING:
    from tripy_flatir.stack_info import SourceFrame, StackInfo


class TripyException(Exception):
    """Raised for any problem tripy can explain: bad input, a compiler error, a runtime failure.

    The message is a full report: what went wrong, the values involved, how to fix it, and where
    in the user's code the failing tensor (and each of its inputs) was created.
    """

    def __reduce__(self) -> Tuple[Any, ...]:
        # Pickled by this module's name, so that it unpickles where only tripy-flatir is installed (the
        # class says it is ``tripy.TripyException``: see below).
        return (_rebuild, self.args, self.__dict__ or None)


def _rebuild(*args: Any) -> TripyException:
    return TripyException(*args)


# An uncaught exception prints as ``module.qualname: message``: users know it as ``tripy.TripyException``
# (tripy re-exports it), not by the distribution that defines it.
TripyException.__module__ = "tripy"


def format_frame(frame: "SourceFrame", indent: str = "") -> str:
    lineno = str(frame.line)
    pad = " " * len(lineno)
    lines = [f"{indent}--> {frame}", f"{indent}{pad} |", f"{indent}{lineno} | {frame.code}"]
    if frame.column_range is not None:
        start, end = frame.column_range
        lines.append(f"{indent}{pad} | " + " " * start + "^" * max(1, end - start))
    else:
        lines.append(f"{indent}{pad} |")
    return "\n".join(lines)


def format_report(message: str, stack_info: Optional["StackInfo"] = None, details: Sequence[str] = (),
                  input_stack_infos: Sequence[Optional["StackInfo"]] = ()) -> str:
    parts = []
    frame = stack_info.user_frame if stack_info else None
    if frame is not None:
        parts.append(format_frame(frame))
        parts.append("")
    parts.append(message)
    for d in details:
        parts.append(d)
    for i, info in enumerate(input_stack_infos):
        inp_frame = info.user_frame if info else None
        if inp_frame is not None:
            parts.append(f"\nInput {i} was created here:\n" + format_frame(inp_frame, indent="    "))
    return "\n".join(parts)


def raise_error(message: str, stack_info: Optional["StackInfo"] = None, details: Sequence[str] = (),
                input_stack_infos: Sequence[Optional["StackInfo"]] = ()) -> NoReturn:
    """Raise a TripyException whose text is a report pointing at the user's code."""
    raise TripyException(format_report(message, stack_info, details, input_stack_infos)) from None
