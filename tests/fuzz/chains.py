"""Differential fuzzing of tripy against NumPy: random op chains, run eager, compiled with static shapes and
compiled with dynamic dims, each compared with a NumPy reference.

A *case* is a list of input arrays and a chain of steps; each step applies one op to the running value (and, for
binary ops, to another input). Cases are drawn through a tiny ``Draw`` interface, so the same generator serves
hypothesis (``tests/fuzz/test_differential.py``, fixed seed, bounded count) and a plain seeded RNG
(``scripts/fuzz.py``, the long run).

The reference (``reference``) is NumPy with tripy's documented rules where tripy deliberately differs
(``Refuse`` names the rule when tripy must raise; ``DIFFERENCES`` lists the value rules):

* no implicit promotion between tensors of different dtypes; a Python number takes the tensor's dtype and
  must fit in it; ``bool`` tensors take no arithmetic (as ``nvtripy``);
* ``/`` of integers gives float32 (NumPy: float64); sums and products keep the input dtype (NumPy widens
  int32 to int64);
* integer ``//`` and ``%`` by zero give 0 (NumPy's result, without its warning);
* float -> int casts saturate and NaN gives 0 (NumPy: undefined);
* ``argmax``/``argmin`` give int32 (NumPy: int64).

Each case must match NumPy within a dtype-aware tolerance, or raise a ``TripyException`` whose report names
the line of this file that called the op when the reference refuses too.
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

import tripy as tp

FLOATS = ("float32", "float16")
INTS = ("int32", "int64")
DTYPES = FLOATS + INTS + ("bool",)
TP_DTYPES = {"float32": tp.float32, "float16": tp.float16, "int32": tp.int32, "int64": tp.int64, "bool": tp.bool}
MODES = ("eager", "static", "dynamic")
EMPTY_MAX = "max/min/argmax/argmin over an empty dim"
SQUEEZE = "squeeze of a dim whose size is not 1"
NO_RUNTIME_ERRORS = "second call at sizes the ops cannot take (documented: a compiled program has no run-time errors)"
DIFFERENCES = __doc__


class Refuse(Exception):
    """The reference says tripy must raise (NumPy raises, or a documented tripy rule); the message is the cause."""


class Draw:
    """What a generator may ask for: backed by hypothesis (``data.draw``) or by a seeded ``random.Random``."""

    def __init__(self, integer: Callable[[int, int], int]) -> None:
        self.integer = integer

    def int(self, lo: int, hi: int) -> int:
        return self.integer(lo, hi)

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[self.integer(0, len(seq) - 1)]

    def chance(self, percent: int) -> bool:
        return self.integer(0, 99) < percent

    @staticmethod
    def from_random(rng: random.Random) -> "Draw":
        return Draw(rng.randint)


# ---- inputs -----------------------------------------------------------------------------------------------
def draw_shape(d: Draw, rank: Optional[int] = None) -> Tuple[int, ...]:
    rank = d.int(0, 4) if rank is None else rank
    return tuple(d.choice((0, 1, 1, 2, 2, 3, 3, 4)) if d.chance(92) else 0 for _ in range(rank))


def draw_array(d: Draw, shape: Sequence[int], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(d.int(0, 2**31))
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype in INTS:
        a = rng.integers(-9, 10, size=n)
        info = np.iinfo(dtype)
        specials = np.array([0, 1, -1, info.min, info.max, info.max - 1, info.min + 1], dtype=np.int64)
    else:
        a = np.round(rng.normal(0, 3, size=n), d.int(0, 3))
        big = 1e4 if dtype == "float16" else 1e30
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, big, -big, 0.5, -0.5])
    if n and d.chance(40):  # some special values at random places
        where = rng.integers(0, n, size=max(1, n // 4))
        a = a.astype(specials.dtype)
        a[where] = rng.choice(specials, size=where.size)
    return np.asarray(a, dtype=dtype).reshape(shape)


def broadcastable_shape(d: Draw, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """A shape that broadcasts with `shape` (sometimes one that does not, to check the error)."""
    if d.chance(4):
        return tuple(s + 2 for s in shape) or (2,)
    tail = [1 if d.chance(30) else s for s in shape[len(shape) - d.int(0, len(shape)) :]]
    lead = [d.choice((1, 2)) for _ in range(d.int(0, 1))] if len(shape) + 1 <= 4 else []
    return tuple(lead + tail)


# ---- the ops ----------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Op:
    """One op: `draw` picks parameters (and may add inputs) for a value like `x`; `ref` computes the reference
    (raising Refuse where tripy must raise); `run` calls tripy."""

    draw: Callable[[Draw, np.ndarray, "Case"], Dict[str, Any]]
    ref: Callable[[np.ndarray, Dict[str, Any], List[np.ndarray]], np.ndarray]
    run: Callable[[Any, Dict[str, Any], Sequence[Any]], Any]


def _fitting(d: Draw, table: Dict[str, Any], x: np.ndarray) -> str:
    """A name from `table` whose op takes x's dtype (mostly; sometimes any, to check the dtype errors)."""
    names = [n for n, entry in table.items() if x.dtype.name in entry[2]]
    return d.choice(names if names and d.chance(95) else list(table))


