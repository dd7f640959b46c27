"""A program compiled once for a range of input shapes: a few bounded programs (see ``bounded``).

Each dynamic dim belongs to a *variable* (dims that share a name share one) with a range
``(min, opt, max)``. Each variable gets a few *bounds*: the powers of two in the range, ``opt`` (so the
shape the user optimizes for runs unpadded) and ``max``. A bucket is one bound per variable; every
bucket is compiled up front (`RangeProgram.compile`), and a call runs the smallest bucket that holds
its shapes: inputs are padded to the bucket's shapes, the program is told their real sizes, and the
outputs come back at their real sizes. No call inside the ranges compiles.

A bucket that holds one shape only (its bounds are the real sizes) is an ordinary static program, the
one a compile for exactly that shape gives. Padding an input costs a fixed ~30 us per call on the CPU
(a copy on the host and a new buffer: XLA:CPU takes no dynamic-shaped arguments), which dominates a
program that computes little: a *cheap* program (XLA's cost analysis of its largest bucket: under
`CHEAP_FLOPS` and `CHEAP_BYTES`) with one variable also gets a static program for each of the
`EXACT_SIZES` sizes nearest ``opt``.

A program that bounded dims cannot express (see ``bounded.Unsupported``: a convolution, window, sort, ...
whose padding would change real results) gets a static program per shape instead, for every combination
of sizes in the ranges if there are at most `MAX_STATIC_PROGRAMS` of them; a wider range gets them for the
sizes nearest ``opt``, and its other sizes compile at their first call (the ``compile`` log says which).
"""

from __future__ import annotations

import itertools
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from tripy_flatir.device import device as Device
from tripy_flatir.logging import logger
from tripy_backend import _xla
from tripy_backend.bounded import SmallSize, Unsupported, bound_module
from tripy_backend.devices import compiler_name, platform

# Dims: an int (static) or the name of a variable.
Dim = Union[int, str]
MAX_PROGRAMS = 16  # buckets per executable, over all variables
# A cheap program: its largest bucket does less work than this (MLP 64-128-64 at batch 64: 2.1 MFLOP, 0.26 MB;
# GPT-2 small at one token: ~250 MFLOP). Such a program gets static programs for EXACT_SIZES more shapes.
CHEAP_FLOPS = 20e6
CHEAP_BYTES = 8e6
EXACT_SIZES = 48
# A program without bounded form: at most this many static programs (one per shape), compiled by tp.compile.
MAX_STATIC_PROGRAMS = 64


