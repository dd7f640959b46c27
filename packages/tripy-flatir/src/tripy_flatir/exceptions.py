"""The tripy exception and the error report that points at the user's code."""

from __future__ import annotations

import warnings
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


class TripyWarning(UserWarning):
    """A warning meant for the user of tripy: something works, but maybe not as meant (a tensor baked into an
    executable as a constant, an ignored setting). A Python warning, so ``warnings.filterwarnings`` (or
    ``pytest -W error::tripy.TripyWarning``) silences it or makes it an error.

    .. code-block:: python

        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tp.compile(lambda x: x * 2.0, args=[tp.ones((2, 3))])  # (no tp.InputInfo: no runtime inputs)
        assert caught[0].category is tp.TripyWarning
    """


TripyWarning.__module__ = "tripy"


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


def format_report(
    message: str,
    stack_info: Optional["StackInfo"] = None,
    details: Sequence[str] = (),
    input_stack_infos: Sequence[Optional["StackInfo"]] = (),
) -> str:
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


def raise_error(
    message: str,
    stack_info: Optional["StackInfo"] = None,
    details: Sequence[str] = (),
    input_stack_infos: Sequence[Optional["StackInfo"]] = (),
) -> NoReturn:
    """Raise a TripyException whose text is a report pointing at the user's code."""
    raise TripyException(format_report(message, stack_info, details, input_stack_infos)) from None


def warn(message: str, stack_info: Optional["StackInfo"] = None) -> None:
    """Warn the user (``TripyWarning``) at their own line: the user frame of `stack_info`, where it has one."""
    frame = stack_info.user_frame if stack_info else None
    if frame is None:
        warnings.warn(message, TripyWarning, stacklevel=2)
    else:
        warnings.warn_explicit(message, TripyWarning, frame.file, frame.line)