def _need(cond: bool, why: str) -> None:
    if not cond:
        raise Refuse(why)


def _dtype_is(x: np.ndarray, allowed: Sequence[str], what: str) -> None:
    _need(x.dtype.name in allowed, f"{what} does not take {x.dtype.name} (documented dtype constraint)")


def _numpy(fn: Callable[[], Any]) -> np.ndarray:
    """Run NumPy; its errors (bad dims, empty reductions) mean tripy must raise too."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn())
    except (ValueError, IndexError, np.exceptions.AxisError, TypeError) as e:
        raise Refuse(f"NumPy raises {type(e).__name__}") from None


UNARY = {
    "neg": (np.negative, lambda t: -t, FLOATS + INTS),
    "abs": (np.abs, tp.abs, FLOATS + INTS),
    "exp": (np.exp, tp.exp, FLOATS),
    "tanh": (np.tanh, tp.tanh, FLOATS),
    "sqrt": (np.sqrt, tp.sqrt, FLOATS),
    "log": (np.log, tp.log, FLOATS),
    "sin": (np.sin, tp.sin, FLOATS),
    "relu": (lambda a: np.maximum(a, 0).astype(a.dtype), tp.relu, FLOATS + INTS),
    "invert": (np.invert, lambda t: ~t, INTS + ("bool",)),
}


def _unary_ref(x: np.ndarray, p: Dict[str, Any], _: List[np.ndarray]) -> np.ndarray:
    fn, _tp, allowed = UNARY[p["fn"]]
    _dtype_is(x, allowed, p["fn"])
    return _numpy(lambda: fn(x)).astype(x.dtype)


BINARY: Dict[str, Tuple[Callable, Callable, Sequence[str]]] = {
    "add": (np.add, lambda a, b: a + b, FLOATS + INTS),
    "sub": (np.subtract, lambda a, b: a - b, FLOATS + INTS),
    "mul": (np.multiply, lambda a, b: a * b, FLOATS + INTS),
    "div": (np.true_divide, lambda a, b: a / b, FLOATS + INTS),
    "floordiv": (np.floor_divide, lambda a, b: a // b, FLOATS + INTS),
    "mod": (np.mod, lambda a, b: a % b, FLOATS + INTS),
    "maximum": (np.maximum, tp.maximum, FLOATS + INTS),
    "minimum": (np.minimum, tp.minimum, FLOATS + INTS),
    "lt": (np.less, lambda a, b: a < b, DTYPES),
    "eq": (np.equal, lambda a, b: a == b, DTYPES),
    "ge": (np.greater_equal, lambda a, b: a >= b, DTYPES),
    "and": (np.bitwise_and, lambda a, b: a & b, INTS + ("bool",)),
    "xor": (np.bitwise_xor, lambda a, b: a ^ b, INTS + ("bool",)),
}


def _binary_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    fn = _fitting(d, BINARY, x)
    if d.chance(30):  # a Python number, sometimes one that does not fit the tensor's dtype
        if x.dtype.kind == "f":
            scalar: Any = d.choice((2.0, -0.5, 0.0, -0.0, math.inf, -math.inf, math.nan, 1e5))
        else:
            scalar = d.choice((2, -3, 0, 1, -1, 2**31, -(2**31) - 1, 2**63, True))
        return {"fn": fn, "scalar": scalar, "reflected": d.chance(30)}
    dtype = x.dtype.name if d.chance(92) else d.choice(DTYPES)
    idx = case.add_input(draw_array(d, broadcastable_shape(d, x.shape), dtype))
    return {"fn": fn, "input": idx, "reflected": d.chance(20)}


def _binary_ref(x: np.ndarray, p: Dict[str, Any], inputs: List[np.ndarray]) -> np.ndarray:
    fn, _tp, allowed = BINARY[p["fn"]]
    _dtype_is(x, allowed, p["fn"])
    if "scalar" in p:
        s = p["scalar"]
        _need(x.dtype != bool or isinstance(s, bool), "a Python number next to a bool tensor (no promotion)")
        _need(not (isinstance(s, float) and x.dtype.kind in "iu"), "a float next to an integer tensor (no promotion)")
        if x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            _need(info.min <= s <= info.max, "a Python int that does not fit the tensor's dtype")
        y = np.asarray(s, dtype=x.dtype)
    else:
        y = inputs[p["input"]]
        _need(y.dtype == x.dtype, "operands of different dtypes (no implicit promotion)")
    a, b = (y, x) if p["reflected"] else (x, y)
    out = _numpy(lambda: fn(a, b))
    if p["fn"] in ("floordiv", "mod") and x.dtype.kind in "iu":
        out = np.where(np.broadcast_to(b, out.shape) == 0, 0, out)  # documented: integer // 0 and % 0 give 0
    if p["fn"] == "div" and x.dtype.kind in "iu":
        return out.astype(np.float32)
    return out if out.dtype == bool else out.astype(x.dtype)


def _binary_run(t: Any, p: Dict[str, Any], inputs: Sequence[Any]) -> Any:
    other = p["scalar"] if "scalar" in p else inputs[p["input"]]
    fn = BINARY[p["fn"]][1]
    return fn(other, t) if p["reflected"] else fn(t, other)


def _draw_dims(d: Draw, rank: int, many: bool = True) -> Any:
    if rank == 0 or d.chance(20):
        return None
    if many and d.chance(30):
        return tuple(sorted(set(d.int(-rank, rank - 1) % rank for _ in range(d.int(1, rank)))))
    return d.int(-rank - (1 if d.chance(3) else 0), rank - 1)  # sometimes out of range


REDUCE = {
    "sum": (np.sum, tp.sum, FLOATS + INTS),
    "prod": (np.prod, tp.prod, FLOATS + INTS),
    "max": (np.max, tp.max, FLOATS + INTS),
    "min": (np.min, tp.min, FLOATS + INTS),
    "mean": (np.mean, tp.mean, FLOATS),
    "all": (np.all, tp.all, DTYPES),
    "any": (np.any, tp.any, DTYPES),
    "argmax": (np.argmax, tp.argmax, FLOATS + INTS),
    "argmin": (np.argmin, tp.argmin, FLOATS + INTS),
}


def _reduce_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    fn = _fitting(d, REDUCE, x)
    return {"fn": fn, "dim": _draw_dims(d, x.ndim, many=not fn.startswith("arg")), "keepdim": d.chance(40)}


def _reduce_ref(x: np.ndarray, p: Dict[str, Any], _: List[np.ndarray]) -> np.ndarray:
    fn, _tp, allowed = REDUCE[p["fn"]]
    _dtype_is(x, allowed, p["fn"])
    dim, keep = p["dim"], p["keepdim"]
    if x.ndim == 0 and dim in (0, -1):
        dim = None
    if p["fn"] in ("max", "min", "argmax", "argmin") and x.size == 0:
        axes = tuple(range(x.ndim)) if dim is None else _numpy(lambda: normalize_axis_tuple(dim, x.ndim))
        if any(x.shape[a] == 0 for a in axes):
            raise Refuse(EMPTY_MAX)
    if p["fn"].startswith("arg"):
        return _numpy(lambda: fn(x, axis=dim, keepdims=keep)).astype(np.int32)
    kwargs = {"dtype": x.dtype} if p["fn"] in ("sum", "prod") else {}
    out = _numpy(lambda: fn(x, axis=dim, keepdims=keep, **kwargs))
    return out if p["fn"] in ("all", "any") else out.astype(x.dtype)


def _reduce_run(t: Any, p: Dict[str, Any], _: Sequence[Any]) -> Any:
    return REDUCE[p["fn"]][1](t, dim=p["dim"], keepdim=p["keepdim"])


def _shape_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    r = x.ndim
    kind = d.choice(("reshape", "permute", "transpose", "flatten", "squeeze", "unsqueeze", "expand", "flip"))
    if kind == "reshape":
        dims = [s for s in x.shape if s != 1] + [1] * d.int(0, 1)
        d.int(0, 1) and dims.reverse()
        shape: List[int] = [int(np.prod(dims[:2]))] + dims[2:] if len(dims) >= 2 and d.chance(50) else dims
        if shape and d.chance(40) and x.size:
            shape[d.int(0, len(shape) - 1)] = -1
        if d.chance(4):
            shape = [x.size + 1]
        return {"kind": kind, "shape": tuple(shape)}
    if kind == "permute":
        perm = list(range(r))
        random.Random(d.int(0, 1000)).shuffle(perm)
        return {"kind": kind, "perm": tuple(perm)}
    if kind == "transpose":
        return {"kind": kind, "a": d.int(-r, r - 1) if r else 0, "b": d.int(-r, r - 1) if r else 0}
    if kind == "flatten":
        return {
            "kind": kind,
            "start": d.int(-r, r - 1) if r else 0,
            "end": -1 if d.chance(50) or not r else d.int(0, r - 1),
        }
    if kind == "squeeze":
        ones = [i for i, s in enumerate(x.shape) if s == 1]
        return {"kind": kind, "dims": d.choice(ones) if ones and d.chance(90) else (d.int(-r, r - 1) if r else 0)}
    if kind == "unsqueeze":
        return {"kind": kind, "dim": d.int(-r - 1, r)}
    if kind == "expand":
        sizes = [(d.choice((2, 3)) if s == 1 and d.chance(60) else (-1 if d.chance(50) else s)) for s in x.shape]
        return {"kind": kind, "sizes": tuple([d.int(1, 2)] * d.int(0, 1) + sizes)}
    return {"kind": kind, "dim": _draw_dims(d, r)}


def _shape_ref(x: np.ndarray, p: Dict[str, Any], _: List[np.ndarray]) -> np.ndarray:
    kind = p["kind"]
    if kind in ("transpose", "squeeze") and x.ndim == 0:
        same = _scalar_dims(x, (p["a"], p["b"]) if kind == "transpose" else p["dims"])
        if same is not None:
            return same
    if kind == "squeeze" and x.ndim and _numpy(lambda: x.shape[p["dims"]]) != 1:
        raise Refuse(SQUEEZE)
    if kind == "reshape":
        return _numpy(lambda: x.reshape(p["shape"]))
    if kind == "permute":
        return _numpy(lambda: np.transpose(x, p["perm"]))
    if kind == "transpose":
        return _numpy(lambda: np.swapaxes(x, p["a"], p["b"]) if x.ndim else _bad_dim(p["a"]))
    if kind == "flatten":
        r = x.ndim
        if r == 0:
            return x.reshape(1)
        s, e = (int(_numpy(lambda: normalize_axis_index(d, r))) for d in (p["start"], p["end"]))
        _need(s <= e, "flatten with start_dim after end_dim")
        return x.reshape(x.shape[:s] + (-1 if x.size else int(np.prod(x.shape[s : e + 1])),) + x.shape[e + 1 :])
    if kind == "squeeze":
        return _numpy(lambda: np.squeeze(x, p["dims"]) if x.ndim else _bad_dim(p["dims"]))
    if kind == "unsqueeze":
        return _numpy(lambda: np.expand_dims(x, p["dim"]))
    if kind == "expand":
        sizes = p["sizes"]
        lead = len(sizes) - x.ndim
        target = tuple(s if s != -1 or i < lead else x.shape[i - lead] for i, s in enumerate(sizes))
        _need(-1 not in target[:lead], "expand: -1 for a new dim")
        return _numpy(lambda: np.broadcast_to(x, target)).copy()
    return _numpy(lambda: np.flip(x, p["dim"]) if x.ndim or p["dim"] is None else _bad_dim(p["dim"]))


def _bad_dim(dim: Any) -> None:
    raise Refuse("a dim of a rank-0 tensor")


def _scalar_dims(x: np.ndarray, dims: Any) -> Optional[np.ndarray]:
    """tripy (as PyTorch) takes dim 0 or -1 of a rank-0 tensor as no dim at all (NumPy raises); None otherwise."""
    if x.ndim == 0 and all(d in (0, -1) for d in (dims if isinstance(dims, tuple) else (dims,))):
        return x
    return None


def _shape_run(t: Any, p: Dict[str, Any], _: Sequence[Any]) -> Any:
    kind = p["kind"]
    if kind == "reshape":
        return tp.reshape(t, p["shape"])
    if kind == "permute":
        return tp.permute(t, p["perm"])
    if kind == "transpose":
        return tp.transpose(t, p["a"], p["b"])
    if kind == "flatten":
        return tp.flatten(t, p["start"], p["end"])
    if kind == "squeeze":
        return tp.squeeze(t, p["dims"])
    if kind == "unsqueeze":
        return tp.unsqueeze(t, p["dim"])
    if kind == "expand":
        return tp.expand(t, p["sizes"])
    return tp.flip(t, dim=p["dim"])


def _slice_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    items: List[Any] = []
    for s in x.shape[: d.int(0, x.ndim)]:
        if d.chance(15) and s:
            items.append(d.int(-s, s - 1))
            continue
        pick = lambda: None if d.chance(30) else d.int(-s - 3, s + 3)  # noqa: E731
        items.append((pick(), pick(), None if d.chance(40) else d.choice((1, 2, 3, -1, -2, -3))))
    return {"items": items}


def _index(items: List[Any]) -> tuple:
    return tuple(slice(*i) if isinstance(i, tuple) else i for i in items)


def _slice_ref(x: np.ndarray, p: Dict[str, Any], _: List[np.ndarray]) -> np.ndarray:
    return _numpy(lambda: x[_index(p["items"])]).copy()


def _join_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    stack = d.chance(40)
    r = x.ndim + (1 if stack else 0)
    dim = d.int(-r, r - 1) if r else 0
    shape = list(x.shape)
    if not stack and x.ndim and d.chance(60):
        shape[dim % x.ndim] = d.int(0, 3)
    idx = case.add_input(draw_array(d, shape if d.chance(95) else shape + [2], x.dtype.name))
    return {"stack": stack, "dim": dim, "input": idx, "self_first": d.chance(50)}


def _join_ref(x: np.ndarray, p: Dict[str, Any], inputs: List[np.ndarray]) -> np.ndarray:
    y = inputs[p["input"]]
    pair = (x, y) if p["self_first"] else (y, x)
    if p["stack"]:
        return _numpy(lambda: np.stack(pair, axis=p["dim"]))
    _need(x.ndim > 0, "concatenate of rank-0 tensors")
    return _numpy(lambda: np.concatenate(pair, axis=p["dim"]))


def _join_run(t: Any, p: Dict[str, Any], inputs: Sequence[Any]) -> Any:
    y = inputs[p["input"]]
    pair = [t, y] if p["self_first"] else [y, t]
    return tp.stack(pair, dim=p["dim"]) if p["stack"] else tp.concatenate(pair, dim=p["dim"])


def _where_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    cond = case.add_input(draw_array(d, broadcastable_shape(d, x.shape), "bool" if d.chance(95) else "int32"))
    other = case.add_input(draw_array(d, broadcastable_shape(d, x.shape), x.dtype.name))
    return {"cond": cond, "other": other, "swap": d.chance(50)}


def _where_ref(x: np.ndarray, p: Dict[str, Any], inputs: List[np.ndarray]) -> np.ndarray:
    c, y = inputs[p["cond"]], inputs[p["other"]]
    _need(c.dtype == bool, "a condition that is not bool")
    return _numpy(lambda: np.where(c, y, x) if p["swap"] else np.where(c, x, y))


def _where_run(t: Any, p: Dict[str, Any], inputs: Sequence[Any]) -> Any:
    c, y = inputs[p["cond"]], inputs[p["other"]]
    return tp.where(c, y, t) if p["swap"] else tp.where(c, t, y)


def _cast_ref(x: np.ndarray, p: Dict[str, Any], _: List[np.ndarray]) -> np.ndarray:
    to = np.dtype(p["dtype"])
    if x.dtype.kind == "f" and to.kind in "iu":  # documented: saturating, NaN -> 0
        info = np.iinfo(to)
        with np.errstate(all="ignore"):
            y = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=info.max, neginf=info.min))
            out = np.where(y >= 2.0 ** (info.bits - 1), info.max, np.where(y < -(2.0 ** (info.bits - 1)), info.min, 0))
            inside = (y < 2.0 ** (info.bits - 1)) & (y >= -(2.0 ** (info.bits - 1)))
            return np.where(inside, np.where(inside, y, 0).astype(to), out.astype(to))
    with np.errstate(all="ignore"):
        return x.astype(to)


def _matmul_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    k = x.shape[-1] if x.ndim else 1
    if x.ndim >= 2 and d.chance(85):
        batch = [1 if d.chance(30) else s for s in x.shape[:-2][len(x.shape[:-2]) - d.int(0, x.ndim - 2) :]]
        shape = tuple(batch) + (k if d.chance(95) else k + 1, d.int(0, 3))
    else:
        shape = (k,) if d.chance(50) else (k, d.int(0, 3))
    dtype = x.dtype.name if d.chance(95) else d.choice(DTYPES)
    return {"input": case.add_input(draw_array(d, shape, dtype)), "reflected": False}


def _matmul_ref(x: np.ndarray, p: Dict[str, Any], inputs: List[np.ndarray]) -> np.ndarray:
    y = inputs[p["input"]]
    _dtype_is(x, FLOATS + INTS, "'@'")
    _need(y.dtype == x.dtype, "operands of different dtypes (no implicit promotion)")
    _need(x.ndim > 0 and y.ndim > 0, "'@' of a rank-0 tensor")
    return _numpy(lambda: np.matmul(x, y)).astype(x.dtype)


def _softmax_ref(x: np.ndarray, p: Dict[str, Any], _: List[np.ndarray]) -> np.ndarray:
    _dtype_is(x, FLOATS, "softmax")
    dim = p["dim"]

    def softmax() -> np.ndarray:
        axis = None if dim is None else normalize_axis_index(dim, max(x.ndim, 1))
        if x.ndim == 0:
            return np.exp(x - x) / np.exp(x - x)
        e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
        return e / np.sum(e, axis=axis, keepdims=True)

    return _numpy(softmax).astype(x.dtype)


# Results that do not depend on the input's values (a compiler folds them to constants): a binary op of a value
# with itself, or a tensor like it.
SELF = ("eq", "ge", "lt", "sub", "xor", "and", "mul")
LIKE = {"zeros_like": (np.zeros_like, tp.zeros_like), "ones_like": (np.ones_like, tp.ones_like)}


def _self_draw(d: Draw, x: np.ndarray, case: "Case") -> Dict[str, Any]:
    if d.chance(25):
        return {"like": d.choice(list(LIKE))}
    names = [n for n in SELF if x.dtype.name in BINARY[n][2]]
    return {"fn": d.choice(names or list(SELF))}


def _self_ref(x: np.ndarray, p: Dict[str, Any], _: List[np.ndarray]) -> np.ndarray:
    if "like" in p:
        return LIKE[p["like"]][0](x)
    fn, _tp, allowed = BINARY[p["fn"]]
    _dtype_is(x, allowed, p["fn"])
    out = _numpy(lambda: fn(x, x))
    return out if out.dtype == bool else out.astype(x.dtype)


def _self_run(t: Any, p: Dict[str, Any], _: Sequence[Any]) -> Any:
    return LIKE[p["like"]][1](t) if "like" in p else BINARY[p["fn"]][1](t, t)


OPS: Dict[str, Op] = {
    "self": Op(_self_draw, _self_ref, _self_run),
    "unary": Op(lambda d, x, c: {"fn": _fitting(d, UNARY, x)}, _unary_ref, lambda t, p, _: UNARY[p["fn"]][1](t)),
    "binary": Op(_binary_draw, _binary_ref, _binary_run),
    "reduce": Op(_reduce_draw, _reduce_ref, _reduce_run),
    "shape": Op(_shape_draw, _shape_ref, _shape_run),
    "slice": Op(_slice_draw, _slice_ref, lambda t, p, _: t[_index(p["items"])]),
    "join": Op(_join_draw, _join_ref, _join_run),
    "where": Op(_where_draw, _where_ref, _where_run),
    "cast": Op(
        lambda d, x, c: {"dtype": d.choice(DTYPES)}, _cast_ref, lambda t, p, _: tp.cast(t, TP_DTYPES[p["dtype"]])
    ),
    "matmul": Op(_matmul_draw, _matmul_ref, lambda t, p, inputs: t @ inputs[p["input"]]),
    "softmax": Op(
        lambda d, x, c: {"dim": None if d.chance(20) or not x.ndim else d.int(-x.ndim, x.ndim - 1)},
        _softmax_ref,
        lambda t, p, _: tp.softmax(t, dim=p["dim"]),
    ),
}


# ---- cases ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Case:
    inputs: List[np.ndarray]
    steps: List[Tuple[str, Dict[str, Any]]] = dataclasses.field(default_factory=list)

    def add_input(self, array: np.ndarray) -> int:
        self.inputs.append(array)
        return len(self.inputs) - 1

    def __repr__(self) -> str:
        ins = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.inputs)
        return f"Case(inputs=[{ins}], steps={self.steps})"


def draw_case(d: Draw) -> Case:
    case = Case([draw_array(d, draw_shape(d), d.choice(DTYPES))])
    x = case.inputs[0]
    for _ in range(d.int(1, 3)):
        name = d.choice(list(OPS))
        if (name == "softmax" and x.dtype.kind != "f" or name == "matmul" and x.dtype == bool) and d.chance(90):
            name = "cast"  # mostly programs the op takes
        params = OPS[name].draw(d, x, case)
        case.steps.append((name, params))
        try:
            x, _wide = _step(name, params, x, x, case.inputs)
        except Refuse:
            break  # the chain ends at its first refusal
    return case


def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def _step(
    name: str, params: Dict[str, Any], x: np.ndarray, wide: np.ndarray, inputs: List[np.ndarray]
) -> Tuple[np.ndarray, np.ndarray]:
    """One step of the reference, twice: in the inputs' dtypes (as NumPy computes), and with floats computed in
    float64 and rounded to the result dtype after each op (as a compiler that keeps more precision inside an op)."""
    op = OPS[name]
    exact = op.ref(x, params, inputs)
    if name == "cast" or not any(a.dtype.kind == "f" for a in [x] + inputs):
        return exact, exact
    with np.errstate(all="ignore"):
        try:
            w = op.ref(_wide(wide), params, [_wide(a) for a in inputs])
        except Refuse:
            return exact, exact
        return exact, np.asarray(w).astype(exact.dtype)


def reference(case: Case) -> Tuple[np.ndarray, np.ndarray]:
    """The expected result (exact and widened), or Refuse with the cause."""
    x = wide = case.inputs[0]
    for name, params in case.steps:
        x, wide = _step(name, params, x, wide, case.inputs)
    return x, wide


def program(case: Case) -> Callable[..., Any]:
    def fn(*tensors: Any) -> Any:
        t = tensors[0]
        for name, params in case.steps:
            t = OPS[name].run(t, params, tensors)
        return t

    return fn


def run_tripy(case: Case, mode: str) -> Tuple[np.ndarray, Any]:
    """Tripy's result, and the executable that gave it (None in eager mode)."""
    fn = program(case)
    tensors = [tp.Tensor(a) for a in case.inputs]
    exe = None
    if mode == "eager":
        out = fn(*tensors)
    else:
        infos = [tp.InputInfo(_declared(a.shape, mode), TP_DTYPES[a.dtype.name]) for a in case.inputs]
        exe = tp.compile(fn, args=infos)
        out = exe(*tensors)
    return _to_numpy(out), exe