def bounds_for(lo: int, opt: int, hi: int, count: Optional[int] = None, exact: int = 0) -> List[int]:
    """The bounds of one variable: powers of two in [lo, hi], `opt` and `hi`; at most `count` of them
    (every other power of two dropped until they fit, then `opt`; `hi` is always kept); and the `exact`
    sizes nearest `opt` (each its own bucket). A bound of 1 serves size 1 only (a dim bounded by 1 is
    static to XLA: it cannot be told the size is 0), so a range from 0 with a bound of 1 also gets a
    bound of 0 (one program more than `count`)."""
    powers = [1 << k for k in range(max(hi, 1).bit_length()) if lo <= (1 << k) < hi]
    step = 1
    while True:
        kept = sorted(set(powers[::-1][::step]) | {opt, hi})
        if count is None or len(kept) <= count:
            break
        if step > len(powers):
            kept = sorted({opt, hi}) if count >= 2 else [hi]
            break
        step *= 2
    # Size 0 always gets its own bound: a padded input of bound 1 could not say that it is empty (XLA takes
    # no dynamic size-1 dims), and XLA's dynamic padder divides by real sizes (0 crashed it with SIGFPE).
    # (Bound 1 is then dropped unless it is opt or hi: size 1 runs in the next bucket.)
    if lo == 0:
        kept = sorted(({0} | set(kept)) - ({1} - {opt, hi}))
    if exact > 0:
        start = max(lo, min(opt - exact // 2, hi - exact + 1))
        kept = sorted(set(kept) | set(range(start, min(hi, start + exact - 1) + 1)))
    return kept


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


def plan_buckets(variables: Dict[str, Tuple[int, int, int]], cheap: bool = False) -> Dict[str, List[int]]:
    """Bounds per variable such that the buckets (one bound per variable) number at most MAX_PROGRAMS, plus
    EXACT_SIZES exact ones for a `cheap` program of one variable. (With several variables, exact sizes of
    one would multiply the others' bounds: 2 variables with 4 bounds and 6 exact sizes each would make 100
    buckets, most of them bounded programs.)"""
    per_var = max(1, int(MAX_PROGRAMS ** (1 / max(len(variables), 1)) + 1e-9))
    exact = EXACT_SIZES if cheap and len(variables) == 1 else 0
    return {name: bounds_for(*r, count=per_var, exact=exact) for name, r in variables.items()}


class RangeProgram:
    """Bounded programs covering every shape in the ranges of `variables`.

    `shapes` has one entry per argument (the runtime inputs, then any fixed ones), each dim an int or a
    variable name; `compile_one(module_bytes, why)` compiles a static program (logging and caching)."""

    def __init__(self, module_bytes: bytes, shapes: Sequence[Tuple[Dim, ...]],
                 variables: Dict[str, Tuple[int, int, int]], device: Device) -> None:
        self.shapes = [tuple(s) for s in shapes]
        self.variables = dict(variables)
        self.device = device
        self.module_bytes = module_bytes
        self.dynamic_dims = [(i, d) for i, s in enumerate(self.shapes) for d, x in enumerate(s) if isinstance(x, str)]
        self.names = list(self.variables)
        self.per_size = False  # one static program per shape (a program bounded dims cannot express)
        self._small: List[Tuple[int, ...]] = []  # buckets without a bounded program, to split (see `_split`)
        self.loaded = False  # the plan was loaded (`deserialize`): compiling the programs left to compile keeps it
        self._plan(cheap=False)
        # bucket -> (compiled program, dynamic dims of each output); an exact bucket's program is static
        self.programs: Dict[Tuple[int, ...], Tuple[Any, List[List[int]]]] = {}
        # The programs `deserialize` loaded, with the bytes they came from, which `serialize` hands back: XLA:CPU
        # serializes a deserialized program without its runtime helpers' code (a tanh's, say), so the bytes it
        # gives fail to load ("Function wrapped_tanh not found") where the original ones load.
        self._loaded_code: Dict[Tuple[int, ...], Tuple[Any, bytes]] = {}
        self._launchers: Dict[Tuple[Tuple[int, ...], ...], Any] = {}
        self._handlers: Dict[Tuple[int, ...], List[Any]] = {}  # each bounded bucket's result handlers

    def _plan(self, cheap: bool, per_size: bool = False) -> None:
        self.per_size = per_size
        self._small = []  # (buckets of an earlier plan)
        self.bounds = plan_sizes(self.variables) if per_size else plan_buckets(self.variables, cheap)
        # size -> bound, per variable: a call finds its bucket with one list index per variable (-1: none)
        self._bound_of = {n: _lookup(self.bounds[n], self.variables[n][2], per_size) for n in self.names}

    def buckets(self) -> List[Tuple[int, ...]]:
        return list(itertools.product(*(self.bounds[n] for n in self.names)))

    def bucket_shapes(self, bucket: Tuple[int, ...]) -> List[Tuple[int, ...]]:
        value = dict(zip(self.names, bucket))
        return [tuple(value[x] if isinstance(x, str) else x for x in s) for s in self.shapes]

    def exact(self, bucket: Tuple[int, ...]) -> bool:
        """Whether `bucket` holds one size per variable (its bounds are the real sizes)."""
        if self.per_size:
            return True
        for n, b in zip(self.names, bucket):
            lo = self.variables[n][0]
            k = self.bounds[n].index(b)
            if b != lo and (k == 0 or self.bounds[n][k - 1] != b - 1):
                return False
        return True

    def compile(self, compile_one: Callable[[bytes, str], Any], specialize: Callable[[List[Tuple[int, ...]]], bytes],
                what: str) -> None:
        """Compile every bucket (`what` names the program in the log): `compile_one(module_bytes, why)`
        compiles a static module, `specialize(shapes)` is the module for exactly `shapes`. The largest
        bucket is compiled first; if it is cheap, the plan gains exact buckets; if bounded dims cannot
        express the program, the plan becomes one static program per shape (`plan_sizes`). A bucket whose
        program would need a computed size of 0 or 1 (see ``bounded.SmallSize``) is split: each of its sizes
        gets a bucket of its own (`_split`), compiled now too."""
        start = time.perf_counter()
        with logger.progress(f"{what}: the programs of the declared range", len(self.buckets())) as progress:
            if not self.per_size:  # (a per-size plan here: loaded, with programs XLA could not save)
                try:
                    self._compile_bounded(compile_one, specialize, what, progress)
                except Exception as e:  # Unsupported, or a bounded program the compiler rejects
                    static = {b: p for b, p in self.programs.items() if self.exact(b)}
                    self._plan(cheap=False, per_size=True)
                    self.programs = {b: p for b, p in static.items() if b in set(self.buckets())}
                    reason = _first_line(e)
                    logger.log(lambda: f"[compile] {what}: no bounded programs ({reason}); " + self.per_size_note(),
                               "compile")
            if self.per_size:
                opt = tuple(self.variables[n][1] for n in self.names)
                if opt not in self.programs:  # (a program that does not compile at all fails here, once)
                    self._compile_bucket(opt, compile_one, specialize, what)
                self._compile_rest(compile_one, specialize, what, progress)
            while self._small:
                small, self._small = self._small, []
                if not self._split(small):
                    logger.log(f"[compile] {what}: too many sizes to give each its own bucket (at most "
                               f"{MAX_STATIC_PROGRAMS}): the shapes of {len(small)} bucket(s) compile at their first "
                               "call", "compile")
                    break
                self._compile_rest(compile_one, specialize, what, progress)
        if not self.programs:
            raise SmallSize("every bucket needs a computed size of 0 or 1")
        logger.log(lambda: f"[compile] {what}: {len(self.programs)} programs cover "
                   + ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, _, hi) in self.variables.items())
                   + f" (plan: {self.plan_text()}; {time.perf_counter() - start:.3f} s)", "compile")

    def _compile_bounded(self, compile_one: Callable[[bytes, str], Any],
                         specialize: Callable[[List[Tuple[int, ...]]], bytes], what: str, progress: Any) -> None:
        largest = tuple(self.bounds[n][-1] for n in self.names)
        if largest not in self.programs:  # (loaded from disk, see `deserialize`)
            self._compile_bucket(largest, compile_one, specialize, what)
            progress.step_done()
        if (EXACT_SIZES and len(self.names) == 1 and largest in self.programs and not self.loaded
                and _xla.is_cheap(self.programs[largest][0], CHEAP_FLOPS, CHEAP_BYTES)):
            self._plan(cheap=True)
            logger.log(f"[compile] {what}: a cheap program (XLA's cost analysis): each of the {EXACT_SIZES} "
                       "shapes nearest opt gets a program of its own", "compile")
            if self.exact(largest):
                del self.programs[largest]  # (now an exact bucket: compiled again as a static program)
        self._compile_rest(compile_one, specialize, what, progress)

    def _compile_rest(self, compile_one: Callable[[bytes, str], Any],
                      specialize: Callable[[List[Tuple[int, ...]]], bytes], what: str, progress: Any) -> None:
        """Compile the plan's buckets that have no program yet, on several threads (`progress` counts them)."""
        rest = [b for b in self.buckets() if b not in self.programs]
        progress.set_total(progress.done + len(rest))

        def compile_bucket(bucket: Tuple[int, ...]) -> None:
            self._compile_bucket(bucket, compile_one, specialize, what)
            progress.step_done()

        # (XLA compiles one program on one thread and lets go of the GIL meanwhile: on 2 cores the 48 exact
        # programs of a small MLP compile in ~1.0 s instead of ~1.6 s)
        with ThreadPoolExecutor(max(1, min(len(rest), os.cpu_count() or 1, 8))) as pool:
            for future in [pool.submit(compile_bucket, b) for b in rest]:
                future.result()

    def _split(self, buckets: Sequence[Tuple[int, ...]]) -> bool:
        """Give each size in `buckets` (buckets without a bounded program, see ``bounded.SmallSize``) a bucket of
        its own: its bound joins the plan's bounds. A program made for a bucket that is now exact (one size) is
        bounded: it is dropped, to be compiled again as a static program. False, and the plan unchanged, if the
        plan would then hold more than ``MAX_STATIC_PROGRAMS`` buckets."""
        bounds = {n: list(b) for n, b in self.bounds.items()}
        for bucket in buckets:
            for n, b in zip(self.names, bucket):
                k = bounds[n].index(b)
                low = bounds[n][k - 1] + 1 if k > 0 else self.variables[n][0]
                bounds[n] = sorted(set(bounds[n]) | set(range(low, b)))
        if math.prod(len(b) for b in bounds.values()) > MAX_STATIC_PROGRAMS:
            return False
        self.bounds = bounds
        self._bound_of = {n: _lookup(self.bounds[n], self.variables[n][2], self.per_size) for n in self.names}
        self.programs = {b: p for b, p in self.programs.items() if self.exact(b) == (not p[1])}
        return True

    def plan_text(self) -> str:
        """The bucket plan, as the compile log names it: each variable's bounds, or its sizes with a static
        program each."""
        if self.per_size:
            return "a static program per shape, " + ", ".join(
                f"{n} = {self.bounds[n][0]}..{self.bounds[n][-1]}" for n in self.names)
        return "; ".join(f"{n} <= {', '.join(map(str, self.bounds[n]))}" for n in self.names)

    def per_size_note(self) -> str:
        """What a per-size plan compiles now and what at call time."""
        wide = [n for n in self.names if len(self.bounds[n]) < self.variables[n][2] - self.variables[n][0] + 1]
        if not wide:
            return f"a static program for each of the {len(self.buckets())} shapes in range, compiled now"
        return (f"the range is too wide for a static program per shape (at most {MAX_STATIC_PROGRAMS}): "
                + ", ".join(f"{n} = {self.bounds[n][0]}..{self.bounds[n][-1]}" for n in self.names)
                + " compile now; other sizes of " + ", ".join(wide) + " compile at their first call")

    def _compile_bucket(self, bucket: Tuple[int, ...], compile_one: Callable[[bytes, str], Any],
                        specialize: Callable[[List[Tuple[int, ...]]], bytes], what: str) -> None:
        """Compile `bucket`'s program. A bucket whose bounds the program rejects (a reshape of 3 rows to
        (2, -1); two batch dims that must be equal, bounded apart) is left out (logged), but for the one of
        the opt sizes: its shapes compile at their first call, where an invalid shape is reported."""
        buckets = self.buckets()
        where = f"bucket {buckets.index(bucket) + 1}/{len(buckets)} of the declared range"
        shapes = self.bucket_shapes(bucket)
        opt = tuple(self.variables[n][1] for n in self.names)
        if self.exact(bucket):
            why = f"{where}: " + ", ".join(f"{n} = {b}" for n, b in zip(self.names, bucket))
            try:
                module = specialize(shapes)
            except Exception as e:
                if bucket == opt:
                    raise
                logger.log(f"[compile] {what}: {where} left out (the program is not valid for these shapes: "
                           f"{_first_line(e)})", "compile")
                return
            self.programs[bucket] = (compile_one(module, why), [])
            return
        try:
            module, out_dims = bound_module(self.module_bytes, shapes, self.dynamic_dims, self._lowest_shapes(bucket))
        except SmallSize as e:
            if len(buckets) == 1:
                raise
            logger.log(f"[compile] {what}: {where}: no bounded program ({e}); each of its sizes gets a bucket of "
                       "its own", "compile")
            self._small.append(bucket)
            return
        except Unsupported:
            raise
        except Exception as e:  # (shape refinement failed: if a static program for the bounds fails too, they are invalid)
            if bucket == opt or _valid(specialize, shapes):
                raise
            logger.log(f"[compile] {what}: {where} left out (the program is not valid for its bounds: "
                       f"{_first_line(e)}); its shapes compile at their first call", "compile")
            return
        why = f"{where}: " + ", ".join(f"{n} <= {b}" for n, b in zip(self.names, bucket))
        self.programs[bucket] = (compile_one(module, why), out_dims)

    def _lowest_shapes(self, bucket: Tuple[int, ...]) -> List[Tuple[int, ...]]:
        """The smallest shapes `bucket` holds: each variable at the size after the bound below its own."""
        lows = []
        for n, b in zip(self.names, bucket):
            k = self.bounds[n].index(b)
            lows.append(self.bounds[n][k - 1] + 1 if k > 0 else self.variables[n][0])
        return self.bucket_shapes(tuple(lows))

    # ---- saving the compiled code -----------------------------------------------------------------------
    def serialize(self) -> List[Tuple[List[int], List[List[int]], bytes]]:
        """Each bucket's bounds, output dims and compiled program (bytes). A program XLA cannot serialize (on
        jaxlib 0.10, XLA:CPU's sort) is saved without its code (empty bytes, logged), so that loading finds the
        same plan and compiles that program (see ``Program.compile_range``)."""
        saved = []
        for bucket, (exe, out_dims) in self.programs.items():
            loaded = self._loaded_code.get(bucket)
            try:
                data = loaded[1] if loaded is not None and loaded[0] is exe else \
                    _xla.serialize_executable(exe, platform(self.device))
            except Exception as e:
                data = b""
                logger.log(f"[compile] the program for {dict(zip(self.names, bucket))} is saved as StableHLO only "
                           f"(XLA cannot serialize it: {_first_line(e)}); loading compiles it", "compile")
            saved.append((list(bucket), out_dims, data))
        return saved

    def deserialize(self, saved: Sequence[Tuple[List[int], List[List[int]], bytes]]) -> None:
        """Load the compiled programs `serialize` gave (same compiler and host). Raises ValueError if they do
        not fit this range's plans: a static program per shape, an ordinary or a cheap program's buckets (each
        saved program is static or bounded as its bucket is in the plan; a static one has no output dims)."""
        saved_buckets = {tuple(b) for b, _, _ in saved}
        static = {tuple(b) for b, out_dims, _ in saved if not out_dims}
        for cheap, per_size in ((False, True), (False, False), (True, False)):
            self._plan(cheap, per_size)
            for i, n in enumerate(self.names):  # (sizes that got buckets of their own, see `_split`)
                self.bounds[n] = sorted(set(self.bounds[n]) | {b[i] for b in saved_buckets})
            self._bound_of = {n: _lookup(self.bounds[n], self.variables[n][2], per_size) for n in self.names}
            if saved_buckets <= set(self.buckets()) and all(self.exact(b) == (b in static) for b in saved_buckets):
                break
        else:
            raise ValueError("the saved programs were made for other buckets")
        self.loaded = True
        for bucket, out_dims, data in saved:
            if data:  # (no code: compiled by Program.compile_range)
                exe = _xla.deserialize_executable(data, platform(self.device), self.device.index)
                self.programs[tuple(bucket)] = (exe, [list(d) for d in out_dims])
                self._loaded_code[tuple(bucket)] = (exe, data)

    def covers(self, shapes: Sequence[Tuple[int, ...]]) -> bool:
        """Whether `shapes` are in range and their bucket has a program."""
        for (i, d) in self.dynamic_dims:
            lo, _, hi = self.variables[self.shapes[i][d]]  # type: ignore[index]
            if not lo <= shapes[i][d] <= hi:
                return False
        return self._bucket(shapes) in self.programs

    def _bucket(self, shapes: Sequence[Tuple[int, ...]]) -> Tuple[int, ...]:
        sizes: Dict[Dim, int] = {}
        for (i, d) in self.dynamic_dims:
            sizes.setdefault(self.shapes[i][d], shapes[i][d])
        return tuple(self._bound_of[n][sizes[n]] for n in self.names)

    def ready_launchers(self) -> List[Tuple[Tuple[Tuple[int, ...], ...], Any]]:
        """(input shapes, launcher) of each exact bucket whose launcher has run (``Program.warm_up``)."""
        return [(shapes, launcher) for shapes, launcher in self._launchers.items()
                if isinstance(launcher, _xla.Launcher) and launcher.out_shapes]

    def launcher(self, shapes: Tuple[Tuple[int, ...], ...], on_error: Callable[[Exception], Exception],
                 on_invalid: Optional[Callable[[Sequence[Tuple[int, ...]]], Exception]] = None) -> Any:
        """The launcher for input shapes `shapes` (which must be in range): an ``_xla.Launcher`` for an
        exact bucket, else a ``BoundedLauncher`` (`on_invalid(shapes)`: the error for shapes that the
        program's shape arithmetic rejects, see ``bounded._check_reshape_sizes``)."""
        launcher = self._launchers.get(shapes)
        if launcher is None:
            bucket = self._bucket(shapes)
            exe, out_dims = self.programs[bucket]
            if self.exact(bucket):
                launcher = _xla.Launcher(exe, on_error)
            else:
                launcher = BoundedLauncher(exe, self.bucket_shapes(bucket), shapes, self.dynamic_dims, out_dims,
                                           self.device, on_error, self._handlers.setdefault(bucket, []), on_invalid)
            if len(self._launchers) >= 4096:
                self._launchers.clear()
            self._launchers[shapes] = launcher
        return launcher


