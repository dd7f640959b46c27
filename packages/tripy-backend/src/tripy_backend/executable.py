"""A compiled program: StableHLO in, device buffers in and out.

A shape-polymorphic module (``?`` dims in its inputs) is specialized to each concrete input-shape
signature on first use; the compiled specializations are kept in a bounded LRU cache.
"""

from __future__ import annotations

import io
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, List, Optional, Sequence, Tuple

from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException
from tripy_flatir.function import location_name
from tripy_flatir.logging import logger
from tripy_backend import _xla, disk_cache
from tripy_backend.devices import compiler_name, platform

# Maps an error text (which may mention MLIR locations) to a full report; given by the caller, who
# knows the FlatIR/user code the module came from.
ErrorMapper = Callable[[Optional[str], str], str]
_LOCK = threading.Lock()


class Executable:
    MAX_SPECIALIZATIONS = 64

    def __init__(self, module_bytes: bytes, input_shapes: Sequence[Tuple[int, ...]], device: Device,
                 error_mapper: Optional[ErrorMapper] = None, optimization_level: int = 3) -> None:
        self.module_bytes = module_bytes
        self.optimization_level = optimization_level
        self.input_shapes = [tuple(s) for s in input_shapes]
        self.device = device
        self.error_mapper = error_mapper
        self.is_dynamic = any(d < 0 for s in self.input_shapes for d in s)
        self._compiled: "OrderedDict[tuple, Any]" = OrderedDict()
        self._static_launcher: Optional[_xla.Launcher] = None  # made on the first run (static programs)
        if not self.is_dynamic:
            self._compiled[()] = self._compile(module_bytes)

    # ---- compile ----------------------------------------------------------------------------------
    def _error(self, headline: str, err: Exception) -> TripyException:
        text = str(err)
        name = location_name(text)
        message = f"{headline}:\n    {text.strip()}"
        return TripyException(self.error_mapper(name, message) if self.error_mapper else message)

    def _diagnostics_error(self, headline: str, diagnostics: Sequence[Any]) -> TripyException:
        """MLIR diagnostics carry ``loc("<FlatIR tensor>")``: report them against that tensor's user code."""
        lines = [f"({location_name(str(d.location)) or 'unknown'}) {d.message}" for d in diagnostics]
        name = next((location_name(str(d.location)) for d in diagnostics if location_name(str(d.location))), None)
        message = f"{headline}:\n    " + "\n    ".join(lines)
        return TripyException(self.error_mapper(name, message) if self.error_mapper else message)

    def _compile(self, module_bytes: bytes) -> Any:
        start = time.perf_counter()
        try:
            exe = disk_cache.compile(module_bytes, platform(self.device), self.device.index,  # plain compile if off
                                     optimization_level=self.optimization_level)
        except Exception as e:  # compiler errors: map back to user code
            raise self._error(f"{compiler_name(self.device)} failed to compile the program", e) from None
        logger.log("timing", lambda: f"[{compiler_name(self.device)}] compiled in {time.perf_counter() - start:.4f} s")
        return exe

    def _specialize(self, shapes: Tuple[Tuple[int, ...], ...]) -> Any:
        from jax.extend.mlir import ir

        from tripy_flatir.mlir_utils import context

        with context(), ir.Location.unknown():
            module = ir.Module.parse(self.module_bytes)
            fn = next(op for op in module.body.operations if op.operation.name == "func.func" and
                      ir.StringAttr(op.attributes["sym_name"]).value == "main")
            block = fn.regions[0].blocks[0]
            new_types = []
            for arg, shape in zip(block.arguments, shapes):
                elt = ir.RankedTensorType(arg.type).element_type
                t = ir.RankedTensorType.get(list(shape), elt)
                arg.set_type(t)
                new_types.append(t)
            # Results that are arguments themselves take the arguments' new types (func.return needs an exact
            # match); the others are refined below.
            ret = list(block.operations)[-1]
            results = [v.type for v in ret.operands]
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(new_types, results))
            try:  # inputs whose shapes the program cannot accept together (e.g. '+' of dims 2 and 4)
                module.operation.verify()
            except ir.MLIRError as e:
                raise self._diagnostics_error(f"The program cannot run on inputs of shapes {[list(s) for s in shapes]}",
                                              e.error_diagnostics) from None
            buf = io.BytesIO()
            module.operation.write_bytecode(buf)
        try:
            refined = _xla.refine_shapes(buf.getvalue())
        except Exception as e:
            raise self._error(f"The program is not valid for input shapes {[list(s) for s in shapes]}", e) from None
        return self._compile(refined)

    def executable_for(self, shapes: Tuple[Tuple[int, ...], ...]) -> Any:
        if not self.is_dynamic:
            return self._compiled[()]
        exe = self._compiled.get(shapes)
        if exe is None:
            exe = self._specialize(shapes)
            with _LOCK:  # (an executable may be called from several threads)
                self._compiled[shapes] = exe
                while len(self._compiled) > self.MAX_SPECIALIZATIONS:
                    self._compiled.popitem(last=False)
        else:
            try:
                self._compiled.move_to_end(shapes)
            except KeyError:  # evicted by another thread meanwhile
                pass
        return exe

    @property
    def num_specializations(self) -> int:
        return len(self._compiled)

    # ---- run ----------------------------------------------------------------------------------------
    def launcher(self, shapes: Tuple[Tuple[int, ...], ...]) -> "_xla.Launcher":
        """A launcher for the program specialized to input shapes `shapes` (compiled if needed): a
        callable buffers -> output buffers that does nothing else, for callers that validate shapes
        themselves and run the same signature many times (compiled mode). See ``_xla.Launcher``."""
        exe = self.executable_for(shapes)
        return _xla.Launcher(exe, self._runtime_error)

    def _runtime_error(self, err: Exception) -> TripyException:
        return self._error("The program failed at run time", err)

    def __call__(self, buffers: Sequence[Any]) -> List[Any]:
        if not self.is_dynamic:  # eager mode's programs: run through a launcher, the least overhead there is
            launcher = self._static_launcher
            if launcher is None:
                launcher = self._static_launcher = _xla.Launcher(self._compiled[()], self._runtime_error)
            return launcher(buffers if type(buffers) is list else list(buffers))
        exe = self.executable_for(tuple(tuple(b.shape) for b in buffers))
        try:
            return _xla.execute(exe, buffers)
        except _xla.runtime_error_types() as e:
            raise self._runtime_error(e) from None
