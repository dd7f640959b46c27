"""The plan of a range program: which buckets cover the declared ranges of its dynamic dims. Pure arithmetic on
the ranges, no compiler (``ranges`` compiles what it plans).

Each dynamic dim belongs to a *variable* (dims that share a name share one) with a range
``(min, opt, max)``. Each variable gets a few *bounds*: the powers of two in the range, ``opt - 1`` and ``opt``
(so the shape the user optimizes for gets a static program of its own) and ``max``. A bucket is one bound per
variable; a call runs the smallest bucket that holds its shapes: inputs are padded to the bucket's shapes, the
program is told their real sizes, and the outputs come back at their real sizes. No call inside the ranges
compiles (``ranges.RangeProgram`` compiles the buckets, most of them in the background).

A bucket that holds one shape only (its bounds are the real sizes) is an ordinary static program, the
one a compile for exactly that shape gives. Padding an input costs a fixed ~5-10 us per call on the CPU (a new
buffer: XLA:CPU takes no dynamic-shaped arguments), which dominates a program that computes little: a *cheap*
program (XLA's cost analysis of its largest bucket: under `CHEAP_FLOPS` and `CHEAP_BYTES`) also gets a static
program for each input shape its calls bring, compiled in the background (at most `EXACT_SIZES` of them), so that
its calls at a shape run padded only until that shape's own program is ready.

A program of one variable that is not cheap gets ``3 * 2**k`` bounds too (`finer`), after its largest bucket has
compiled: a call then computes at most 1.5x its rows. Where padding changes no real result
(``passes.independent_rows``: a bucket's program is the static program at its bound) it gets all of them; else
(bounded programs, which compile 2-3x slower than static ones) the `FINER_BOUNDED` largest, where padding costs the
most. Where padding changes no real result, ``opt - 1`` is no bound either (`for_rows`): opt's program, static at
its bound and compiled first, runs opt as fast as a program for opt alone, and every smaller size meanwhile.

A program that bounded dims cannot express (``passes.markers.Unsupported``: a convolution, window, sort, ...
whose padding would change real results) gets a static program per shape instead, for every combination
of sizes in the ranges if there are at most `MAX_STATIC_PROGRAMS` of them; a wider range gets them for the
sizes nearest ``opt``, and its other sizes compile at their first call (the ``compile`` log says which).
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple, Union

# Dims: an int (static) or the name of a variable.
Dim = Union[int, str]
MAX_PROGRAMS = 16  # buckets per executable, over all variables
# A cheap program: its largest bucket does less work than this (MLP 64-128-64 at batch 64: 2.1 MFLOP, 0.26 MB;
# GPT-2 small at one token: ~250 MFLOP). Such a program gets static programs for up to EXACT_SIZES shapes its
# calls bring (0: none).
CHEAP_FLOPS = 20e6
CHEAP_BYTES = 8e6
EXACT_SIZES = 48
# A program that does more work than this (XLA's cost analysis) is not run once when it is ready
# (``Program._warm_up``): its first call's one-time costs (oneDNN's set-up, tens of ms) are small beside its work,
# and running each large bucket once took longer than compiling them (GPT-2 small 1..1024: 7 s of a 16.6 s plan).
WARM_FLOPS = 5e9
FINER_BOUNDED = 2  # ``3 * 2**k`` bounds for a program that is not cheap and keeps bounded programs (see above)
# A program without bounded form: at most this many static programs (one per shape), compiled by tp.compile.
MAX_STATIC_PROGRAMS = 64


def bounds_for(lo: int, opt: int, hi: int, count: Optional[int] = None) -> List[int]:
    """The bounds of one variable: powers of two in [lo, hi], `opt`, `opt - 1` (so that opt's bucket is opt alone)
    and `hi`; at most `count` of them (every other power of two dropped until they fit, then `opt - 1`, then
    `opt`; `hi` is always kept). A bound of 1 serves size 1 only (a dim bounded by 1 is
    static to XLA: it cannot be told the size is 0), so a range from 0 with a bound of 1 also gets a
    bound of 0 (one program more than `count`)."""
    powers = [1 << k for k in range(max(hi, 1).bit_length()) if lo <= (1 << k) < hi]
    # (opt - 1 is a bound so that opt's bucket holds opt only: the opt shape runs its own static program; an opt
    # of max keeps the largest bucket bounded: its program runs every shape while the others compile)
    wanted = {opt, hi} | ({opt - 1} if lo < opt < hi else set())
    step = 1
    while True:
        kept = sorted(set(powers[::-1][::step]) | wanted)
        if count is None or len(kept) <= count:
            break
        if step > len(powers):
            kept = sorted(wanted) if count >= len(wanted) else sorted({opt, hi})[-count:]
            break
        step *= 2
    # Size 0 always gets its own bound: a padded input of bound 1 could not say that it is empty (XLA takes
    # no dynamic size-1 dims), and XLA's dynamic padder divides by real sizes (0 crashed it with SIGFPE).
    # (Bound 1 is then dropped unless it is opt or hi: size 1 runs in the next bucket.)
    if lo == 0:
        kept = sorted(({0} | set(kept)) - ({1} - wanted))
    # (hi - 1 is no bound unless it is opt: the largest bucket then holds more than one size, and its program, made
    # for the whole range, can run every shape while the other buckets compile; see ``ranges``)
    if len(kept) > 2 and kept[-2] == hi - 1 and hi - 1 != opt:
        kept.pop(-2)
    return kept


def finer(bounds: List[int], lo: int, hi: int, count: int = MAX_PROGRAMS) -> List[int]:
    """`bounds` with ``3 * 2**k`` between the powers of two (the largest first, while there are at most `count`):
    for a program whose buckets are static programs at their bounds (``passes.independent_rows``), each costs a
    static compile, and a call then computes at most 1.5x its rows instead of 2x. Not ``hi - 1``: the largest
    bucket keeps more than one size (its program runs every shape while the others compile)."""
    extra = [3 << k for k in range(max(hi, 1).bit_length()) if lo <= (3 << k) < hi - 1 and (3 << k) not in bounds]
    return sorted(set(bounds) | set(sorted(extra, reverse=True)[: max(0, count - len(bounds))]))


def for_rows(bounds: List[int], lo: int, opt: int) -> List[int]:
    """`bounds` of a program whose rows are independent (``passes.independent_rows``), without ``opt - 1`` (unless it
    is `lo` or a power of two): opt's bucket then holds smaller sizes too. Its program, static at its bound, runs
    opt as fast as a program for opt alone, and it runs every size below opt while their buckets compile (it
    compiles first: the cover, at the largest bound, costs the most per call)."""
    return [b for b in bounds if b != opt - 1 or b == lo or b & (b - 1) == 0]


def plan_sizes(variables: Dict[str, Tuple[int, int, int]]) -> Dict[str, List[int]]:
    """Every size of each variable if the combinations number at most MAX_STATIC_PROGRAMS; else, per
    variable, the sizes nearest opt (as many as keep the combinations within MAX_STATIC_PROGRAMS)."""
    if math.prod(hi - lo + 1 for lo, _, hi in variables.values()) <= MAX_STATIC_PROGRAMS:
        return {name: list(range(lo, hi + 1)) for name, (lo, _, hi) in variables.items()}
    per_var = max(1, int(MAX_STATIC_PROGRAMS ** (1 / len(variables)) + 1e-9))
    sizes = {}
    for name, (lo, opt, hi) in variables.items():
        start = max(lo, min(opt - per_var // 2, hi - per_var + 1))
        sizes[name] = list(range(start, min(hi, start + per_var - 1) + 1))
    return sizes


def plan_buckets(variables: Dict[str, Tuple[int, int, int]]) -> Dict[str, List[int]]:
    """Bounds per variable such that the buckets (one bound per variable) number at most MAX_PROGRAMS."""
    per_var = max(1, int(MAX_PROGRAMS ** (1 / max(len(variables), 1)) + 1e-9))
    return {name: bounds_for(*r, count=per_var) for name, r in variables.items()}


def lookup(bounds: List[int], hi: int, exact: bool = False) -> List[int]:
    """Each size from 0 to `hi` -> the bound of its bucket (-1: none); `exact`: every bound is a size of its own."""
    if exact:  # every bound is a size of its own; other sizes have no program
        kept = set(bounds)
        return [size if size in kept else -1 for size in range(hi + 1)]
    table = []
    k = 0
    for size in range(hi + 1):
        while bounds[k] < size:
            k += 1
        table.append(bounds[k])
    return table
