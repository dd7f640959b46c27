"""``Program``: the backend's compiled program. StableHLO in, device buffers in and out.

Eager evaluation and ``tp.Executable`` both run through it, one way: ``launcher(shapes)`` gives the
program specialized to one input-shape signature (compiled on first use), a callable buffers -> output
buffers; ``program(buffers)`` is ``program.launcher(<the buffers' shapes>)(buffers)``.

A static module has one signature, compiled when the program is made. A shape-polymorphic module
(``?`` dims in its inputs) is compiled for its declared ranges by `compile_range` (a few bounded
programs, see ``ranges``); shapes outside them (or a module bounded programs cannot express) are
specialized to each concrete signature on first use, kept in a bounded LRU cache. Every compilation
is logged under the ``compile`` topic: what, why, how long.

Errors from the verifier, the compiler and the runtime are reported against the user's code through
the locations the module's ops carry (``tripy_flatir.locations``), so a program loaded from disk maps
them as well as one built in this process.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tripy_flatir import locations
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException
from tripy_flatir.logging import logger
from tripy_backend import _xla, disk_cache, size_errors
from tripy_backend.devices import compiler_name, platform
from tripy_backend.ranges import Dim, RangeProgram

Shapes = Tuple[Tuple[int, ...], ...]
_LOCK = threading.Lock()


class Program:
    MAX_SPECIALIZATIONS = 64

    def __init__(self, module_bytes: bytes, input_shapes: Sequence[Tuple[int, ...]], device: Device,
                 optimization_level: int = 3, name: str = "program") -> None:
        self.name = name
        self.module_bytes = module_bytes
        self.optimization_level = optimization_level
        self.input_shapes = [tuple(s) for s in input_shapes]
        self.device = device
        self.is_dynamic = any(d < 0 for s in self.input_shapes for d in s)
        self._launchers: "OrderedDict[Shapes, _xla.Launcher]" = OrderedDict()
        self._static: Any = None  # the launcher of a static program (its only signature)
        self.ranges: Optional[RangeProgram] = None  # set by compile_range
        if not self.is_dynamic:
            self._static = self._launchers[()] = _xla.Launcher(
                self._compile(module_bytes, f"input shapes {[list(s) for s in self.input_shapes]}"),
                self._runtime_error)

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
        if self.ranges is not None and self.ranges.covers(shapes):
            return self.ranges.launcher(shapes, self._runtime_error)  # type: ignore[return-value]
        launcher = self._launchers.get(shapes)
        if launcher is None:
            launcher = _xla.Launcher(self._specialize(shapes), self._runtime_error)
            with _LOCK:  # (a program may be called from several threads)
                self._launchers[shapes] = launcher
                while len(self._launchers) > self.MAX_SPECIALIZATIONS:
                    self._launchers.popitem(last=False)
        else:
            try:
                self._launchers.move_to_end(shapes)
            except KeyError:  # evicted by another thread meanwhile
                pass
        return launcher

    @property
    def num_specializations(self) -> int:
        return len(self._launchers)

    # ---- compiling --------------------------------------------------------------------------------
    def _compile(self, module_bytes: bytes, why: str) -> Any:
        start = time.perf_counter()
        try:
            exe = disk_cache.compile(module_bytes, platform(self.device), self.device.index,  # plain compile if off
                                     optimization_level=self.optimization_level)
        except Exception as e:  # compiler errors: mapped to user code through the ops' locations
            raise self._size_error(f"{compiler_name(self.device)} failed to compile the program", str(e)) from None
        logger.log(lambda: f"[{compiler_name(self.device)}] compiled in {time.perf_counter() - start:.4f} s", "timing")
        logger.log(lambda: f"[compile] {compiler_name(self.device)}: {self.name} ({why}) in "
                           f"{time.perf_counter() - start:.3f} s", "compile")
        return exe

    def compile_range(self, shapes: Sequence[Tuple[Dim, ...]], variables: Dict[str, Tuple[int, int, int]],
                      saved: Optional[Tuple[str, List[Any]]] = None) -> bool:
        """Compile bounded programs for every input shape in range: `shapes` names each dynamic dim's
        variable, `variables` gives each variable's (min, opt, max). False (logged) if the program cannot
        be expressed with bounded dims; its shapes are then compiled as they come. `saved` is what
        `saved_range` gave (fingerprint, programs): loaded instead of compiled when it was made by the same
        compiler on the same kind of host; otherwise a warning says so and the programs are rebuilt."""
        ranges = RangeProgram(self.module_bytes, shapes, variables, self.device)
        if saved is not None:
            fingerprint, programs = saved
            if fingerprint == ranges.fingerprint(self.optimization_level):
                try:
                    ranges.deserialize(programs)
                    self.ranges = ranges
                    logger.log(f"[compile] {self.name}: loaded {len(programs)} compiled programs "
                               f"(plan: {ranges.plan_text()})", "compile")
                    if len(programs) < len(ranges.buckets()):  # programs XLA could not serialize
                        return self._compile_ranges(ranges)
                    return True
                except Exception as e:
                    reason = f"its compiled code does not load ({str(e).strip() or type(e).__name__})"
            else:
                reason = "its compiled code was made by another compiler or on another kind of host"
            warnings.warn(f"{self.name}: {reason}; compiling it again from its StableHLO.", stacklevel=2)
            ranges = RangeProgram(self.module_bytes, shapes, variables, self.device)
        return self._compile_ranges(ranges)

    def _compile_ranges(self, ranges: RangeProgram) -> bool:
        """Compile the programs of `ranges` it does not hold yet; False (logged) if there are none."""
        try:
            ranges.compile(self._compile, self._specialized_module, self.name)
        except Exception as e:  # a program that does not compile even for one static shape
            self.ranges = None
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            logger.log(f"[compile] {self.name}: no programs for the range ({reason}); each new input shape "
                       "compiles at its first call", "compile")
            return False
        self.ranges = ranges
        return True

    def warm_up(self, input_dtypes: Sequence[Any], constants: Sequence[Any]) -> None:
        """Run each bounded program once, on zeros at its bucket's shapes (`input_dtypes`: NumPy dtypes of
        the runtime inputs; `constants`: the fixed arguments' buffers). A compiled program's first run
        pays one-time costs (oneDNN sets up its kernels for the shapes, up to tens of milliseconds) that
        belong to tp.compile, not to the first request at a size."""
        if self.ranges is None:
            return
        start = time.perf_counter()
        plat = platform(self.device)
        for bucket in self.ranges.programs:
            shapes = self.ranges.bucket_shapes(bucket)
            zeros = [_xla.to_device(np.zeros(s, dt), plat, self.device.index) for s, dt in zip(shapes, input_dtypes)]
            self.ranges.launcher(tuple(shapes), self._runtime_error)(zeros + list(constants))
        logger.log(lambda: f"[compile] {self.name}: ran each bounded program once "
                           f"({time.perf_counter() - start:.3f} s)", "compile")

    def saved_range(self) -> Optional[Tuple[str, List[Any]]]:
        """(compiler fingerprint, compiled bounded programs) to save, or None if there are none."""
        if self.ranges is None:
            return None
        return self.ranges.fingerprint(self.optimization_level), self.ranges.serialize()

    def _specialize(self, shapes: Shapes) -> Any:
        """Compile the module for the static input shapes `shapes`."""
        return self._compile(self._specialized_module(shapes),
                             f"specialized for input shapes {[list(s) for s in shapes]} at call time")

    def _specialized_module(self, shapes: Sequence[Tuple[int, ...]]) -> bytes:
        """The module for the static input shapes `shapes` (bytecode, shapes refined)."""
        headline = f"The program cannot run on inputs of shapes {[list(s) for s in shapes]}"
        module = _with_input_shapes(self.module_bytes, shapes, headline)
        try:
            return _xla.refine_shapes(module)  # type: ignore[no-any-return]
        except Exception as e:
            raise _error(f"The program is not valid for input shapes {[list(s) for s in shapes]}", [str(e)]) from None

    def _runtime_error(self, err: Exception) -> TripyException:
        return self._size_error("The program failed at run time", str(err))

    def _size_error(self, headline: str, message: str) -> TripyException:
        """An error report; one about a size (which names no op) is located at the largest tensor."""
        extra, located_at = size_errors.largest_op(self.module_bytes, message)
        return TripyException(locations.report(headline, [message, *extra], located_at))


def _error(headline: str, messages: Sequence[str]) -> TripyException:
    return TripyException(locations.report(headline, messages))


def _with_input_shapes(module_bytes: bytes, shapes: Sequence[Tuple[int, ...]], headline: str) -> bytes:
    """The module (bytecode) with its main function's arguments given the static shapes `shapes`,
    verified: inputs whose shapes the program cannot accept together (e.g. ``+`` of dims 2 and 4) are
    reported here, against the user's code."""
    from jax.extend.mlir import ir

    from tripy_flatir.mlir_utils import bytecode, context, main_function

    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        fn = main_function(module)
        block = fn.regions[0].blocks[0]
        new_types = []
        for arg, shape in zip(block.arguments, shapes):
            t = ir.RankedTensorType.get(list(shape), ir.RankedTensorType(arg.type).element_type)
            arg.set_type(t)
            new_types.append(t)
        # Results that are arguments themselves take the arguments' new types (func.return needs an exact
        # match); shape refinement refines the others.
        results = [v.type for v in list(block.operations)[-1].operands]
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(new_types, results))
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            diagnostics = e.error_diagnostics
            raise TripyException(locations.report(headline, [f"({locations.describe(d.location)}) {d.message}"
                                                             for d in diagnostics],
                                                  [str(d.location) for d in diagnostics])) from None
        return bytecode(module)
