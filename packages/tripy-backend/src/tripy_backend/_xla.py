"""The one adapter between tripy and jaxlib's XLA/PJRT runtime.

Everything that touches jaxlib's runtime API (clients, compilation, buffers, shape refinement) goes
through here, so a jax/jaxlib upgrade changes this file only.
"""

from __future__ import annotations

import functools
import operator
import threading
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np


_started: set = set()
_clients: Dict[str, Any] = {}
_client_lock = threading.Lock()


def client(platform: str = "cpu") -> Any:
    """The PJRT client for `platform`, made once per process. On the CPU tripy has a client of its own (see
    ``cpu_dispatch_is_async``); GPU platforms use the clients jax registers (plugins such as MLIR-TensorRT come
    that way). Thread-safe: threads that evaluate their first tensors at the same time get the same client
    (two clients would each own a "TFRT_CPU_0", and buffers of one cannot run on programs of the other)."""
    c = _clients.get(platform)
    if c is None:
        with _client_lock:
            c = _clients.get(platform)
            if c is None:
                c = _clients[platform] = _make_client(platform)
    return c


def _make_client(platform: str) -> Any:
    if platform == "cpu":
        import jaxlib._jax as jx

        c = jx.get_tfrt_cpu_client(asynchronous=cpu_dispatch_is_async())
    else:
        import jax.extend.backend as jax_backend

        c = jax_backend.get_backend(platform)
    _started.add(platform)
    return c


def cpu_dispatch_is_async() -> bool:
    """Whether a CPU program runs on XLA's worker threads while Python goes on (``TRIPY_CPU_ASYNC_DISPATCH=1``)
    instead of in the calling thread (the default). Eager mode uses a value right after computing it (print,
    NumPy, Python control flow), so the hand-off to a worker thread and back is pure overhead there: on the
    eager benchmark (a 64x64 matmul and 9 elementwise ops) running in the calling thread saves ~50 us of
    ~300 us. Asynchronous dispatch only pays when Python has other work to overlap with the computation."""
    import os

    return os.environ.get("TRIPY_CPU_ASYNC_DISPATCH", "0") not in ("", "0")


def started_platforms() -> set:
    """PJRT platforms whose clients have been created in this process."""
    return set(_started)


def platform_available(platform: str) -> bool:
    try:
        client(platform)
        return True
    except Exception:
        return False


def device_handle(platform: str, index: int) -> Any:
    devices = client(platform).local_devices()
    return devices[index]


# Programs compiled by XLA in this process (tests count compilations with it; loading a serialized
# program is not compiling).
compilations = 0


def compilation_count() -> int:
    """How many programs XLA has compiled in this process."""
    return compilations


def compile(module_bytes: bytes, platform: str, index: int, optimization_level: int = 3) -> Any:
    """Compile a (statically shaped) StableHLO module; returns a loaded executable."""
    import jaxlib._jax as jx

    from tripy_backend import cpu_runtime

    global compilations
    with _client_lock:
        compilations += 1
    c = client(platform)
    dev = device_handle(platform, index)
    options = jx.CompileOptions()
    # (the runtime decided once: it parses the module; compile_option_overrides without a module gives the
    # options of a program that is not a thunk-runtime one)
    thunk = platform == "cpu" and cpu_runtime.uses_thunk_runtime(module_bytes)
    options.env_option_overrides = [] if thunk else compile_option_overrides(platform, optimization_level)
    if thunk:
        module_bytes = cpu_runtime.isolate_matrix_vector_products(module_bytes)
    if hasattr(c, "compile_and_load"):
        return c.compile_and_load(module_bytes, jx.DeviceList((dev,)), options)
    return c.compile(module_bytes, options)  # older jaxlib


def is_cheap(executable: Any, max_flops: float, max_bytes: float) -> bool:
    """Whether XLA's cost analysis of a compiled program says it does little work (False if it cannot tell)."""
    try:
        cost = executable.cost_analysis()
        return float(cost.get("flops", max_flops)) < max_flops and float(cost.get("bytes accessed", max_bytes)) < max_bytes
    except Exception:  # (a backend without a cost analysis)
        return False


