"""A program compiled once for a range of input shapes: a few bounded programs (see ``bounded``).

Each dynamic dim belongs to a *variable* (dims that share a name share one) with a range
``(min, opt, max)``. Each variable gets a few *bounds*: the powers of two in the range, ``opt`` (so the
shape the user optimizes for runs unpadded) and ``max``. A bucket is one bound per variable; every
bucket is compiled up front (`RangeProgram.compile`), and a call runs the smallest bucket that holds
its shapes: inputs are padded to the bucket's shapes, the program is told their real sizes, and the
outputs come back at their real sizes. No call inside the ranges compiles.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from tripy_flatir.device import device as Device
from tripy_flatir.logging import logger
from tripy_backend import _xla
from tripy_backend.bounded import SmallSize, bound_module
from tripy_backend.devices import compiler_name, platform

# Dims: an int (static) or the name of a variable.
Dim = Union[int, str]
MAX_PROGRAMS = 16  # buckets per executable, over all variables


def bounds_for(lo: int, opt: int, hi: int, count: Optional[int] = None) -> List[int]:
    """The bounds of one variable: powers of two in [lo, hi], `opt` and `hi`; at most `count` of them
    (every other power of two dropped until they fit, then `opt`; `hi` is always kept). A bound of 1
    serves size 1 only (a dim bounded by 1 is static to XLA: it cannot be told the size is 0), so a
    range from 0 with a bound of 1 also gets a bound of 0 (one program more than `count`)."""
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
    return kept


def plan_buckets(variables: Dict[str, Tuple[int, int, int]]) -> Dict[str, List[int]]:
    """Bounds per variable such that the buckets (one bound per variable) number at most MAX_PROGRAMS."""
    per_var = max(1, int(MAX_PROGRAMS ** (1 / max(len(variables), 1)) + 1e-9))
    return {name: bounds_for(*r, count=per_var) for name, r in variables.items()}


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
        self.bounds = plan_buckets(self.variables)
        self.names = list(self.variables)
        # size -> bound, per variable: a call finds its bucket with one list index per variable
        self._bound_of = {n: _lookup(self.bounds[n], self.variables[n][2]) for n in self.names}
        self.programs: Dict[Tuple[int, ...], Tuple[Any, List[List[int]]]] = {}
        self._launchers: Dict[Tuple[Tuple[int, ...], ...], "BoundedLauncher"] = {}

    def buckets(self) -> List[Tuple[int, ...]]:
        return list(itertools.product(*(self.bounds[n] for n in self.names)))

    def bucket_shapes(self, bucket: Tuple[int, ...]) -> List[Tuple[int, ...]]:
        value = dict(zip(self.names, bucket))
        return [tuple(value[x] if isinstance(x, str) else x for x in s) for s in self.shapes]

    def exact(self, bucket: Tuple[int, ...]) -> bool:
        """Whether `bucket` holds one size per variable (its bounds are the real sizes)."""
        for n, b in zip(self.names, bucket):
            lo = self.variables[n][0]
            k = self.bounds[n].index(b)
            if b != lo and (k == 0 or self.bounds[n][k - 1] != b - 1):
                return False
        return True

    def compile(self, compile_one: Callable[[bytes, str], Any], what: str) -> None:
        """Compile every bucket (`what` names the program in the log). A bucket whose program would need
        a computed size of 0 or 1 (see ``bounded.SmallSize``) is left out: its shapes compile as they come."""
        buckets = self.buckets()
        start = time.perf_counter()
        for k, bucket in enumerate(buckets):
            try:
                module, out_dims = bound_module(self.module_bytes, self.bucket_shapes(bucket), self.dynamic_dims,
                                                self.exact(bucket))
            except SmallSize as e:
                if len(buckets) == 1:
                    raise
                logger.log(f"[compile] {what}: bucket {k + 1}/{len(buckets)} left out ({e}); its shapes compile "
                           "at their first call", "compile")
                continue
            why = (f"bucket {k + 1}/{len(buckets)} of the declared range: "
                   + ", ".join(f"{n} <= {b}" for n, b in zip(self.names, bucket)))
            self.programs[bucket] = (compile_one(module, why), out_dims)
        if not self.programs:
            raise SmallSize("every bucket needs a computed size of 0 or 1")
        logger.log(lambda: f"[compile] {what}: {len(buckets)} bounded programs cover "
                   + ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, _, hi) in self.variables.items())
                   + f" ({time.perf_counter() - start:.3f} s)", "compile")

    # ---- saving the compiled code -----------------------------------------------------------------------
    def fingerprint(self, optimization_level: int) -> str:
        return _xla.compiler_fingerprint(platform(self.device), self.device.index, optimization_level)

    def serialize(self) -> List[Tuple[List[int], List[List[int]], bytes]]:
        """Each bucket's bounds, output dims and compiled program (bytes)."""
        return [(list(bucket), out_dims, _xla.serialize_executable(exe, platform(self.device)))
                for bucket, (exe, out_dims) in self.programs.items()]

    def deserialize(self, saved: Sequence[Tuple[List[int], List[List[int]], bytes]]) -> None:
        """Load the compiled programs `serialize` gave (same compiler and host). Raises ValueError if they do
        not cover this range's buckets."""
        if not {tuple(b) for b, _, _ in saved} <= set(self.buckets()):
            raise ValueError("the saved programs were made for other buckets")
        for bucket, out_dims, data in saved:
            exe = _xla.deserialize_executable(data, platform(self.device), self.device.index)
            self.programs[tuple(bucket)] = (exe, [list(d) for d in out_dims])

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

    def launcher(self, shapes: Tuple[Tuple[int, ...], ...], on_error: Callable[[Exception], Exception]) -> "BoundedLauncher":
        """The launcher for input shapes `shapes` (which must be in range)."""
        launcher = self._launchers.get(shapes)
        if launcher is None:
            bucket = self._bucket(shapes)
            exe, out_dims = self.programs[bucket]
            launcher = BoundedLauncher(exe, self.bucket_shapes(bucket), shapes, self.dynamic_dims, out_dims,
                                       self.device, on_error)
            if len(self._launchers) >= 4096:
                self._launchers.clear()
            self._launchers[shapes] = launcher
        return launcher


