"""Sizes as expressions: what the trace knows about a dim that is only known at run time.

A dim typed ``-1`` in the trace is still not arbitrary: ``reshape(t, (b, -1, 2, 4))`` of a ``[b, 9, 8]``
tensor makes its ``-1`` from ``(b * 9 * 8) // (b * 2 * 4)``, which is 9 for every ``b``. Here each dynamic dim
gets an expression over *symbols* (one per dim that no rule explains: a compiled function's inputs, a
data-dependent size), built by the ops' rules (``BaseTraceOp.sym_dims``, ``sym_value``) from their inputs'
expressions: an elementwise result has its operands' dims, a reshape the sizes its shape tensor computes, and
so on. Shape arithmetic on `DimensionSize`s combines them, and a size whose expression is a number is static
(``DimensionSize`` folds it): the lowering then types the dim with that number, and the backend never has to
find out that it does not vary.

Expressions are polynomials with integer coefficients over atoms (symbols, and the quotients, remainders,
minima and maxima that do not simplify), in one canonical form, so equal sums of products compare equal and
an exact division by a product cancels (``(b*72) // (b*8)`` is 9). A rule that does not know a dim leaves it a
fresh symbol: an expression is always right, at worst less informative.
"""

from __future__ import annotations

import itertools
import operator
import weakref
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from tripy_flatir.tensor import DYNAMIC
from tripy_trace.tensor import TraceTensor

_symbols = itertools.count()

Monomial = Tuple[tuple, ...]  # atoms' keys, sorted, repeated for powers