def compile_option_overrides(platform: str, optimization_level: int = 3, module_bytes: bytes = b"") -> list:
    """XLA options tripy sets per compilation of `module_bytes` (not process-wide, unlike XLA_FLAGS); what
    decides them is part of the persistent cache's key.

    On XLA:CPU tripy compiles for XLA's *classic* runtime (one compiled function per program; matrix
    products and convolutions rewritten to oneDNN calls; without excess precision) rather than the
    *thunk* runtime that is XLA's default (one call per kernel, Eigen dots). ``optimization_level`` 0-3
    (the default 3, and eager evaluation) generate code with LLVM at -O2, 4-5 at -O3 (XLA's default).
    Measured on GPT-2 small (2 cores): thunk/-O3 (what ``jax.jit`` uses) compiles in 3.5 s and runs in
    574 ms; classic/-O3 5.4 s and 217 ms; classic/-O2 3.2 s and 218 ms. Elementwise programs run as
    fast at -O2 as at -O3 and compile ~2x faster; small programs run ~3x faster on the classic runtime
    (less per-kernel dispatch). The classic runtime compiles on one thread, the thunk runtime in
    parallel, so on machines with many cores the thunk runtime compiles faster (in wall time).
    ``TRIPY_XLA_CPU_RUNTIME=thunk`` compiles everything with XLA's defaults instead, ``=classic`` everything
    for the classic runtime (the default, ``auto``: tripy's choice per program, below). oneDNN is slower
    than Eigen on some matmul shapes (512x512x512: ~0.75x); XNNPACK dots (``xla_cpu_use_xnnpack``) work
    with the thunk runtime only (GPT-2: 512 ms).
    Programs made of big matrix-vector products (a decoding step) compile for the thunk runtime, whose
    Eigen products use all cores (see ``cpu_runtime``).
    """
    from tripy_backend import cpu_runtime

    if platform != "cpu" or cpu_runtime.uses_thunk_runtime(module_bytes):
        return []
    options: List[Tuple[str, Any]] = [("xla_cpu_use_thunk_runtime", False), ("xla_allow_excess_precision", False)]
    if optimization_level <= 3:
        options.append(("xla_backend_optimization_level", 2))
    return options


def refine_shapes(module_bytes: bytes) -> bytes:
    """StableHLO shape refinement: propagate the static argument types through shape arithmetic."""
    import jaxlib._jax as jx

    out = jx.mlir.refine_polymorphic_shapes(module_bytes, enable_shape_assertions=True, validate_static_shapes=True,
                                            enable_shardy=False)
    return out if isinstance(out, bytes) else out.encode()


def execute(executable: Any, buffers: Sequence[Any]) -> list:
    return executable.execute(list(buffers))


