"""A program compiled once for a range of input shapes: ``RangeProgram`` compiles the buckets ``range_plan`` plans
(each bucket's bounded program made by the pipeline's ``SHAPES`` passes, see ``pipeline``), saves and loads them,
and gives each call the launcher of the smallest bucket that holds its shapes (``launch``). No call inside the
ranges compiles.

The largest bucket compiles first: if XLA's cost analysis finds it cheap, the plan gains exact sizes; if bounded
dims cannot express the program (``passes.markers.Unsupported``), the plan becomes a static program per shape; a
bucket that needs a computed size of 0 or 1 (``markers.SmallSize``) gives each of its sizes a bucket of its own.
The other buckets then compile on several threads.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple


from tripy_flatir.logging import logger
from tripy_backend import _xla
from tripy_backend import pipeline, range_plan
from tripy_backend.range_plan import Dim
from tripy_backend.compiler import Compiler
from tripy_backend.passes.markers import SmallSize, Unsupported
from tripy_backend.devices import platform
from tripy_backend.launch import BoundedLauncher


class RangeProgram:
    """Bounded programs covering every shape in the ranges of `variables`.

    `shapes` has one entry per argument (the runtime inputs, then any fixed ones), each dim an int or a
    variable name; `compiler` compiles each static program (logging and caching)."""

    def __init__(
        self,
        module_bytes: bytes,
        shapes: Sequence[Tuple[Dim, ...]],
        variables: Dict[str, Tuple[int, int, int]],
        compiler: Compiler,
    ) -> None:
        self.shapes = [tuple(s) for s in shapes]
        self.variables = dict(variables)
        self.compiler = compiler
        self.device = compiler.device
        self.module_bytes = module_bytes
        self.dynamic_dims = [(i, d) for i, s in enumerate(self.shapes) for d, x in enumerate(s) if isinstance(x, str)]
        self.names = list(self.variables)
        self.per_size = False  # one static program per shape (a program bounded dims cannot express)
        self._small: List[Tuple[int, ...]] = []  # buckets without a bounded program, to split (see `_split`)
        self.loaded = False  # the plan was loaded (`deserialize`): compiling the programs left to compile keeps it
        self._plan(cheap=False)
        # bucket -> (compiled program, dynamic dims of each output); an exact bucket's program is static
        self.programs: Dict[Tuple[int, ...], Tuple[Any, List[List[int]]]] = {}
        self._launchers: Dict[Tuple[Tuple[int, ...], ...], Any] = {}
        self._bucket_launchers: Dict[Tuple[int, ...], Any] = {}  # each bounded bucket's, shared by its shapes

    def _plan(self, cheap: bool, per_size: bool = False) -> None:
        self.per_size = per_size
        self._small = []  # (buckets of an earlier plan)
        self.bounds = (
            range_plan.plan_sizes(self.variables) if per_size else range_plan.plan_buckets(self.variables, cheap)
        )
        # size -> bound, per variable: a call finds its bucket with one list index per variable (-1: none)
        self._bound_of = {n: range_plan.lookup(self.bounds[n], self.variables[n][2], per_size) for n in self.names}

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

    def compile(self) -> None:
        """Compile every bucket. The largest bucket is compiled first; if it is cheap, the plan gains exact buckets;
        if bounded dims cannot express the program, the plan becomes one static program per shape (`plan_sizes`). A
        bucket whose program would need a computed size of 0 or 1 (see ``markers.SmallSize``) is split: each of its
        sizes gets a bucket of its own (`_split`), compiled now too."""
        start = time.perf_counter()
        what = self.compiler.name
        with logger.progress(f"{what}: the programs of the declared range", len(self.buckets())) as progress:
            if not self.per_size:  # (a per-size plan here: loaded, with programs XLA could not save)
                try:
                    self._compile_bounded(progress)
                except Exception as e:  # Unsupported, or a bounded program the compiler rejects
                    static = {b: p for b, p in self.programs.items() if self.exact(b)}
                    self._plan(cheap=False, per_size=True)
                    self.programs = {b: p for b, p in static.items() if b in set(self.buckets())}
                    reason = _first_line(e)
                    logger.log(
                        lambda: f"[compile] {what}: no bounded programs ({reason}); " + self.per_size_note(), "compile"
                    )
            if self.per_size:
                opt = tuple(self.variables[n][1] for n in self.names)
                if opt not in self.programs:  # (a program that does not compile at all fails here, once)
                    self._compile_bucket(opt)
                self._compile_rest(progress)
            while self._small:
                small, self._small = self._small, []
                if not self._split(small):
                    logger.log(
                        f"[compile] {what}: too many sizes to give each its own bucket (at most "
                        f"{range_plan.MAX_STATIC_PROGRAMS}): the shapes of {len(small)} bucket(s) compile at "
                        "their first call",
                        "compile",
                    )
                    break
                self._compile_rest(progress)
        if not self.programs:
            raise SmallSize("every bucket needs a computed size of 0 or 1")
        logger.log(
            lambda: (
                f"[compile] {what}: {len(self.programs)} programs cover "
                + ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, _, hi) in self.variables.items())
                + f" (plan: {self.plan_text()}; {time.perf_counter() - start:.3f} s)"
            ),
            "compile",
        )

    def _compile_bounded(self, progress: Any) -> None:
        largest = tuple(self.bounds[n][-1] for n in self.names)
        if largest not in self.programs:  # (loaded from disk, see `deserialize`)
            self._compile_bucket(largest)
            progress.step_done()
        if (
            range_plan.EXACT_SIZES
            and len(self.names) == 1
            and largest in self.programs
            and not self.loaded
            and _xla.is_cheap(self.programs[largest][0], range_plan.CHEAP_FLOPS, range_plan.CHEAP_BYTES)
        ):
            self._plan(cheap=True)
            logger.log(
                f"[compile] {self.compiler.name}: a cheap program (XLA's cost analysis): each of the "
                f"{range_plan.EXACT_SIZES} shapes nearest opt gets a program of its own",
                "compile",
            )
            if self.exact(largest):
                del self.programs[largest]  # (now an exact bucket: compiled again as a static program)
        self._compile_rest(progress)

    def _compile_rest(self, progress: Any) -> None:
        """Compile the plan's buckets that have no program yet, on several threads (`progress` counts them)."""
        rest = [b for b in self.buckets() if b not in self.programs]
        progress.set_total(progress.done + len(rest))

        def compile_bucket(bucket: Tuple[int, ...]) -> None:
            self._compile_bucket(bucket)
            progress.step_done()

        # (XLA compiles one program on one thread and lets go of the GIL meanwhile: on 2 cores the 48 exact
        # programs of a small MLP compile in ~1.0 s instead of ~1.6 s)
        with ThreadPoolExecutor(max(1, min(len(rest), os.cpu_count() or 1, 8))) as pool:
            for future in [pool.submit(compile_bucket, b) for b in rest]:
                future.result()

    def _split(self, buckets: Sequence[Tuple[int, ...]]) -> bool:
        """Give each size in `buckets` (buckets without a bounded program, see ``markers.SmallSize``) a bucket of
        its own: its bound joins the plan's bounds. A program made for a bucket that is now exact (one size) is
        bounded: it is dropped, to be compiled again as a static program. False, and the plan unchanged, if the
        plan would then hold more than ``MAX_STATIC_PROGRAMS`` buckets."""
        bounds = {n: list(b) for n, b in self.bounds.items()}
        for bucket in buckets:
            for n, b in zip(self.names, bucket):
                k = bounds[n].index(b)
                low = bounds[n][k - 1] + 1 if k > 0 else self.variables[n][0]
                bounds[n] = sorted(set(bounds[n]) | set(range(low, b)))
        if math.prod(len(b) for b in bounds.values()) > range_plan.MAX_STATIC_PROGRAMS:
            return False
        self.bounds = bounds
        self._bound_of = {n: range_plan.lookup(self.bounds[n], self.variables[n][2], self.per_size) for n in self.names}
        self.programs = {b: p for b, p in self.programs.items() if self.exact(b) == (not p[1])}
        return True

    def plan_text(self) -> str:
        """The bucket plan, as the compile log names it: each variable's bounds, or its sizes with a static
        program each."""
        if self.per_size:
            return "a static program per shape, " + ", ".join(
                f"{n} = {self.bounds[n][0]}..{self.bounds[n][-1]}" for n in self.names
            )
        return "; ".join(f"{n} <= {', '.join(map(str, self.bounds[n]))}" for n in self.names)

    def per_size_note(self) -> str:
        """What a per-size plan compiles now and what at call time."""
        wide = [n for n in self.names if len(self.bounds[n]) < self.variables[n][2] - self.variables[n][0] + 1]
        if not wide:
            return f"a static program for each of the {len(self.buckets())} shapes in range, compiled now"
        return (
            f"the range is too wide for a static program per shape (at most {range_plan.MAX_STATIC_PROGRAMS}): "
            + ", ".join(f"{n} = {self.bounds[n][0]}..{self.bounds[n][-1]}" for n in self.names)
            + " compile now; other sizes of "
            + ", ".join(wide)
            + " compile at their first call"
        )

    def _compile_bucket(self, bucket: Tuple[int, ...]) -> None:
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
                module = pipeline.specialize(self.module_bytes, shapes, self.compiler.name)
            except Exception as e:
                if bucket == opt:
                    raise
                logger.log(
                    f"[compile] {self.compiler.name}: {where} left out (the program is not valid for these "
                    f"shapes: {_first_line(e)})",
                    "compile",
                )
                return
            self.programs[bucket] = (self.compiler.compile(module, why), [])
            return
        try:
            module, out_dims = pipeline.bound(
                self.module_bytes, shapes, self.dynamic_dims, self._lowest_shapes(bucket), self.compiler.name
            )
        except SmallSize as e:
            if len(buckets) == 1:
                raise
            logger.log(
                f"[compile] {self.compiler.name}: {where}: no bounded program ({e}); each of its sizes gets a "
                "bucket of its own",
                "compile",
            )
            self._small.append(bucket)
            return
        except Unsupported:
            raise
        except Exception as e:  # (refinement failed: if a static program for the bounds fails too, they are invalid)
            if bucket == opt or _valid(self.module_bytes, shapes):
                raise
            logger.log(
                f"[compile] {self.compiler.name}: {where} left out (the program is not valid for its bounds: "
                f"{_first_line(e)}); its shapes compile at their first call",
                "compile",
            )
            return
        why = f"{where}: " + ", ".join(f"{n} <= {b}" for n, b in zip(self.names, bucket))
        self.programs[bucket] = (self.compiler.compile(module, why), out_dims)

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
            try:
                data = self.compiler.code_of(exe)
            except Exception as e:
                data = b""
                logger.log(
                    f"[compile] the program for {dict(zip(self.names, bucket))} is saved as StableHLO only "
                    f"(XLA cannot serialize it: {_first_line(e)}); loading compiles it",
                    "compile",
                )
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
            self._bound_of = {n: range_plan.lookup(self.bounds[n], self.variables[n][2], per_size) for n in self.names}
            if saved_buckets <= set(self.buckets()) and all(self.exact(b) == (b in static) for b in saved_buckets):
                break
        else:
            raise ValueError("the saved programs were made for other buckets")
        self.loaded = True
        for bucket, out_dims, data in saved:
            if data:  # (no code: compiled by Program.compile_range)
                self.programs[tuple(bucket)] = (self.compiler.load(data), [list(d) for d in out_dims])

    def covers(self, shapes: Sequence[Tuple[int, ...]]) -> bool:
        """Whether `shapes` are in range and their bucket has a program."""
        for i, d in self.dynamic_dims:
            lo, _, hi = self.variables[self.shapes[i][d]]  # type: ignore[index]
            if not lo <= shapes[i][d] <= hi:
                return False
        return self.bucket_of(shapes) in self.programs

    def bucket_of(self, shapes: Sequence[Tuple[int, ...]]) -> Tuple[int, ...]:
        """The bucket that holds input shapes `shapes` (in range)."""
        sizes: Dict[Dim, int] = {}
        for i, d in self.dynamic_dims:
            sizes.setdefault(self.shapes[i][d], shapes[i][d])
        return tuple(self._bound_of[n][sizes[n]] for n in self.names)

    def ready_launchers(self) -> List[Tuple[Tuple[Tuple[int, ...], ...], Any]]:
        """(input shapes, launcher) of each exact bucket whose launcher has run (``Program.warm_up``)."""
        return [
            (shapes, launcher)
            for shapes, launcher in self._launchers.items()
            if isinstance(launcher, _xla.Launcher) and launcher.out_shapes
        ]

    def launcher(
        self,
        shapes: Tuple[Tuple[int, ...], ...],
        on_error: Callable[[Exception], Exception],
        on_invalid: Optional[Callable[[Sequence[Tuple[int, ...]]], Exception]] = None,
    ) -> Any:
        """The launcher for input shapes `shapes` (which must be in range): an ``_xla.Launcher`` for an
        exact bucket, else a ``BoundedLauncher`` (`on_invalid(shapes)`: the error for shapes that the
        program's shape arithmetic rejects, see ``bounded_markers._check_reshape_sizes``)."""
        launcher = self._launchers.get(shapes)
        if launcher is None:
            bucket = self.bucket_of(shapes)
            exe, out_dims = self.programs[bucket]
            if self.exact(bucket):
                launcher = _xla.Launcher(exe, on_error)
            else:
                inner = self._bucket_launchers.get(bucket)
                if inner is None:
                    inner = self._bucket_launchers[bucket] = _xla.Launcher(exe, on_error)
                launcher = BoundedLauncher(
                    inner,
                    self.bucket_shapes(bucket),
                    shapes,
                    self.dynamic_dims,
                    out_dims,
                    platform(self.device),
                    self.device.index,
                    on_invalid,
                )
            if len(self._launchers) >= 4096:
                self._launchers.clear()
            self._launchers[shapes] = launcher
        return launcher


def _valid(module_bytes: bytes, shapes: List[Tuple[int, ...]]) -> bool:
    """Whether the program takes inputs of exactly `shapes` (its shape arithmetic holds for them)."""
    try:
        pipeline.specialize(module_bytes, shapes)
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
