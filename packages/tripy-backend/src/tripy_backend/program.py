"""``Program``: the backend's compiled program. StableHLO in, device buffers in and out.

Eager evaluation and ``tp.Executable`` both run through it, one way: ``launcher(shapes)`` gives the
program specialized to one input-shape signature (compiled on first use), a callable buffers -> output
buffers; ``program(buffers)`` is ``program.launcher(<the buffers' shapes>)(buffers)``.

A static module has one signature, compiled when the program is made. A shape-polymorphic module
(``?`` dims in its inputs) is compiled for its declared ranges by `compile_range` (a few bounded
programs, see ``ranges``); shapes outside them (or a module bounded programs cannot express) are
specialized to each concrete signature on first use, kept in a bounded LRU cache. Every compilation
is logged under the ``compile`` topic: what, why, how long.

``saved_code()`` gives every compiled program of a ``Program`` (the static one, the bounded ones, the
specializations) as bytes with the compiler fingerprint (``cpu_plan.fingerprint``); a ``Program`` made
with them (``saved=``) on the same compiler and host loads them instead of compiling. On another
fingerprint it says so once (a warning, and on the ``compile`` topic) and compiles from the StableHLO.

Errors from the verifier, the compiler and the runtime are reported against the user's code through
the locations the module's ops carry (``tripy_flatir.locations``), so a program loaded from disk maps
them as well as one built in this process.
"""

from __future__ import annotations

import functools
import threading
import time
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from tripy_flatir import locations, sharding
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException, TripyWarning
from tripy_flatir.logging import logger
from tripy_flatir.mlir_utils import bytecode
from tripy_backend import _xla, cpu_plan, kernels, pipeline, range_check, range_plan
from tripy_backend.background import Jobs
from tripy_backend.launch import BoundedLauncher
from tripy_backend.compiler import Compiler, size_error
from tripy_backend.devices import platform
from tripy_backend.ranges import Dim, RangeProgram, SavedBucket

Shapes = Tuple[Tuple[int, ...], ...]
_LOCK = threading.Lock()


@dataclass
class SavedCode:
    """The compiled programs of a ``Program`` as bytes (``Compiler.code_of``), for the compiler
    and host of `fingerprint`: the static program, or the bounded programs of the declared range (each
    bucket's bounds, output dims, code and the arguments it reads transposed copies of; None: the program has
    none) with the programs that make those copies (the arguments each copies, its code), and the input-shape
    specializations compiled as they came (each with its input shapes)."""

    fingerprint: str
    static: Optional[bytes] = None
    buckets: Optional[List[SavedBucket]] = None
    specializations: List[Tuple[List[List[int]], bytes]] = field(default_factory=list)
    copiers: List[Tuple[List[int], bytes]] = field(default_factory=list)