def to_device(array: np.ndarray, platform: str, index: int) -> Any:
    """A new device buffer with a copy of `array`. (Always a copy: by default the CPU client aliases a
    suitably aligned host array, and the user's later writes to it would change the tensor.)"""
    target = _put_targets.get((platform, index))
    if target is None:
        import jaxlib._jax as jx

        target = _put_targets[(platform, index)] = (client(platform).buffer_from_pyval, device_handle(platform, index),
                                                     jx.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
    put, dev, copy = target
    return put(array, dev, False, copy)


def adopt(array: np.ndarray, platform: str, index: int) -> Any:
    """A device buffer with the data of `array`, an array tripy made and nobody else holds: on the CPU it
    may share its memory (PJRT keeps the array alive), which saves the copy `to_device` makes."""
    import jaxlib._jax as jx

    return client(platform).buffer_from_pyval(array, device_handle(platform, index), False,
                                              jx.HostBufferSemantics.ZERO_COPY)


# (platform, device index) -> (the client's buffer_from_pyval, the device, the copying semantics): an upload
# looks up none of them.
_put_targets: Dict[Tuple[str, int], Tuple[Any, Any, Any]] = {}


def cpu_dlpack(buffer: Any) -> Any:
    """What ``buffer.__dlpack__()`` gives for a buffer on the CPU (after waiting for its value), without
    jax's Python layers; None for buffers elsewhere."""
    global _to_dlpack
    if buffer.platform() != "cpu":
        return None
    if _to_dlpack is None:
        import jaxlib._jax as jx

        _to_dlpack = jx.buffer_to_dlpack_managed_tensor
    return _to_dlpack(buffer, stream=None)


_to_dlpack: Any = None


def runtime_error_types() -> tuple:
    import jaxlib._jax as jx

    return (jx.XlaRuntimeError,) if hasattr(jx, "XlaRuntimeError") else (RuntimeError,)


def serialize_portable_artifact(module_bytes: bytes, target_version: str) -> bytes:
    """A versioned, portable StableHLO artifact of a module (CHLO legalized to StableHLO first)."""
    import jaxlib._jax as jx

    return jx.mlir.serialize_portable_artifact(module_bytes, target_version)


def deserialize_portable_artifact(artifact: bytes) -> str:
    """The module (text) in a portable StableHLO artifact; raises if it is not a valid artifact."""
    import jaxlib._jax as jx

    out = jx.mlir.deserialize_portable_artifact(artifact)
    return out if isinstance(out, str) else out.decode()


class Launcher:
    """Runs one compiled program repeatedly with the least overhead: ``launcher(buffers)`` -> output
    buffers, with runtime errors turned into ``on_error(e)``. The first run learns each output's shape,
    dtype and placement (the same on every run); later runs build outputs with XLA's C++ result
    handlers instead of Python. After the first run, ``steps()`` gives two C-level callables with
    ``finish(execute(buffers))`` equal to a run, for callers that generate code around them (they
    then catch ``error_types`` and raise ``on_error(e)`` themselves)."""

    __slots__ = ("_execute", "_handlers", "_finish", "error_types", "on_error", "out_shapes")

    def __init__(self, executable: Any, on_error: Callable[[Exception], Exception]) -> None:
        self._execute = executable.execute_sharded
        self._handlers: List[Any] = []
        self._finish: Any = None
        self.out_shapes: Tuple[Tuple[int, ...], ...] = ()  # known after the first run
        self.error_types = runtime_error_types()
        self.on_error = on_error

    def __call__(self, buffers: List[Any]) -> List[Any]:
        try:
            if self._finish is not None:
                return self._finish(self._execute(buffers))  # type: ignore[no-any-return]
            outputs = [arrays[0] for arrays in self._execute(buffers).disassemble_into_single_device_arrays()]
        except self.error_types as e:
            raise self.on_error(e) from None
        self._handlers = [result_handler(o) for o in outputs]
        self.out_shapes = tuple(tuple(o.shape) for o in outputs)
        self._finish = operator.methodcaller("consume_with_handlers", self._handlers)
        return outputs

    def steps(self) -> Tuple[Callable[[List[Any]], Any], Callable[[Any], List[Any]]]:
        assert self._finish is not None, "steps() is known after the first run"
        return self._execute, self._finish


def result_handler(array: Any) -> Any:
    """A C++ handler that wraps a raw result like `array` (same shape, dtype, device) as an array."""
    import jax.core
    import jaxlib._jax as jx

    aval = jax.core.ShapedArray(tuple(array.shape), array.dtype)
    return jx.array_result_handler(aval, array.sharding, True, True)


# ---- persistent compilation cache support (used by disk_cache.py) -------------------------------------
def serialize_executable(executable: Any, platform: str) -> bytes:
    """The compiled program as bytes that `deserialize_executable` can load in another process."""
    return bytes(client(platform).serialize_executable(executable))


def deserialize_executable(data: bytes, platform: str, index: int) -> Any:
    import jaxlib._jax as jx

    c = client(platform)
    return c.deserialize_executable(data, jx.DeviceList((device_handle(platform, index),)), jx.CompileOptions())


def compiler_fingerprint(platform: str, index: int, optimization_level: int = 3) -> str:
    """Everything besides the program that decides what the compiler produces: jaxlib (XLA) version,
    the platform and device, the host CPU (XLA:CPU specializes code to the CPU's features), XLA_FLAGS
    and tripy's compile options."""
    from tripy_backend import cpu_runtime

    options = compile_option_overrides(platform, optimization_level)
    return f"{_host_fingerprint(platform, index)};options={options};cpu_runtime={cpu_runtime.policy()}"


@functools.lru_cache(maxsize=None)
def _host_fingerprint(platform: str, index: int) -> str:
    import hashlib
    import os
    import platform as host

    import jaxlib

    c = client(platform)
    dev = device_handle(platform, index)
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line for line in f if line.startswith(("flags", "Features"))), "")
    except OSError:
        cpu = host.processor()
    parts = [f"jaxlib={jaxlib.__version__}", f"platform={c.platform}", f"platform_version={c.platform_version}",
             f"device={dev.device_kind}:{index}", f"machine={host.machine()}",
             f"cpu={hashlib.sha256(cpu.encode()).hexdigest()[:16]}", f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')}"]
    return ";".join(parts)


def from_dlpack(capsule: Any) -> Any:
    """A CPU buffer sharing the memory of a DLPack capsule."""
    import jaxlib._jax as jx

    return jx.dlpack_managed_tensor_to_buffer(capsule, device_handle("cpu", 0), None)