def _valid(specialize: Callable[[List[Tuple[int, ...]]], bytes], shapes: List[Tuple[int, ...]]) -> bool:
    """Whether the program takes inputs of exactly `shapes` (its shape arithmetic holds for them)."""
    try:
        specialize(shapes)
    except Exception:
        return False
    return True


def _first_line(e: Exception) -> str:
    """The reason in `e` for the compile log: its first line, and the line after it where the first only
    introduces it (``XLA:CPU failed to compile the program:``, then XLA's message)."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    return f"{lines[0]} {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else lines[0]


def _lookup(bounds: List[int], hi: int, exact: bool = False) -> List[int]:
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


class BoundedLauncher:
    """Runs a bounded program on inputs of one shape signature: pads the inputs that are smaller than
    the bucket, passes the real sizes, and gives each dynamic output as a `Padded` of its real shape
    (learned on the first run: the same on every run). Same interface as ``_xla.Launcher``. A program
    whose output dims end with ``[-1]`` also says whether the input shapes fit its shape arithmetic (the
    sizes vector's last element, read on the first run): if not, `on_invalid(shapes)` is raised."""

    def __init__(self, executable: Any, bucket_shapes: List[Tuple[int, ...]], shapes: Tuple[Tuple[int, ...], ...],
                 dynamic_dims: List[Tuple[int, int]], out_dims: List[List[int]], device: Device,
                 on_error: Callable[[Exception], Exception], handlers: List[Any],
                 on_invalid: Optional[Callable[[Sequence[Tuple[int, ...]]], Exception]] = None) -> None:
        self._execute = executable.execute_sharded
        self.error_types = _xla.runtime_error_types()
        self.on_error = on_error
        self._platform, self._index = platform(device), device.index
        # (input, bucket shape, where its data goes in the padded buffer) for each input to pad
        self._pad = [(i, bucket_shapes[i], tuple(slice(0, n) for n in shapes[i]))
                     for i in range(len(shapes)) if tuple(shapes[i]) != bucket_shapes[i]]
        self._sizes = [_xla.to_device(np.int32(shapes[i][d]), self._platform, self._index) for i, d in dynamic_dims]
        self._checked = bool(out_dims) and out_dims[-1] == [-1]
        out_dims = out_dims[:-1] if self._checked else out_dims
        self._shapes = shapes
        self._on_invalid = on_invalid
        self._num_outputs = len(out_dims)
        self._has_sizes = any(out_dims) or self._checked
        self._out_dims = out_dims
        self._out_shapes: Optional[List[Tuple[int, ...]]] = None
        # XLA's C++ result handlers (as _xla.Launcher): the same for every shape of the bucket, so shared by
        # its launchers; filled by the bucket's first run
        self._handlers = handlers

    def _run(self, buffers: List[Any]) -> Any:
        args = list(buffers)
        for i, bucket_shape, where in self._pad:
            data = np.asarray(args[i])
            padded = np.zeros(bucket_shape, dtype=data.dtype)
            padded[where] = data
            args[i] = _upload(padded, self._platform, self._index)
        return self._execute(args + self._sizes)

    def _finish(self, results: Any) -> List[Any]:
        if self._out_shapes is not None:
            outputs = results.consume_with_handlers(self._handlers)
        else:  # the first run: learn the real output shapes (the same on every run)
            if self._handlers:
                outputs = results.consume_with_handlers(self._handlers)
            else:
                outputs = [arrays[0] for arrays in results.disassemble_into_single_device_arrays()]
                self._handlers[:] = [_xla.result_handler(o) for o in outputs]
            shapes = [tuple(o.shape) for o in outputs[:self._num_outputs]]
            if self._has_sizes:
                values = np.asarray(outputs[-1]).tolist()
                if self._checked and not values.pop():
                    raise (self._on_invalid(self._shapes) if self._on_invalid is not None else
                           ValueError(f"The program is not valid for input shapes {[list(s) for s in self._shapes]}"))
                sizes = iter(values)
                shapes = [tuple(next(sizes) if d in dims else s for d, s in enumerate(shape))
                          for shape, dims in zip(shapes, self._out_dims)]
            self._out_shapes = shapes
        return [Padded(o, s, self._platform, self._index) if dims else o
                for o, s, dims in zip(outputs, self._out_shapes, self._out_dims)]  # type: ignore[arg-type]

    def __call__(self, buffers: List[Any]) -> List[Any]:
        try:
            return self._finish(self._run(buffers))
        except self.error_types as e:
            raise self.on_error(e) from None

    def steps(self) -> Tuple[Callable[[List[Any]], Any], Callable[[Any], List[Any]]]:
        return self._run, self._finish


class Padded:
    """A dynamic output of a bounded program: XLA writes it compactly at the start of its bucket-sized
    `buffer`; `shape` is its real shape. Cut to a buffer of its own (a copy) only when a consumer needs
    one; reading it into NumPy needs no cut. (A dynamic output's buffer keeps a dynamic shape even when it
    is full, which DLPack cannot export: a consumer always gets the cut.)"""

    __slots__ = ("buffer", "shape", "_platform", "_index")

    def __init__(self, buffer: Any, shape: Tuple[int, ...], platform_name: str, index: int) -> None:
        self.buffer = buffer
        self.shape = shape
        self._platform, self._index = platform_name, index

    def to_numpy(self) -> np.ndarray:
        return np.asarray(self.buffer).reshape(-1)[:math.prod(self.shape)].reshape(self.shape)

    def cut(self) -> Any:
        return _upload(self.to_numpy(), self._platform, self._index)


def _upload(array: np.ndarray, platform_name: str, index: int) -> Any:
    """A buffer with `array`'s data: small arrays are copied (measured ~10 us faster per buffer on XLA:CPU
    than sharing their memory), large ones shared."""
    if array.nbytes <= 1 << 18:
        return _xla.to_device(array, platform_name, index)
    return _xla.adopt(array, platform_name, index)