class Program:
    MAX_SPECIALIZATIONS = 64

    def __init__(
        self,
        module_bytes: bytes,
        input_shapes: Sequence[Tuple[int, ...]],
        device: Device,
        optimization_level: int = 3,
        name: str = "program",
        saved: Optional[SavedCode] = None,
        num_devices: int = 1,
    ) -> None:
        self.name = name
        self.num_devices = num_devices  # > 1: an SPMD program (static shapes only), one part per device
        self.module_bytes = module_bytes
        self.optimization_level = optimization_level
        self.input_shapes = [tuple(s) for s in input_shapes]
        self.device = device
        self.compiler = Compiler(device, optimization_level, name, num_devices, module_bytes)
        self.is_dynamic = any(d < 0 for s in self.input_shapes for d in s)
        self._launchers: "OrderedDict[Shapes, _xla.Launcher]" = OrderedDict()
        self._pending: Set[Shapes] = set()  # specializations compiling in the background
        self._specializing: Optional[Jobs[Shapes]] = None  # their thread (one per program; ends when idle)
        self._static: Any = None  # the launcher of a static program (its only signature)
        self.ranges: Optional[RangeProgram] = None  # set by compile_range
        self.runtime_inputs: Optional[int] = None  # how many inputs are the caller's (the rest: baked-in data)
        # Counts the programs made ready in the background (a range's buckets, a cheap program's specializations);
        # `on_ready`'s listeners are called after each (weakly held: an executable keeps its program, not the reverse)
        self.version = 0
        self._listeners: "List[weakref.WeakMethod[Callable[[], None]]]" = []
        # (a function of the module, not a bound method: launchers keep it, and a launcher that kept the program
        # alive would make a reference cycle, so an evicted program's compiled code would wait for the cycle
        # collector instead of going at once)
        self._runtime_error = functools.partial(size_error, module_bytes, "The program failed at run time")
        self._saved = self._usable(saved)  # saved code that this compiler and host can load (or None)
        if not self.is_dynamic:
            code = self._saved.static if self._saved is not None else None
            exe = self._load(code) if code is not None else None
            if exe is None:
                exe = self.compiler.compile(module_bytes, f"input shapes {[list(s) for s in self.input_shapes]}")
            self._static = self._launchers[()] = self._new_launcher(exe)
        elif self._saved is not None:
            for shapes, data in self._saved.specializations:
                exe = self._load(data)
                if exe is not None:
                    self._launchers[tuple(tuple(s) for s in shapes)] = _xla.Launcher(exe, self._runtime_error)

    # ---- running ----------------------------------------------------------------------------------
    def __call__(self, buffers: List[Any]) -> List[Any]:
        """Run on `buffers` (a list): the launcher for their shapes, compiled if needed."""
        launcher = self._static
        if launcher is None:
            launcher = self.launcher(tuple(tuple(b.shape) for b in buffers))
        return launcher(buffers)  # type: ignore[no-any-return]

    def launcher(self, shapes: Shapes = ()) -> "_xla.Launcher":
        """The program specialized to input shapes `shapes` (ignored by a static program), compiled if
        needed: a callable buffers -> output buffers that does nothing else, for callers that validate
        shapes themselves and run one signature many times (see ``_xla.Launcher``)."""
        if self._static is not None:
            return self._static  # type: ignore[no-any-return]
        # A specialization (compiled at call time, in the background, or loaded) before the range's buckets
        launcher = self._launchers.get(shapes)
        if launcher is not None:
            try:
                self._launchers.move_to_end(shapes)
            except KeyError:  # evicted by another thread meanwhile
                pass
            return launcher
        ranges = self.ranges
        if ranges is not None and ranges.covers(shapes):
            launch = ranges.launcher(shapes, self._runtime_error, self._invalid_shapes)
            if ranges.cheap and not launch.provisional and isinstance(launch, BoundedLauncher) and launch.pads:
                launch.provisional = self._specialize_later(shapes)  # (until the shapes' static program is ready)
            return launch  # type: ignore[no-any-return]
        launcher = _xla.Launcher(self._specialize(shapes), self._runtime_error)
        self._keep(shapes, launcher)
        return launcher

    def on_ready(self, listener: Callable[[], None]) -> None:
        """Call `listener` (a bound method) whenever a program is ready in the background: a caller that keeps a
        provisional launcher (``BoundedLauncher.provisional``) forgets it then. `version` tells a caller that
        asked for a launcher before a program was ready and kept it after."""
        self._listeners.append(weakref.WeakMethod(listener))  # type: ignore[arg-type]

    def _ready(self) -> None:
        with _LOCK:
            self.version += 1
        for ref in list(self._listeners):
            listener = ref()
            if listener is not None:
                listener()

    def specialized(self, shapes: Shapes) -> bool:
        """Whether input shapes `shapes` run a program specialized to them (not a range's bucket)."""
        return shapes in self._launchers

    def _keep(self, shapes: Shapes, launcher: "_xla.Launcher") -> None:
        """Keep the specialization for `shapes` (the oldest go past ``MAX_SPECIALIZATIONS``)."""
        with _LOCK:  # (a program may be called from several threads)
            self._launchers[shapes] = launcher
            while len(self._launchers) > self.MAX_SPECIALIZATIONS:
                self._launchers.popitem(last=False)

    def _specialize_later(self, shapes: Shapes) -> bool:
        """Compile a static program for `shapes` in the background (a cheap range program's call, see
        ``range_plan``); False if there are ``range_plan.EXACT_SIZES`` already."""
        new = None
        with _LOCK:
            if shapes in self._pending:
                return True
            if len(self._launchers) + len(self._pending) >= range_plan.EXACT_SIZES:
                return False
            self._pending.add(shapes)
            # (one thread for all of them: starting a thread waits for it to run, which took a call 4-70 ms while
            # the plan's compiles held the GIL, and each shape on a thread of its own competed with the plan)
            if self._specializing is None or not self._specializing.add([shapes]):
                self._specializing = new = Jobs(self._specialize_in_background, [shapes], threads=1)
        if new is not None:
            new.start()
        return True

    def _specialize_in_background(self, shapes: Shapes) -> None:
        try:
            exe = self.compiler.compile(
                self._specialized_module(shapes),
                f"specialized for input shapes {[list(s) for s in shapes]}, in the background: a cheap program's call",
            )
            self._keep(shapes, _xla.Launcher(exe, self._runtime_error))
            self._ready()
        except Exception as e:  # (its calls keep running in their bucket)
            logger.log(f"[compile] {self.name}: no static program for {[list(s) for s in shapes]} ({e})", "compile")
        finally:
            with _LOCK:
                self._pending.discard(shapes)

    def _new_launcher(self, exe: Any) -> "_xla.Launcher":
        if self.num_devices == 1:
            return _xla.Launcher(exe, self._runtime_error)
        shapes, dtypes = sharding.result_types(self.module_bytes)
        handlers = _xla.sharded_result_handlers(exe, platform(self.device), self.num_devices, shapes, dtypes)
        return _xla.Launcher(exe, self._runtime_error, handlers, shapes)

    @property
    def num_specializations(self) -> int:
        return len(self._launchers)

    # ---- compiling --------------------------------------------------------------------------------
    def compile_range(
        self,
        shapes: Sequence[Tuple[Dim, ...]],
        variables: Dict[str, Tuple[int, int, int]],
        input_dtypes: Sequence[Any] = (),
        constants: Callable[[], Sequence[Any]] = tuple,
        wait: bool = True,
    ) -> bool:
        """Compile bounded programs for every input shape in range: `shapes` names each dynamic dim's
        variable, `variables` gives each variable's (min, opt, max). False (logged) if the program cannot
        be expressed with bounded dims; its shapes are then compiled as they come. Saved code that this
        compiler and host can load (see ``SavedCode``) is loaded instead of compiled. Unless `wait`, returns once
        a program runs every shape in range and the rest of the plan compiles in the background (see
        ``RangeProgram.compile``; `wait` waits for it). Each program runs once as it is ready (`_warm_up`: NumPy
        dtypes of the runtime inputs; `constants` gives the fixed arguments' buffers, asked for as each program is
        ready: the caller may still be computing them while the programs compile)."""
        fixed = -1 if self.runtime_inputs is None else self.runtime_inputs
        ranges = RangeProgram(self.module_bytes, shapes, variables, self.compiler, fixed, constants)
        warm = functools.partial(self._new_program, list(input_dtypes))
        if self._saved is not None:
            if self._saved.buckets is None:
                logger.log(
                    f"[compile] {self.name}: no bounded programs (none when it was saved); each new input "
                    "shape compiles at its first call",
                    "compile",
                )
                return False
            try:
                ranges.deserialize(self._saved.buckets, self._saved.copiers)
                self.ranges = ranges
                logger.log(
                    f"[compile] {self.name}: loaded {len(ranges.programs)} compiled programs "
                    f"(plan: {ranges.plan_text()})",
                    "compile",
                )
                if len(ranges.programs) < len(ranges.buckets()):  # programs XLA could not serialize
                    return self._compile_ranges(ranges, warm, wait=True)
                self._warm_ready(ranges, warm)
                return True
            except Exception as e:
                self._fall_back(f"its compiled code does not load ({str(e).strip() or type(e).__name__})")
                ranges = RangeProgram(self.module_bytes, shapes, variables, self.compiler, fixed, constants)
        return self._compile_ranges(ranges, warm, wait)

    def _compile_ranges(self, ranges: RangeProgram, warm: Callable[[RangeProgram, Any], None], wait: bool) -> bool:
        """Compile the programs of `ranges` it does not hold yet; False (logged) if there are none."""
        self.ranges = ranges
        try:
            ranges.compile(wait, warm)
        except Exception as e:  # a program that does not compile even for one static shape
            self.ranges = None
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            logger.log(
                f"[compile] {self.name}: no programs for the range ({reason}); each new input shape "
                "compiles at its first call",
                "compile",
            )
            return False
        if ranges.ready:  # (else the background runs each program once as it is ready, the cover last)
            self._warm_ready(ranges, warm)
        return True

    def _warm_ready(self, ranges: RangeProgram, warm: Callable[[RangeProgram, Any], None]) -> None:
        """Run each program of `ranges` that is ready now once (see `_warm_up`; the others run as they are ready)."""
        start = time.perf_counter()
        with ranges.lock:
            ready = list(ranges.programs)
        for bucket in ready:
            warm(ranges, bucket)
        logger.log(
            lambda: f"[compile] {self.name}: ran each ready program once ({time.perf_counter() - start:.3f} s)",
            "compile",
        )

    def _new_program(self, input_dtypes: List[Any], ranges: RangeProgram, bucket: Any) -> None:
        """`bucket`'s program is ready: run it once (`_warm_up`), then tell the listeners (`on_ready`)."""
        try:
            self._warm_up(input_dtypes, ranges, bucket)
        finally:
            self._ready()

    def _warm_up(self, input_dtypes: List[Any], ranges: RangeProgram, bucket: Any) -> None:
        """Run `bucket`'s program once, on zeros at its shapes (`input_dtypes`: NumPy dtypes of the runtime inputs;
        ``ranges.constants()``: the fixed arguments' buffers). A compiled program's first run pays one-time costs (oneDNN sets
        up its kernels for the shapes, up to tens of milliseconds) that belong to tp.compile, not to the first
        request at a size. Not a program that XLA's cost analysis says does more than ``range_plan.WARM_FLOPS`` of
        work (one whose cost it cannot tell runs)."""
        try:
            fixed = ranges.constants()
        except Exception:  # (the caller's to report: tp.compile raises the error of evaluating its baked-in data)
            return
        if len(input_dtypes) + len(fixed) != len(ranges.shapes):
            return  # (no inputs to run it on: a caller that only compiles)
        with ranges.lock:
            compiled = ranges.programs.get(bucket)
        work = None if compiled is None else _xla.costs(compiled.executable)[0]
        if compiled is None or (work is not None and work > range_plan.WARM_FLOPS):
            return
        shapes = ranges.bucket_shapes(bucket)
        plat = platform(self.device)
        zeros = [_xla.to_device(np.zeros(s, dt), plat, self.device.index) for s, dt in zip(shapes, input_dtypes)]
        try:
            ranges.launcher(tuple(shapes), self._runtime_error, self._invalid_shapes)(zeros + list(fixed))
        except TripyException:  # (a bucket's bounds that the program rejects: its other shapes run)
            pass

    def stop_background(self) -> None:
        """Its caller is gone (a dropped executable): the programs not yet compiling in the background, a range's
        buckets and a cheap program's specializations, are not compiled (those compiling finish)."""
        if self.ranges is not None:
            self.ranges.stop()
        with _LOCK:
            jobs = self._specializing
        if jobs is not None:
            jobs.cancel()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait until every program of the declared range's plan, and every specialization compiling in the
        background, is compiled (at most `timeout` seconds); whether they are."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        if self.ranges is not None and not self.ranges.wait(timeout):
            return False
        with _LOCK:
            jobs = self._specializing
        return jobs is None or jobs.wait(None if deadline is None else max(0.0, deadline - time.perf_counter()))

    @property
    def ready(self) -> bool:
        """Whether every program of the declared range's plan is compiled, and no specialization is compiling."""
        return (self.ranges is None or self.ranges.ready) and not self._pending

    # ---- saving and loading the compiled code ---------------------------------------------------------
    def fingerprint(self) -> str:
        """The compiler and host this program's compiled code is for (see ``cpu_plan.fingerprint``)."""
        return cpu_plan.fingerprint(platform(self.device), self.device.index, self.optimization_level)

    def saved_code(self) -> SavedCode:
        """Every compiled program of this one, as bytes (see ``SavedCode``), once the background compiles are done."""
        if self._static is not None:
            return SavedCode(self.fingerprint(), static=self.compiler.code_of(self._static.executable))
        self.wait()
        buckets, copiers = self.ranges.serialize() if self.ranges is not None else (None, [])
        with _LOCK:
            launchers = list(self._launchers.items())
        specializations = [
            ([list(s) for s in shapes], self.compiler.code_of(launch.executable)) for shapes, launch in launchers
        ]
        return SavedCode(self.fingerprint(), buckets=buckets, specializations=specializations, copiers=copiers)

    def _usable(self, saved: Optional[SavedCode]) -> Optional[SavedCode]:
        """`saved` if this compiler and host can load it; otherwise None, and a warning says so. Raises if it
        calls native kernels that are not installed here."""
        missing = kernels.missing_error(cpu_plan.saved_kernels(saved.fingerprint)) if saved is not None else None
        if missing is not None:
            raise TripyException(f"{self.name}: {missing}")
        if saved is None or saved.fingerprint == self.fingerprint():
            return saved
        self._saved = saved
        self._fall_back("its compiled code was made by another compiler or on another kind of host")
        return None

    def _load(self, data: bytes) -> Any:
        """A compiled program from saved bytes; None (after a warning, once) if they do not load."""
        try:
            return self.compiler.load(data)
        except Exception as e:
            self._fall_back(f"its compiled code does not load ({str(e).strip() or type(e).__name__})")
            return None

    def _fall_back(self, reason: str) -> None:
        """Say once, as a warning and on the ``compile`` topic, that the saved code is not used (`reason`)."""
        if self._saved is None:
            return
        self._saved = None
        message = f"{self.name}: {reason}; compiling it again from its StableHLO."
        logger.log(f"[compile] {message}", "compile")
        warnings.warn(message, TripyWarning, stacklevel=2)

    def _specialize(self, shapes: Shapes) -> Any:
        """Compile the module for the static input shapes `shapes`."""
        return self.compiler.compile(
            self._specialized_module(shapes), f"specialized for input shapes {[list(s) for s in shapes]} at call time"
        )

    def _invalid_shapes(self, shapes: Sequence[Tuple[int, ...]]) -> TripyException:
        """The error for input shapes that a bounded program found its shape arithmetic rejects: the one a
        static program for them gives (it names the op)."""
        try:
            self._specialized_module(shapes)
        except TripyException as e:
            return e
        return _error(f"The program is not valid for input shapes {[list(s) for s in shapes]}", [])

    def _specialized_module(self, shapes: Sequence[Tuple[int, ...]]) -> bytes:
        """The module for the static input shapes `shapes` (bytecode, shapes refined)."""
        try:
            return pipeline.specialize(self.module_bytes, shapes)
        except range_check.Rejected as e:
            what = "is not valid for input shapes" if e.refining else "cannot run on inputs of shapes"
            shown = shapes[: self.runtime_inputs] if self.runtime_inputs is not None else shapes  # (not the weights')
            raise TripyException(
                locations.report(f"The program {what} {[list(s) for s in shown]}", e.messages, e.located_at)
            ) from None

    def range_error(
        self,
        shapes: Sequence[Tuple[Dim, ...]],
        variables: Dict[str, Tuple[int, int, int]],
        labels: Optional[Dict[str, str]] = None,
    ) -> Optional[TripyException]:
        """For a program that does not compile for its declared range: the error naming a dynamic dim (as
        `labels` describe the variables), the sizes in its range that the program refuses and the op refusing
        them; None if every size is valid (each dim tried alone, see ``range_check``)."""

        def check(static_shapes: List[Tuple[int, ...]]) -> None:
            pipeline.specialize(self.module_bytes, static_shapes)

        found = range_check.refused_sizes(check, shapes, variables)
        if found is None:
            return None
        name, refused, accepted, rejected = found
        headline = range_check.headline(name, variables, refused, accepted, (labels or {}).get(name))
        return TripyException(locations.report(headline, rejected.messages, rejected.located_at))