class Expr:
    """``sum(coefficient * product(atoms))``: `terms` maps each monomial (a sorted tuple of atom keys) to its
    coefficient (never 0); the empty monomial is the constant term."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Dict[Monomial, int]) -> None:
        self.terms = {m: c for m, c in terms.items() if c}
        self._hash = hash(frozenset(self.terms.items()))

    @staticmethod
    def of(value: "Size") -> "Expr":
        return value if isinstance(value, Expr) else Expr({(): int(value)})

    @property
    def constant(self) -> Optional[int]:
        """The number this expression is, or None if it varies."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and () in self.terms:
            return self.terms[()]
        return None

    @property
    def key(self) -> tuple:
        return tuple(sorted(self.terms.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return " + ".join(f"{c}*{'*'.join(_name(a) for a in m) or '1'}" for m, c in sorted(self.terms.items())) or "0"


Size = Union[int, Expr]


def symbol() -> Expr:
    """A size no rule explains."""
    return Expr({(("sym", next(_symbols)),): 1})


def simplify(e: Size) -> Size:
    """An int where the expression is one."""
    if isinstance(e, Expr):
        c = e.constant
        return e if c is None else c
    return e


def _name(atom: tuple) -> str:
    return f"s{atom[1]}" if atom[0] == "sym" else f"{atom[0]}({', '.join(map(repr, atom[1:]))})"


# ---- arithmetic ---------------------------------------------------------------------------------------------
def add(a: Size, b: Size) -> Size:
    terms = dict(Expr.of(a).terms)
    for m, c in Expr.of(b).terms.items():
        terms[m] = terms.get(m, 0) + c
    return simplify(Expr(terms))


def sub(a: Size, b: Size) -> Size:
    return add(a, mul(b, -1))


def mul(a: Size, b: Size) -> Size:
    terms: Dict[Monomial, int] = {}
    for ma, ca in Expr.of(a).terms.items():
        for mb, cb in Expr.of(b).terms.items():
            m = tuple(sorted(ma + mb))
            terms[m] = terms.get(m, 0) + ca * cb
    return simplify(Expr(terms))


def _exact_quotient(a: Expr, b: Expr) -> Optional[Expr]:
    """``a / b`` where `b` is one term that divides every term of `a` (so the quotient is exact for any value
    of the atoms where `b` is not 0), else None."""
    if len(b.terms) != 1:
        return None
    ((mb, cb),) = b.terms.items()
    terms: Dict[Monomial, int] = {}
    for ma, ca in a.terms.items():
        rest = list(ma)
        for atom in mb:
            if atom not in rest:
                return None
            rest.remove(atom)
        if ca % cb:
            return None
        terms[tuple(rest)] = ca // cb
    return Expr(terms)


def _truncating_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _divide(kind: str, fold: Callable[[int, int], int]) -> Callable[[Size, Size], Size]:
    def divide(a: Size, b: Size) -> Size:
        ea, eb = Expr.of(a), Expr.of(b)
        if eb.constant == 0:
            return _atom(kind, ea, eb)  # (a division by zero is the run time's to report)
        if ea.constant is not None and eb.constant is not None:
            return fold(ea.constant, eb.constant)
        exact = _exact_quotient(ea, eb)
        return simplify(exact) if exact is not None else _atom(kind, ea, eb)

    return divide


floordiv = _divide("floordiv", operator.floordiv)
truncdiv = _divide("truncdiv", _truncating_div)


def mod(a: Size, b: Size) -> Size:
    ea, eb = Expr.of(a), Expr.of(b)
    if ea.constant is not None and eb.constant:
        return ea.constant % eb.constant
    if eb.constant != 0 and _exact_quotient(ea, eb) is not None:
        return 0
    return _atom("mod", ea, eb)


def _extreme(kind: str, fold: Callable[[int, int], int]) -> Callable[[Size, Size], Size]:
    def extreme(a: Size, b: Size) -> Size:
        ea, eb = Expr.of(a), Expr.of(b)
        if ea == eb:
            return simplify(ea)
        if ea.constant is not None and eb.constant is not None:
            return fold(ea.constant, eb.constant)
        return _atom(kind, *sorted((ea, eb), key=lambda e: e.key))

    return extreme


maximum = _extreme("max", max)
minimum = _extreme("min", min)


def _atom(kind: str, *args: Expr) -> Expr:
    """An atom for an operation that does not simplify (its arguments by key: atoms sort and compare)."""
    return Expr({((kind, *(a.key for a in args)),): 1})


# ---- broadcasting -------------------------------------------------------------------------------------------
def broadcast(shapes: Sequence[Sequence[Size]]) -> List[Size]:
    """The dims of a NumPy-style broadcast of tensors with these dims: each the one size other than 1 its
    operands have, or a fresh symbol where they have different expressions (which one is larger is only known
    at run time)."""
    rank = max(len(s) for s in shapes)
    out: List[Size] = []
    for d in range(rank):
        sizes = {s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0}
        sizes.discard(1)
        out.append(sizes.pop() if len(sizes) == 1 else 1 if not sizes else symbol())
    return out


# ---- the trace's tensors ------------------------------------------------------------------------------------
# tensor -> (its dims, its value where it is a short integer vector of sizes, else None)
_KNOWN: "weakref.WeakKeyDictionary[TraceTensor, Tuple[Tuple[Size, ...], Optional[Tuple[Size, ...]]]]" = (
    weakref.WeakKeyDictionary()
)
MAX_VALUE = 16  # elements of an integer vector followed at most (shapes, not data)


def dims(t: TraceTensor) -> Tuple[Size, ...]:
    """Each dim of `t`: its size where static, else its expression."""
    return _resolve(t)[0]


def value(t: TraceTensor) -> Optional[Tuple[Size, ...]]:
    """The elements of `t` (flattened) as sizes, where `t` is a short integer vector of sizes the rules follow
    (``x.shape[0] * 64``, a shape tensor), else None."""
    return _resolve(t)[1]


def _is_size_vector(t: TraceTensor) -> bool:
    return t.rank <= 1 and DYNAMIC not in t.shape and t.dtype is not None and _integer(t) and _count(t) <= MAX_VALUE


def _integer(t: TraceTensor) -> bool:
    return t.dtype.name in ("int32", "int64")


def _count(t: TraceTensor) -> int:
    return t.shape[0] if t.shape else 1


def _plain(t: TraceTensor) -> Optional[Tuple[Tuple[Size, ...], None]]:
    """What a static tensor that holds no sizes knows without looking further: its shape."""
    if DYNAMIC in t.shape or _is_size_vector(t):
        return None
    return tuple(t.shape), None


def _resolve(root: TraceTensor) -> Tuple[Tuple[Size, ...], Optional[Tuple[Size, ...]]]:
    """Fill `_KNOWN` for `root` and what it needs, producers first (a stack, not recursion: dims chain through
    a whole model)."""
    stack = [root]
    while stack:
        t = stack[-1]
        if t in _KNOWN:
            stack.pop()
            continue
        plain = _plain(t)
        if plain is not None or t.producer is None:
            _KNOWN[t] = plain or (tuple(d if d >= 0 else symbol() for d in t.shape), None)
            stack.pop()
            continue
        missing = [i for i in t.producer.inputs if i not in _KNOWN]
        if missing:
            stack.extend(missing)
            continue
        _KNOWN[t] = _rules(t)
        stack.pop()
    return _KNOWN[root]


def _rules(t: TraceTensor) -> Tuple[Tuple[Size, ...], Optional[Tuple[Size, ...]]]:
    """`t`'s dims and value from its producer's rules and its inputs' (known) dims and values."""
    op = t.producer
    assert op is not None
    index = next(k for k, o in enumerate(op.outputs) if o is t)
    in_dims = [_KNOWN[i][0] for i in op.inputs]
    in_values = [_KNOWN[i][1] for i in op.inputs]
    found = op.sym_dims(index, in_dims, in_values)
    if found is not None and len(found) != t.rank:
        found = None
    sizes = tuple(
        s if s >= 0 else (simplify(found[d]) if found is not None else symbol()) for d, s in enumerate(t.shape)
    )
    vector = op.sym_value(index, in_dims, in_values) if _is_size_vector(t) else None
    if vector is not None and len(vector) != _count(t):
        vector = None
    return sizes, None if vector is None else tuple(simplify(v) for v in vector)


def elementwise(values: Sequence[Optional[Tuple[Size, ...]]], fn: Callable[..., Size]) -> Optional[Tuple[Size, ...]]:
    """`fn` of the operands' values, element by element (a 1-element value broadcasts), or None if one is
    not known."""
    known = [v for v in values if v is not None]
    if len(known) < len(values):
        return None
    n = max(len(v) for v in known)
    if any(len(v) not in (1, n) for v in known):
        return None
    return tuple(fn(*(v[k if len(v) > 1 else 0] for v in known)) for k in range(n))


def from_shape_vector(static: Sequence[int], vector: Optional[Tuple[Size, ...]]) -> Optional[List[Size]]:
    """The dims of a result whose shape is `static` where known and the shape tensor's `vector` elsewhere."""
    if vector is None or len(vector) != len(static):
        return None
    return [s if s >= 0 else v for s, v in zip(static, vector)]