def _to_numpy(out: Any) -> np.ndarray:
    result = np.from_dlpack(out)
    if result.dtype.name != _dtype_name(out.dtype):
        raise AssertionError(f"NumPy view has dtype {result.dtype}, tensor {out.dtype}")
    if tuple(out.shape) != result.shape:
        raise AssertionError(f"the tensor's shape {tuple(out.shape)} is not its data's {result.shape}")
    return result


def resized(case: Case) -> Case:
    """The case at other sizes inside the dynamic mode's ranges (`_declared`): each size other than 1 becomes
    the same new size wherever it occurs (so inputs that broadcast together still do), never 1 (a dynamic dim
    is assumed not to be 1); new values of the same dtypes. Mostly a size between two of the range program's
    bounds, which runs padded."""
    rng = random.Random(repr(case))
    sizes = sorted({s for a in case.inputs for s in a.shape if s != 1})
    new = {s: rng.choice([n for n in (s - 1, s + 1, s + 2) if n >= 0 and n != 1]) for s in sizes}
    d = Draw.from_random(rng)
    inputs = [draw_array(d, tuple(new.get(s, s) for s in a.shape), a.dtype.name) for a in case.inputs]
    return Case(inputs, case.steps)


def _declared(shape: Tuple[int, ...], mode: str) -> tuple:
    """Static: the shape. Dynamic: every dim other than 1 is a range around its size (size-1 dims stay static:
    a dynamic dim broadcasts only if it is known not to be 1)."""
    if mode == "static":
        return shape
    return tuple(s if s == 1 else (max(0, s - 1), s, s + 2) for s in shape)


