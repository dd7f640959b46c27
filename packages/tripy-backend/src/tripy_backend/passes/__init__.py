"""The backend's StableHLO passes, one per module. A pass takes a module (bytecode, or text in tests) and the
`Job` it is compiled for, and returns the rewritten module as bytecode; ``tripy_backend.pipeline`` names them
in order and runs them, logging each on the ``passes`` topic and dumping its result where asked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple


@dataclass
class Job:
    """What a module is being compiled for, as the passes read it, and what they find out for the compile."""

    name: str = "program"  # the program, in the log and in dump file names
    shapes: Sequence[Tuple[int, ...]] = ()  # static input shapes: exact ones, or a bucket's bounds
    dynamic_dims: Sequence[Tuple[int, int]] = ()  # (input, dim) padded up to its bound: a bounded program
    lows: Optional[Sequence[Tuple[int, ...]]] = None  # a bucket's smallest shapes
    variables: Sequence[str] = ()  # the size variable of each of `dynamic_dims`
    platform: str = "cpu"
    runtime: str = "classic"  # the XLA:CPU runtime that compiles it (``cpu_plan.runtime``)
    out_dims: List[List[int]] = field(default_factory=list)  # each output's padded dims (``bounded_markers``)
    rows: bool = False  # a bounded program whose rows are independent: static at its bounds (``independent_rows``)
    fixed: int = -1  # the first baked-in argument (the rest are the caller's inputs); -1: not known
    transposed: List[int] = field(default_factory=list)  # arguments read as transposed copies (``transposed_weights``)


def always(job: Job) -> bool:
    return True


@dataclass(frozen=True)
class Pass:
    """A named rewrite: `run(module, job)` -> module, where `applies(job)`."""

    name: str
    run: Callable[[bytes, Job], bytes]
    applies: Callable[[Job], bool] = always