def _lookup(bounds: List[int], hi: int) -> List[int]:
    table = []
    k = 0
    for size in range(hi + 1):
        while bounds[k] < size:
            k += 1
        table.append(bounds[k])
    return table


class BoundedLauncher:
    """Runs a bounded program on inputs of one shape signature: pads the inputs that are smaller than
    the bucket, passes the real sizes, and cuts the outputs to their real shapes (learned on the first
    run: the same on every run). Same interface as ``_xla.Launcher``."""

    def __init__(self, executable: Any, bucket_shapes: List[Tuple[int, ...]], shapes: Tuple[Tuple[int, ...], ...],
                 dynamic_dims: List[Tuple[int, int]], out_dims: List[List[int]], device: Device,
                 on_error: Callable[[Exception], Exception]) -> None:
        self._execute = executable.execute_sharded
        self.error_types = _xla.runtime_error_types()
        self.on_error = on_error
        self._platform, self._index = platform(device), device.index
        self._pad = [(i, bucket_shapes[i]) for i in range(len(shapes)) if tuple(shapes[i]) != bucket_shapes[i]]
        self._sizes = [_xla.to_device(np.int32(shapes[i][d]), self._platform, self._index) for i, d in dynamic_dims]
        self._num_outputs = len(out_dims)
        self._has_sizes = any(out_dims)
        self._out_dims = out_dims
        self._out_shapes: Optional[List[Tuple[int, ...]]] = None
        self._handlers: Any = None  # after the first run: XLA's C++ result handlers, as _xla.Launcher

    def _run(self, buffers: List[Any]) -> Any:
        args = list(buffers)
        for i, bucket_shape in self._pad:
            args[i] = _pad(args[i], bucket_shape, self._platform, self._index)
        return self._execute(args + self._sizes)

    def _finish(self, results: Any) -> List[Any]:
        if self._handlers is not None:
            outputs = results.consume_with_handlers(self._handlers)
        else:  # the first run: learn the real output shapes (the same on every run)
            outputs = [arrays[0] for arrays in results.disassemble_into_single_device_arrays()]
            self._handlers = [_xla.result_handler(o) for o in outputs]
            shapes = [tuple(o.shape) for o in outputs[:self._num_outputs]]
            if self._has_sizes:
                sizes = iter(np.asarray(outputs[-1]).tolist())
                shapes = [tuple(next(sizes) if d in dims else s for d, s in enumerate(shape))
                          for shape, dims in zip(shapes, self._out_dims)]
            self._out_shapes = shapes
        # (a dynamic output's buffer has a dynamic shape even when it is full, which DLPack cannot export:
        # always rewrapped)
        return [_cut(o, s, self._platform, self._index) if dims else o
                for o, s, dims in zip(outputs, self._out_shapes, self._out_dims)]  # type: ignore[arg-type]

    def __call__(self, buffers: List[Any]) -> List[Any]:
        try:
            return self._finish(self._run(buffers))
        except self.error_types as e:
            raise self.on_error(e) from None

    def steps(self) -> Tuple[Callable[[List[Any]], Any], Callable[[Any], List[Any]]]:
        return self._run, self._finish


def _pad(buffer: Any, shape: Tuple[int, ...], platform_name: str, index: int) -> Any:
    """`buffer`'s data at the start of each dim of a zero buffer of `shape` (the bucket)."""
    data = np.asarray(buffer)
    padded = np.zeros(shape, dtype=data.dtype)
    padded[tuple(slice(0, n) for n in data.shape)] = data
    return _upload(padded, platform_name, index)


def _cut(buffer: Any, shape: Tuple[int, ...], platform_name: str, index: int) -> Any:
    """A dynamic output: XLA writes it compactly at the start of the padded buffer."""
    data = np.asarray(buffer).reshape(-1)[:math.prod(shape)].reshape(shape)
    return _upload(data, platform_name, index)


def _upload(array: np.ndarray, platform_name: str, index: int) -> Any:
    """A buffer with `array`'s data: small arrays are copied (measured ~10 us faster per buffer on XLA:CPU
    than sharing their memory), large ones shared."""
    if array.nbytes <= 1 << 18:
        return _xla.to_device(array, platform_name, index)
    return _xla.adopt(array, platform_name, index)
