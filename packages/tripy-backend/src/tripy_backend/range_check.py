"""Which sizes of a declared range a program refuses: when a dynamic program does not compile for its
range, each dynamic dim (a range variable) is tried alone over its declared sizes, the others at their opt,
so the error names the dim, the sizes it cannot take, and the op that refuses them (not every input's shape)."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

Dim = Union[int, str]

# Sizes tried per variable: all of a range up to this many, else its min, opt, max and the powers of two between.
MAX_TRIED = 64


class Rejected(Exception):
    """The program cannot take some static input shapes: `messages` say why, `located_at` are their MLIR locations."""

    def __init__(self, messages: Sequence[str], located_at: Sequence[str] = (), refining: bool = False) -> None:
        super().__init__("\n".join(messages))
        self.messages = list(messages)
        self.located_at = list(located_at)
        self.refining = refining  # (rejected by shape refinement, not by the verifier)


def _sizes(low: int, opt: int, high: int) -> List[int]:
    if high - low + 1 <= MAX_TRIED:
        return list(range(low, high + 1))
    powers = [1 << k for k in range(high.bit_length() + 1) if low < 1 << k < high]
    return sorted({low, opt, high, *powers})


def _shapes(dims: Sequence[Tuple[Dim, ...]], values: Dict[str, int]) -> List[Tuple[int, ...]]:
    return [tuple(values[d] if isinstance(d, str) else d for d in shape) for shape in dims]


def refused_sizes(
    check: Callable[[List[Tuple[int, ...]]], None],
    dims: Sequence[Tuple[Dim, ...]],
    variables: Dict[str, Tuple[int, int, int]],
) -> Optional[Tuple[str, List[int], List[int], Rejected]]:
    """The first variable with sizes in its range that `check(shapes)` rejects (raises Rejected), the others at
    their opt, and some that it accepts (else the failure is not this variable's): (its name, the refused sizes,
    the accepted ones, the first rejection); None if there is none."""
    opts = {name: opt for name, (_, opt, _) in variables.items()}
    for name, (low, opt, high) in variables.items():
        refused, accepted, first = [], [], None
        for size in _sizes(low, opt, high):
            try:
                check(_shapes(dims, {**opts, name: size}))
                accepted.append(size)
            except Rejected as e:
                refused.append(size)
                first = first or e
        if first is not None and accepted:
            return name, refused, accepted, first
    return None


def headline(
    name: str,
    variables: Dict[str, Tuple[int, int, int]],
    refused: List[int],
    accepted: List[int],
    label: Optional[str] = None,
) -> str:
    """The report's first line: the dim (`label` describes it, e.g. "dim 1 of input 'x'"), its declared range,
    the sizes refused (and those that run)."""
    low, opt, high = variables[name]
    return (
        f"The declared range of {label or name} (min {low}, opt {opt}, max {high}) holds sizes this program "
        f"cannot run: {_list(refused)} (it runs for {_list(accepted)})"
    )


def _list(sizes: List[int]) -> str:
    if len(sizes) > 2 and sizes == list(range(sizes[0], sizes[-1] + 1)):
        return f"{sizes[0]}..{sizes[-1]}"
    return ", ".join(map(str, sizes))