def _error(headline: str, messages: Sequence[str]) -> TripyException:
    return TripyException(locations.report(headline, messages))


def compile(
    module: Any,
    input_shapes: Sequence[Tuple[int, ...]],
    device: Device,
    optimization_level: int = 3,
    name: str = "program",
    saved: Optional[SavedCode] = None,
    num_devices: int = 1,
    runtime_inputs: Optional[int] = None,
) -> Program:
    """Compile an MLIR module (``ir.Module``) or its bytecode. `input_shapes` uses -1 for dynamic dims.
    `optimization_level` (0-5): on XLA:CPU, 4 and 5 trade ~1.6x longer compiles for faster programs
    (XLA's classic CPU runtime, which sends matrix products to optimized GEMM kernels). `saved`: compiled
    code from ``Program.saved_code`` (of a saved executable), loaded instead of compiled where it fits.
    `num_devices` > 1: an SPMD program (static shapes; see ``tripy_flatir.sharding.annotate``). `runtime_inputs`:
    how many of the inputs are the caller's (the rest are baked-in data), for error messages."""
    data = module if isinstance(module, (bytes, bytearray)) else bytecode(module)
    program = Program(bytes(data), input_shapes, device, optimization_level, name, saved, num_devices)
    program.runtime_inputs = runtime_inputs
    return program
