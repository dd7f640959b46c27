"""A program compiled once for a range of input shapes: ``RangeProgram`` compiles the buckets ``range_plan`` plans
(each bucket's bounded program made by the pipeline's ``SHAPES`` passes, see ``pipeline``), saves and loads them,
and gives each call the launcher of the best program ready for its shapes (``launch``). No call inside the
ranges compiles.

``tp.compile`` waits for one program: the largest bucket's, made for the whole range (the *cover*: it runs any
shape in range). A program whose rows are independent along its one size variable (``passes.independent_rows``)
has the static program at each bucket's bound as that bucket's program (`rows`). The other buckets then compile in
the background (``background.Jobs``), the opt shapes' program first and alone, and a call whose bucket is not ready
yet runs in the cover (for independent rows: in the smallest program ready at or above its size, opt's as soon as
it is, see ``range_plan.for_rows``). If bounded dims cannot express the program (``passes.markers.Unsupported``), the plan is a
static program per shape, all compiled before ``tp.compile`` returns; a bucket that needs a computed size of 0 or 1
(``markers.SmallSize``) gives each of its sizes a bucket of its own.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple


from tripy_flatir.logging import logger
from tripy_backend import _xla
from tripy_backend import pipeline, range_plan
from tripy_backend.range_plan import Dim
from tripy_backend.compiler import Compiler
from tripy_backend.passes import transposed_weights
from tripy_backend.passes.markers import SmallSize, Unsupported
from tripy_backend.devices import platform
from tripy_backend.background import Jobs
from tripy_backend.launch import BoundedLauncher


# A saved bucket's program (see `RangeProgram.serialize`): its bounds, its outputs' padded dims, its code, the arguments
# it reads transposed copies of
SavedBucket = Tuple[List[int], List[List[int]], bytes, List[int]]


class Compiled(NamedTuple):
    """A bucket's program: the compiled executable, each output's padded dims (none for a static program), and the
    copies of transposed weights it takes after its other arguments (``passes.transposed_weights``: the arguments
    they are copies of, and their buffers)."""

    executable: Any
    out_dims: List[List[int]]
    transposed: Sequence[int] = ()
    copies: Sequence[Any] = ()


class RangeProgram:
    """Bounded programs covering every shape in the ranges of `variables`.

    `shapes` has one entry per argument (the runtime inputs, then any fixed ones), each dim an int or a
    variable name; `compiler` compiles each static program (logging and caching). `fixed`: the first fixed
    argument (-1: not known), and `constants()` their buffers, for the copies of transposed weights that small
    buckets read (see `_copies_for`)."""

    def __init__(
        self,
        module_bytes: bytes,
        shapes: Sequence[Tuple[Dim, ...]],
        variables: Dict[str, Tuple[int, int, int]],
        compiler: Compiler,
        fixed: int = -1,
        constants: Callable[[], Sequence[Any]] = tuple,
    ) -> None:
        self.shapes = [tuple(s) for s in shapes]
        self.variables = dict(variables)
        self.compiler = compiler
        self.device = compiler.device
        self.module_bytes = module_bytes
        self.fixed, self.constants = fixed, constants
        self._copying = threading.Lock()
        self._copies: Dict[int, Any] = {}  # argument -> the buffer of its transposed copy (see `_copies_for`)
        self._copiers: List[Tuple[List[int], Any]] = []  # (arguments, the program that copies them)
        self.dynamic_dims = [(i, d) for i, s in enumerate(self.shapes) for d, x in enumerate(s) if isinstance(x, str)]
        self.names = list(self.variables)
        self.per_size = False  # one static program per shape (a program bounded dims cannot express)
        self._small: List[Tuple[int, ...]] = []  # buckets without a bounded program, to split (see `_split`)
        self.loaded = False  # the plan was loaded (`deserialize`): compiling the programs left to compile keeps it
        # The largest bucket's program is made for the whole range (its lowest shapes are the range's smallest), so
        # that it runs every shape while the other buckets compile; False if it cannot be (see `_compile_first`).
        self._cover = True
        # (bucket, its program) of the cover once compiled: kept apart from `programs`, which splitting a bucket
        # (`_split`) may change while calls run in the cover
        self._cover_program: Optional[Tuple[Tuple[int, ...], Compiled]] = None
        self._jobs: Optional[Jobs[Tuple[int, ...]]] = None  # the programs compiling in the background
        self._warm: Optional[Callable[["RangeProgram", Tuple[int, ...]], None]] = None
        self.lock = threading.RLock()  # (background compiles change the plan's programs: readers copy under it)
        self._start = time.perf_counter()
        self.cheap = False  # a cheap program (``range_plan.CHEAP_FLOPS``): its calls' shapes get static programs
        # Whether the bounded programs' rows are independent (``passes.independent_rows``: static at their bounds,
        # they run any size up to them, 0 and 1 included); None until the analysis has run, once, for the first
        # bounded bucket (see `_rows_source`)
        self.rows: Optional[bool] = None
        # (bound, module, its outputs' row dims): what ``independent-rows`` gave for the largest bucket it ran for
        # (see `_rows_source`)
        self._rows_module: Optional[Tuple[int, bytes, List[List[int]]]] = None
        self._plan()
        # bucket -> its program (see `Compiled`); an exact bucket's program is static
        self.programs: Dict[Tuple[int, ...], Compiled] = {}
        self._launchers: Dict[Tuple[Tuple[int, ...], ...], Any] = {}
        self._bucket_launchers: Dict[Tuple[int, ...], Any] = {}  # each bounded bucket's, shared by its shapes
        self._left_out: set = set()  # buckets whose bounds the program rejects (`_compile_bucket`)
        self._valid_shapes: Dict[Tuple[Tuple[int, ...], ...], bool] = {}  # (see `covers`)
        # shapes -> (the bucket standing in for theirs while it compiles, its launcher for them)
        self._provisional: Dict[Tuple[Tuple[int, ...], ...], Tuple[Tuple[int, ...], BoundedLauncher]] = {}

    def _plan(self, per_size: bool = False) -> None:
        self.per_size = per_size
        self._small = []  # (buckets of an earlier plan)
        self.bounds = range_plan.plan_sizes(self.variables) if per_size else range_plan.plan_buckets(self.variables)
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

    def compile(
        self, wait: bool = True, warm: Optional[Callable[["RangeProgram", Tuple[int, ...]], None]] = None
    ) -> None:
        """Compile the plan. First the program every call can run (`_compile_first`): the largest bucket's, made for
        the whole range (the *cover*). If bounded dims cannot express the program, the plan becomes one static
        program per shape (`plan_sizes`), all compiled now. Unless `wait`, the rest of the plan then compiles in the
        background (``background.Jobs``: a call runs the best program ready for its shape, see `launcher`;
        `warm(self, bucket)` runs each new program once) and this returns. A bucket whose program would need a
        computed size of 0 or 1 (see ``markers.SmallSize``) is split: each of its sizes gets a bucket of its own
        (`_split`)."""
        self._start = time.perf_counter()
        self._warm = warm
        what = self.compiler.name
        with logger.progress(f"{what}: the programs of the declared range", len(self.buckets())) as progress:
            if not self.per_size:  # (a per-size plan here: loaded, with programs XLA could not save)
                try:
                    self._compile_first(progress)
                    if wait or not self._covered():
                        self._compile_rest(progress)
                except Exception as e:  # Unsupported, or a bounded program the compiler rejects
                    static = {b: p for b, p in self.programs.items() if self.exact(b)}
                    self._plan(per_size=True)
                    self.programs = {b: p for b, p in static.items() if b in set(self.buckets())}
                    reason = _first_line(e)
                    logger.log(
                        lambda: f"[compile] {what}: no bounded programs ({reason}); " + self.per_size_note(), "compile"
                    )
            if self.per_size:
                opt = self._opt_bucket()
                if opt not in self.programs:  # (a program that does not compile at all fails here, once)
                    self._compile_bucket(opt)
                self._compile_rest(progress)
            if wait or not self._covered():
                self._compile_small(progress)
                self._log_ready()
                return
            progress.set_total(progress.done)  # (the bar covers what tp.compile waits for)
        rest = self._missing()
        logger.log(
            lambda: (
                f"[compile] {what}: ready in {time.perf_counter() - self._start:.3f} s: "
                f"one program for the whole range; {len(rest)} more compile in the background"
            ),
            "compile",
        )
        # (the cover runs once last: at its bound, the largest bucket's run costs the most)
        self._jobs = Jobs(self._compile_later, rest + [self._largest()], finished=self._log_ready)
        self._jobs.start()

    def _compile_first(self, progress: Any) -> None:
        """The cover: the largest bucket's program, made for the whole range (see `compile`); then whether the
        program is cheap (`_find_cheap`), and if it is not, finer buckets (``range_plan.finer``: one variable).
        (Not the opt bucket's too: two programs side by side took ~1.7x one on 2 cores, where the plan's pass
        pipeline holds the GIL; opt's compiles first in the background, alone: see ``background``.)"""
        largest = self._largest()
        if largest not in self.programs:  # (loaded, see `deserialize`)
            self._compile_bucket(largest)
            progress.step_done()
        if largest in self._small:  # no bounded program for the whole range: the largest bucket for its own sizes
            self._small.remove(largest)
            self._cover = False
            self._compile_bucket(largest)
        elif largest in self.programs and not self.exact(largest) and not self.loaded:
            self._cover_program = (largest, self.programs[largest])
        self._find_cheap()
        if self.loaded:
            return
        if self.rows:
            (name,) = self.names  # (one variable: ``passes.independent_rows``)
            logger.log(
                f"[compile] {self.compiler.name}: the rows along {name} are independent: the plan's programs are "
                "static programs at their bounds, and any size up to a bound runs in its program",
                "compile",
            )
        if len(self.names) == 1 and self._covered():
            (name,) = self.names
            lo, opt, hi = self.variables[name]
            if self.rows:
                self.bounds[name] = range_plan.for_rows(self.bounds[name], lo, opt)
            if not self.cheap:
                count = range_plan.MAX_PROGRAMS if self.rows else len(self.bounds[name]) + range_plan.FINER_BOUNDED
                self.bounds[name] = range_plan.finer(self.bounds[name], lo, hi, min(count, range_plan.MAX_PROGRAMS))
            self._bound_of[name] = range_plan.lookup(self.bounds[name], hi)

    def _find_cheap(self) -> None:
        """Whether XLA's cost analysis finds the largest bucket's program cheap (see ``range_plan``): then the shapes
        its calls bring get static programs of their own (``Program.launcher``). (Not for a loaded plan: a saved
        executable compiles nothing, and jaxlib 0.6's cost analysis of a loaded program finds everything cheap.)"""
        largest = self.programs.get(self._largest())
        self.cheap = bool(
            range_plan.EXACT_SIZES
            and not self.loaded
            and largest is not None
            and _xla.is_cheap(largest[0], range_plan.CHEAP_FLOPS, range_plan.CHEAP_BYTES)
        )
        if self.cheap:
            logger.log(
                f"[compile] {self.compiler.name}: a cheap program (XLA's cost analysis): each input shape its calls "
                f"bring gets a static program of its own, compiled in the background (at most "
                f"{range_plan.EXACT_SIZES})",
                "compile",
            )

    def _largest(self) -> Tuple[int, ...]:
        return tuple(self.bounds[n][-1] for n in self.names)

    def _opt_bucket(self) -> Tuple[int, ...]:
        return tuple(self._bound_of[n][self.variables[n][1]] for n in self.names)

    def _covered(self) -> bool:
        """Whether one program runs every shape of the ranges: the cover (see `compile`)."""
        return self._cover_program is not None

    def _missing(self) -> List[Tuple[int, ...]]:
        """The plan's buckets without a program: those of sizes 0 and 1 first (unless the rows are independent, the
        cover does not run them, see `covers`), then opt's and its neighbours (the likeliest calls)."""
        opt = self._opt_bucket()
        rest = [b for b in self.buckets() if b not in self.programs]
        return sorted(
            rest,
            key=lambda b: (
                min(b) > 1 or bool(self.rows),
                sum(abs(self.bounds[n].index(x) - self.bounds[n].index(o)) for n, x, o in zip(self.names, b, opt)),
            ),
        )

    def _compile_later(self, bucket: Tuple[int, ...]) -> None:
        """Compile `bucket` in the background (see `compile`) and run it once (`warm`): a failure is logged, and its
        shapes keep running the cover; a bucket that must be split adds its sizes' buckets to the jobs."""
        try:
            if bucket not in self.programs:
                self._compile_bucket(bucket)
            if bucket in self.programs and self._warm is not None:
                self._warm(self, bucket)
        except Exception as e:
            logger.log(
                f"[compile] {self.compiler.name}: the program for {dict(zip(self.names, bucket))} failed to "
                f"compile ({_first_line(e)}); its shapes run in the program for the whole range",
                "compile",
            )
        with self.lock:
            small, self._small = self._small, []
            before, had = set(self.buckets()), set(self.programs)
            if small and self._split(small):
                assert self._jobs is not None  # (new buckets, and those whose bounded program is now dropped)
                self._jobs.add([b for b in self.buckets() if b not in before or (b in had and b not in self.programs)])

    def stop(self) -> None:
        """Compile no more of the plan in the background (its caller is gone; a program compiling finishes)."""
        dropped = self._jobs.cancel() if self._jobs is not None else 0
        if dropped:
            logger.log(
                f"[compile] {self.compiler.name}: its executable is gone: the plan's {dropped} programs left are not "
                "compiled",
                "compile",
            )

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait until every program of the plan is compiled (at most `timeout` seconds); whether they are."""
        return self._jobs is None or self._jobs.wait(timeout)

    @property
    def ready(self) -> bool:
        """Whether every program of the plan is compiled."""
        return self._jobs is None or self._jobs.done

    def _log_ready(self) -> None:
        logger.log(
            lambda: (
                f"[compile] {self.compiler.name}: {len(self.programs)} programs cover "
                + ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, _, hi) in self.variables.items())
                + f" (plan: {self.plan_text()}; {time.perf_counter() - self._start:.3f} s)"
            ),
            "compile",
        )

    def _compile_small(self, progress: Any) -> None:
        """Split the buckets without a bounded program (see `_split`) and compile their sizes' programs."""
        while self._small:
            small, self._small = self._small, []
            if not self._split(small):
                logger.log(
                    f"[compile] {self.compiler.name}: too many sizes to give each its own bucket (at most "
                    f"{range_plan.MAX_STATIC_PROGRAMS}): the shapes of {len(small)} bucket(s) compile at "
                    "their first call",
                    "compile",
                )
                break
            self._compile_rest(progress)
        if not self.programs:
            raise SmallSize("every bucket needs a computed size of 0 or 1")

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
                self._left_out.add(bucket)
                return
            self._publish(bucket, module, why, [])
            return
        try:
            source, row_dims = self._rows_source(bucket, shapes)
            module, out_dims, rows = pipeline.bound(
                source, shapes, self.dynamic_dims, self._lowest_shapes(bucket), self.compiler.name, rows=row_dims
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
            self._left_out.add(bucket)
            return
        self._publish(
            bucket, module, f"{where}: " + ", ".join(f"{n} <= {b}" for n, b in zip(self.names, bucket)), out_dims
        )
        with self.lock:
            self.rows = rows

    def _publish(self, bucket: Tuple[int, ...], module: bytes, why: str, out_dims: List[List[int]]) -> None:
        """Compile `bucket`'s static `module` (bounded: `out_dims`, its outputs' padded dims) and make it the bucket's
        program, once the copies of the transposed weights it reads are made (``passes.transposed_weights``)."""
        # (the cover's rows are taken at its bounds: tp.compile waits for it, and it needs copies only where even its
        # bounds are few rows)
        lows = self.bucket_shapes(bucket) if bucket == self._largest() else self._lowest_shapes(bucket)
        module, transposed = pipeline.weight_copies(
            module, self.bucket_shapes(bucket), lows, self.fixed, self.compiler.name, platform(self.device)
        )
        exe = self.compiler.compile(module, why)
        copies = self._copies_for(transposed)
        with self.lock:
            self.programs[bucket] = Compiled(exe, out_dims, transposed, copies)

    def _copies_for(self, transposed: Sequence[int]) -> List[Any]:
        """The buffers of the copies that a bucket reading arguments `transposed` takes (``passes.transposed_weights``),
        made for each argument the first time a bucket needs it: by a program of the transposes alone (`_copiers`),
        run on the baked-in data (`constants`)."""
        if not transposed:
            return []
        with self._copying:  # (buckets compile on several threads: each copy is made once)
            missing = [k for k in dict.fromkeys(transposed) if k not in self._copies]
            if missing:
                module = transposed_weights.copies_module(self.module_bytes, missing)
                copier = self.compiler.compile(
                    module, f"copies of {len(missing)} transposed weight(s) for the buckets of few rows"
                )
                self._copiers.append((missing, copier))
                self._run_copier(missing, copier)
            return [self._copies[k] for k in transposed]

    def _run_copier(self, transposed: Sequence[int], copier: Any) -> None:
        fixed = self.constants()
        copies = _xla.Launcher(copier, _as_is)([fixed[k - self.fixed] for k in transposed])
        self._copies.update(zip(transposed, copies))

    def _rows_source(
        self, bucket: Tuple[int, ...], shapes: List[Tuple[int, ...]]
    ) -> Tuple[bytes, Optional[List[List[int]]]]:
        """The module a bounded bucket's passes start from and, where its rows are independent, the outputs' row dims.
        ``independent-rows`` runs once, for the first bounded bucket (the cover): the module it gives holds for every
        size up to that bucket's bound, so each smaller bucket starts from it (a larger one, which a loaded plan may
        compile, is analyzed again). A module whose rows are not independent is its own source."""
        with self.lock:
            known = self._rows_module
        if self.rows is False or len(self.names) != 1:
            return self.module_bytes, None
        if known is not None and known[0] >= bucket[0]:
            return known[1], known[2]
        variables = [str(self.shapes[i][d]) for i, d in self.dynamic_dims]
        found = pipeline.rows_module(self.module_bytes, shapes, self.dynamic_dims, variables, self.compiler.name)
        with self.lock:
            if found is None:
                self.rows = False
                return self.module_bytes, None
            if self._rows_module is None or self._rows_module[0] < bucket[0]:
                self._rows_module = (bucket[0], *found)
        return found

    def _lowest_shapes(self, bucket: Tuple[int, ...]) -> List[Tuple[int, ...]]:
        """The smallest shapes `bucket` holds: each variable at the size after the bound below its own (the range's
        smallest for the cover, see `compile`)."""
        if self._cover and bucket == self._largest():  # (never a size of 0 or 1: see `covers`)
            return self.bucket_shapes(tuple(max(2, self.variables[n][0]) for n in self.names))
        lows = []
        for n, b in zip(self.names, bucket):
            k = self.bounds[n].index(b)
            lows.append(self.bounds[n][k - 1] + 1 if k > 0 else self.variables[n][0])
        return self.bucket_shapes(tuple(lows))

    # ---- saving the compiled code -----------------------------------------------------------------------
    def serialize(self) -> Tuple[List[SavedBucket], List[Tuple[List[int], bytes]]]:
        """Each bucket's bounds, output dims, compiled program (bytes) and the transposed weights it reads copies
        of; and the programs that make those copies (the arguments each copies, its code). A program XLA cannot
        serialize (on jaxlib 0.10, XLA:CPU's sort) is saved without its code (empty bytes, logged), so that loading
        finds the same plan and compiles that program (see ``Program.compile_range``). Waits for the plan's
        background compiles: a saved executable is always complete."""
        self.wait()
        saved = []
        for bucket, program in self.programs.items():
            try:
                data = self.compiler.code_of(program.executable)
            except Exception as e:
                data = b""
                logger.log(
                    f"[compile] the program for {dict(zip(self.names, bucket))} is saved as StableHLO only "
                    f"(XLA cannot serialize it: {_first_line(e)}); loading compiles it",
                    "compile",
                )
            saved.append((list(bucket), program.out_dims, data, list(program.transposed)))
        with self._copying:
            copiers = [(list(k), self.compiler.code_of(exe)) for k, exe in self._copiers]
        return saved, copiers

    def deserialize(self, saved: Sequence[SavedBucket], copiers: Sequence[Tuple[List[int], bytes]] = ()) -> None:
        """Load the compiled programs `serialize` gave (same compiler and host), and make the copies of transposed
        weights their buckets read with `copiers`. Raises ValueError if they do not fit this range's plans: a static
        program per shape, or the buckets (each saved program is static or bounded as its bucket is in the plan; a
        static one has no output dims)."""
        saved_buckets = {tuple(b[0]) for b in saved}
        static = {tuple(b[0]) for b in saved if not b[1]}
        for per_size in (True, False):
            self._plan(per_size)
            for i, n in enumerate(self.names):  # (sizes that got buckets of their own, see `_split`)
                kept = {b[i] for b in saved_buckets}
                # (a saved bounded bucket means the bound below it was none: opt's, where rows are independent,
                # ``range_plan.for_rows``)
                dropped = {b[i] - 1 for b in saved_buckets - static} - kept
                self.bounds[n] = sorted((set(self.bounds[n]) | kept) - dropped)
            self._bound_of = {n: range_plan.lookup(self.bounds[n], self.variables[n][2], per_size) for n in self.names}
            if saved_buckets <= set(self.buckets()) and all(self.exact(b) == (b in static) for b in saved_buckets):
                break
        else:
            raise ValueError("the saved programs were made for other buckets")
        self.loaded = True
        for transposed, data in copiers:
            copier = self.compiler.load(data)
            self._copiers.append((list(transposed), copier))
            self._run_copier(transposed, copier)
        for bucket, out_dims, data, transposed in saved:
            if data:  # (no code: compiled by Program.compile_range)
                copies = self._copies_for(transposed)
                self.programs[tuple(bucket)] = Compiled(
                    self.compiler.load(data), [list(d) for d in out_dims], transposed, copies
                )

    def covers(self, shapes: Sequence[Tuple[int, ...]]) -> bool:
        """Whether `shapes` are in range and a program runs them: their bucket's, or the cover."""
        for i, d in self.dynamic_dims:
            lo, _, hi = self.variables[self.shapes[i][d]]  # type: ignore[index]
            if not lo <= shapes[i][d] <= hi:
                return False
        bucket = self.bucket_of(shapes)
        if bucket in self.programs:
            return True
        if bucket in self._left_out or not self._covered():
            return False
        if not self.rows and any(shapes[i][d] <= 1 for i, d in self.dynamic_dims):
            # A size of 0 or 1 runs in its own bucket only (compiled first, see `_missing`): XLA's dynamic padder
            # divides by real sizes, and a dim of bound 1 is static, so it broadcasts where a padded one would not.
            return self._wait_for(shapes)
        # The cover runs them while their bucket compiles. With one variable, the cover checks their sizes itself
        # (``bounded_markers``); sizes of several variables may also have to agree (two batch dims added): a bucket
        # bounding them apart holds only shapes the program rejects, which the cover must not run.
        if len(self.names) > 1:
            valid = self._valid_shapes.get(tuple(shapes))
            if valid is None:
                valid = self._valid_shapes[tuple(shapes)] = _valid(self.module_bytes, list(shapes))
            return valid
        return True

    def _wait_for(self, shapes: Sequence[Tuple[int, ...]]) -> bool:
        """Wait for the program of `shapes`' bucket (compiled next); whether it has one (the one case where a call
        waits). Their bucket is looked up again while waiting: splitting a bucket (`_split`) gives its sizes new
        ones."""
        waited = None
        while True:
            bucket = self.bucket_of(shapes)
            if bucket in self.programs:
                return True
            if self._jobs is None or self._jobs.done:
                return self.bucket_of(shapes) in self.programs  # (a split may have landed since the lookup)
            if bucket != waited:
                self._jobs.first(bucket)
                waited = bucket
            time.sleep(0.001)

    def bucket_of(self, shapes: Sequence[Tuple[int, ...]]) -> Tuple[int, ...]:
        """The bucket that holds input shapes `shapes` (in range)."""
        return tuple(self._bound_of[n][size] for n, size in zip(self.names, self.bucket_sizes(shapes)))

    def bucket_sizes(self, shapes: Sequence[Tuple[int, ...]]) -> Tuple[int, ...]:
        """The size of each variable in input shapes `shapes`."""
        sizes: Dict[Dim, int] = {}
        for i, d in self.dynamic_dims:
            sizes.setdefault(self.shapes[i][d], shapes[i][d])
        return tuple(sizes[n] for n in self.names)

    def running(self, shapes: Sequence[Tuple[int, ...]]) -> Tuple[Tuple[int, ...], Any, bool]:
        """(bucket, compiled program, whether it is bounded) that runs input shapes `shapes` (in range, see
        `covers`) now: their bucket's, or the cover's while theirs compiles."""
        bucket = self.bucket_of(shapes)
        with self.lock:
            program = self.programs.get(bucket)
            if program is not None:
                return bucket, program.executable, not self.exact(bucket)
            bucket, program = self._stand_in(shapes)
            return bucket, program.executable, True

    def _stand_in(self, shapes: Sequence[Tuple[int, ...]]) -> Tuple[Tuple[int, ...], Compiled]:
        """(bucket, program) that runs `shapes` while their bucket compiles: the cover; for independent rows (which
        run any size up to their bound), the smallest bucket ready that holds them. (Under `lock`.)"""
        assert self._cover_program is not None  # (`covers`)
        if self.rows:
            (size,) = self.bucket_sizes(shapes)
            ready = [b for b in self.programs if b[0] >= size and not self.exact(b)]
            if ready:
                return min(ready), self.programs[min(ready)]
        return self._cover_program

    def ready_launchers(self) -> List[Tuple[Tuple[Tuple[int, ...], ...], Any]]:
        """(input shapes, launcher) of each exact bucket whose launcher has run (``Program._warm_up``)."""
        with self.lock:
            launchers = list(self._launchers.items())
        return [
            (shapes, launcher)
            for shapes, launcher in launchers
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
        if launcher is not None:
            return launcher
        bucket = self.bucket_of(shapes)
        with self.lock:
            program = self.programs.get(bucket)
            if program is None:  # (still compiling: a stand-in runs the call, and the bucket compiles next)
                if self._jobs is not None:
                    self._jobs.first(bucket)
                bucket, program = self._stand_in(shapes)
                stand_in, launcher = self._provisional.get(shapes, (None, None))
                if stand_in != bucket:
                    launcher = self._bounded(bucket, program, shapes, on_error, on_invalid)
                    self._provisional[shapes] = (bucket, launcher)
                return launcher
            if self.exact(bucket):
                launcher = _xla.Launcher(program.executable, on_error, extra=program.copies)
            else:
                launcher = self._bounded(bucket, program, shapes, on_error, on_invalid)
            if len(self._launchers) >= 4096:
                self._launchers.clear()
            self._launchers[shapes] = launcher
            self._provisional.pop(shapes, None)
        return launcher

    def _bounded(
        self,
        bucket: Tuple[int, ...],
        program: Compiled,
        shapes: Tuple[Tuple[int, ...], ...],
        on_error: Callable[[Exception], Exception],
        on_invalid: Optional[Callable[[Sequence[Tuple[int, ...]]], Exception]],
    ) -> BoundedLauncher:
        """A launcher of `bucket`'s bounded `program` for input shapes `shapes`."""
        inner = self._bucket_launchers.get(bucket)
        if inner is None:
            inner = self._bucket_launchers[bucket] = _xla.Launcher(program.executable, on_error, extra=program.copies)
        launcher = BoundedLauncher(
            inner,
            self.bucket_shapes(bucket),
            shapes,
            self.dynamic_dims,
            program.out_dims,
            platform(self.device),
            self.device.index,
            on_invalid,
        )
        launcher.provisional = bucket != self.bucket_of(shapes)
        return launcher


def _valid(module_bytes: bytes, shapes: List[Tuple[int, ...]]) -> bool:
    """Whether the program takes inputs of exactly `shapes` (its shape arithmetic holds for them)."""
    try:
        pipeline.specialize(module_bytes, shapes)
    except Exception:
        return False
    return True


def _as_is(e: Exception) -> Exception:
    return e


def _first_line(e: Exception) -> str:
    """The reason in `e` for the compile log: its first line, and the line after it where the first only
    introduces it (``XLA:CPU failed to compile the program:``, then XLA's message)."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    return f"{lines[0]} {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else lines[0]