def _dtype_name(dtype: Any) -> str:
    return next(name for name, d in TP_DTYPES.items() if d == dtype)


TOLERANCE = {"float32": 1e-4, "float16": 1e-2}


def close(got: np.ndarray, want: np.ndarray, rtol: Optional[float] = None) -> Optional[str]:
    """None if `got` matches `want` (same dtype and shape; floats: same NaN and infinity positions, finite values
    within a relative tolerance, the dtype's unless `rtol` is given, scaled by the largest finite magnitude); else
    what differs."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if want.dtype.kind != "f":
        return None if np.array_equal(got, want) else f"values differ: got {got.tolist()}, expected {want.tolist()}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not (
        np.array_equal(np.isnan(g), np.isnan(w))
        and np.array_equal(np.where(np.isinf(w), w, 0), np.where(np.isinf(g), g, 0))
    ):
        return f"NaN/inf differ: got {got.tolist()}, expected {want.tolist()}"
    finite = np.isfinite(w)
    rtol = rtol or TOLERANCE[want.dtype.name]
    scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0.0)))
    if np.all(np.abs(g[finite] - w[finite]) <= rtol * (np.abs(w[finite]) + 1e-2 * scale)):
        return None
    return f"values differ: got {got.tolist()}, expected {want.tolist()}"


def _passes_float16(case: Case) -> bool:
    return any(a.dtype == np.float16 for a in case.inputs) or any(
        params.get("dtype") == "float16" for _, params in case.steps
    )


def check(case: Case, mode: str) -> Tuple[str, str]:
    """('match' | 'refusal', cause) when tripy behaves as the reference says, else ('mismatch' | 'raw' |
    'bad-refusal' | 'bad-report', what happened). In dynamic mode a program that matched is called again at
    other sizes (`resized`), and that result is checked the same way, its shape included."""
    exe = None

    def first() -> np.ndarray:
        nonlocal exe
        got, exe = run_tripy(case, mode)
        return got

    outcome, what = _judge(case, mode, first)
    if mode != "dynamic" or outcome != "match" or exe is None:
        return outcome, what
    again = resized(case)
    outcome, what = _judge(again, mode, lambda: _to_numpy(exe(*[tp.Tensor(a) for a in again.inputs])))
    if outcome == "bad-refusal" and what.startswith("accepted an invalid program"):
        # (sizes the program's ops cannot take together, e.g. concatenated dims that no longer agree, or an
        # index beyond a dynamic dim: documented, a compiled program has no run-time errors)
        return "refusal", f"{NO_RUNTIME_ERRORS} ({what.split('(')[1].split(')')[0]})"
    if outcome in ("match", "refusal"):
        return outcome, what or "called at two sizes"
    return outcome, f"second call, at {[list(a.shape) for a in again.inputs]}: {what}"


def _judge(case: Case, mode: str, run: Callable[[], np.ndarray]) -> Tuple[str, str]:
    try:
        exact, wide = reference(case)
        expected: Optional[str] = None
    except Refuse as r:
        expected = str(r)
    try:
        got = run()
    except tp.TripyException as e:
        text = str(e)
        if __file__ not in text:
            return "bad-report", f"the report does not name the user's line: {text[:400]}"
        if expected is None:
            return "bad-refusal", "refused a valid program: " + " ".join(
                line.strip()
                for line in text.splitlines()
                if line.strip() and line.lstrip()[:1] not in "|-^" and not line.lstrip()[:1].isdigit()
            )[:500]
        return "refusal", expected
    except Exception as e:  # noqa: BLE001 - the point is to catch what should have been a TripyException
        return "raw", f"{type(e).__name__}: {str(e)[:400]}"
    if expected == SQUEEZE and mode == "dynamic":
        return "refusal", expected + " (documented: a dynamic dim is assumed to be 1)"
    if expected == EMPTY_MAX and mode == "dynamic":
        return "refusal", expected + " (documented: a dynamic dim empty at run time gives the identity)"
    if expected is not None:
        return "bad-refusal", f"accepted an invalid program ({expected}): got {got.dtype}{list(got.shape)}"
    # (a chain that computes in float16 somewhere is only as precise as float16, even if it ends in float32)
    rtol = TOLERANCE["float16"] if _passes_float16(case) else None
    why_exact, why_wide = close(got, exact, rtol), close(got, wide, rtol)
    if why_exact is None or why_wide is None:
        return "match", ""
    return "mismatch", why_exact
