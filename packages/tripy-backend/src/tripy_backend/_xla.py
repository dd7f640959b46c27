"""The one adapter between tripy and jaxlib's XLA/PJRT runtime.

Everything that touches jaxlib's runtime API (clients, compilation, buffers, shape refinement) goes
through here, so a jax/jaxlib upgrade changes this file only.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import operator
import os
import sys
import tempfile
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from tripy_flatir.mlir_utils import bytecode, context


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

        c = jx.get_tfrt_cpu_client(asynchronous=cpu_dispatch_is_async(), **_distributed)
    else:
        import jax.extend.backend as jax_backend

        c = jax_backend.get_backend(platform)
    _started.add(platform)
    return c


# The CPU client's part in a multi-process program (``join_processes``); empty: a process of its own.
_distributed: Dict[str, Any] = {}
_coordination: List[Any] = []  # (the coordination service, in process 0, and this process's client: kept alive)


def join_processes(coordinator: str, num_processes: int, process_id: int, host: str, timeout_s: int = 60) -> None:
    """Make this process's CPU devices part of one platform with those of `num_processes` processes, through PJRT's
    distributed runtime (the coordination service that ``jax.distributed`` uses, at `coordinator`, host:port;
    process 0 runs it) with gloo's TCP collectives between the processes, which listen on `host`. Before the CPU
    client starts."""
    import jaxlib._jax as jx

    with _client_lock:
        if "cpu" in _clients:
            raise RuntimeError("the CPU runtime has started already")
        if process_id == 0:
            _coordination.append(jx.get_distributed_runtime_service(coordinator, num_processes))
        client = jx.get_distributed_runtime_client(coordinator, process_id, init_timeout=timeout_s)
        client.connect()
        _coordination.append(client)
        atexit.register(_leave_processes)
        _distributed.update(
            distributed_client=client,
            node_id=process_id,
            num_nodes=num_processes,
            collectives=jx.make_gloo_tcp_collectives(distributed_client=client, hostname=host),
        )


def _leave_processes() -> None:
    """At exit: this process's client says it is done (a barrier: it waits for the others), then process 0 stops
    the service. (A process that left without it makes the others' clients abort them.)"""
    for part in reversed(_coordination):  # (the client first)
        try:
            part.shutdown()
        except Exception:  # (the service is gone already: nothing to tell it)
            pass
    _coordination.clear()


def process_index() -> int:
    """This process's place among the processes of ``join_processes`` (0 in a process of its own)."""
    return int(_distributed.get("node_id", 0))


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


def register_cpu_custom_call(name: str, capsule: Any) -> None:
    """Register the XLA FFI handler `capsule` (typed FFI: ``api_version = 4``) as XLA:CPU's custom-call target
    `name`, in XLA's process-wide registry, which tripy's CPU client reads. jax queues CPU registrations until its
    own CPU client starts (``xla_client.make_cpu_client`` installs the handler that makes them); tripy's client
    is made without it, so the same handler is installed here first (a no-op where jax's client started)."""
    import jaxlib._jax as jx
    from jaxlib import xla_client

    try:
        import jax.ffi as ffi
    except ImportError:  # (jax < 0.4.38)
        import jax.extend.ffi as ffi  # type: ignore[no-redef]
    xla_client.register_custom_call_handler("cpu", jx.register_custom_call_target)
    ffi.register_ffi_target(name, capsule, platform="cpu", api_version=1)  # (1: typed FFI)


# Programs compiled by XLA in this process (tests count compilations with it; loading a serialized
# program is not compiling): on callers' threads, and in the background (``background.Jobs``' threads).
compilations = 0
background_compilations = 0
_thread = threading.local()  # .background: this thread compiles in the background


def compilation_count(background: bool = False) -> int:
    """How many programs XLA has compiled in this process that a caller waited for (``tp.compile``, a call, eager
    evaluation); `background`: all of them, the range plans' background compiles too."""
    return compilations + (background_compilations if background else 0)


def compile_in_background() -> None:
    """This thread's compiles are background work (see `compilation_count`)."""
    _thread.background = True


def compile(
    module_bytes: bytes, platform: str, index: int, options: Sequence[Tuple[str, Any]] = (), num_devices: int = 1
) -> Any:
    """Compile a (statically shaped) StableHLO module with XLA `options` (``pipeline.for_xla`` gives both);
    returns a loaded executable. `num_devices` > 1: an SPMD program (``tripy_flatir.sharding.annotate``)
    partitioned over the platform's first `num_devices` devices (``spmd_devices``)."""
    import jaxlib._jax as jx

    global compilations, background_compilations
    with _client_lock:
        if getattr(_thread, "background", False):
            background_compilations += 1
        else:
            compilations += 1
    c = client(platform)
    compile_options = _compile_options(platform, num_devices)
    if num_devices > 1:  # XLA:CPU's classic runtime (jaxlib < 0.8) has no collectives: it aborts the process
        options = [(k, v) for k, v in options if k != "xla_cpu_use_thunk_runtime"]
    compile_options.env_option_overrides = list(options)
    if hasattr(c, "compile_and_load"):
        return c.compile_and_load(
            module_bytes, jx.DeviceList(_program_devices(platform, index, num_devices)), compile_options
        )
    return c.compile(module_bytes, compile_options)  # older jaxlib


def _compile_options(platform: str, num_devices: int) -> Any:
    """XLA's compile options; for an SPMD program, partitioned over `num_devices` devices (one replica)."""
    import jaxlib._jax as jx

    compile_options = jx.CompileOptions()
    if num_devices > 1:
        compile_options.num_replicas = 1
        compile_options.num_partitions = num_devices
        build = compile_options.executable_build_options
        build.use_spmd_partitioning = True
        build.allow_spmd_sharding_propagation_to_output = [True]  # (results: as the partitioner finds them)
        compile_options.device_assignment = jx.DeviceAssignment.create(
            np.array([[d.id for d in spmd_devices(platform, num_devices)]])
        )
    return compile_options


def _program_devices(platform: str, index: int, num_devices: int) -> Tuple[Any, ...]:
    return tuple(spmd_devices(platform, num_devices)) if num_devices > 1 else (device_handle(platform, index),)


def device_count(platform: str = "cpu") -> int:
    """How many devices the platform has, in all processes (``XLA_FLAGS=--xla_force_host_platform_device_count=N``
    gives the CPU N)."""
    return len(client(platform).devices())


def spmd_devices(platform: str, num_devices: int) -> List[Any]:
    """The devices an SPMD program over `num_devices` runs on: the platform's first, by id (in every process)."""
    return sorted(client(platform).devices(), key=lambda d: d.id)[:num_devices]


@functools.lru_cache(maxsize=None)
def has_classic_cpu_runtime() -> bool:
    """Whether XLA:CPU still has its classic runtime (``xla_cpu_use_thunk_runtime=False``): jaxlib 0.8 removed it."""
    import jaxlib

    return _version(jaxlib.__version__) < (0, 8)


@functools.lru_cache(maxsize=None)
def matrix_vector_reads_stored_weight() -> bool:
    """Whether XLA:CPU's one-row product ``x @ W^T`` reads an ``[out, in]`` weight as stored, at the speed of an
    ``[in, out]`` one. jaxlib 0.6-0.10 do (768x3072 float32, jax.jit, 2-core VM: 0.10.2 147 us against 118 us);
    jaxlib 0.12 copies the weight transposed on every call (1,577 us against 131 us; int8 dequantized in the
    product, 1,435 us). 0.11 was not measured: it is taken as 0.12."""
    import jaxlib

    return _version(jaxlib.__version__) < (0, 11)


@functools.lru_cache(maxsize=None)
def accepts_cpu_option(name: str, value: str) -> bool:
    """Whether XLA:CPU takes the compile option `name` = `value` (options come and go between jaxlibs:
    ``xla_cpu_experimental_ynn_fusion_type`` is in 0.10, not in 0.6). One tiny compile, once per process."""
    program = b"func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}"
    try:
        compile(program, "cpu", 0, [(name, value)])
    except Exception:  # (INVALID_ARGUMENT: no such option, or a value it does not take)
        return False
    return True


def _version(text: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


def is_cheap(executable: Any, max_flops: float, max_bytes: float) -> bool:
    """Whether XLA's cost analysis of a compiled program says it does little work (False if it cannot tell, see
    `costs`)."""
    flops, accessed = costs(executable)
    return flops is not None and accessed is not None and flops < max_flops and accessed < max_bytes


def costs(executable: Any) -> Tuple[Optional[float], Optional[float]]:
    """XLA's cost analysis of a compiled program: its floating-point operations and bytes accessed, each None where
    it cannot tell (no cost analysis, or a negative count, which jaxlib 0.6's XLA:CPU gives for a large matrix
    product)."""
    try:
        cost = executable.cost_analysis()
        counts = [cost.get(k) for k in ("flops", "bytes accessed")]
    except Exception:  # (a backend without a cost analysis)
        return None, None
    flops, accessed = (float(c) if c is not None and float(c) >= 0 else None for c in counts)
    return flops, accessed


def refine_shapes(module_bytes: bytes) -> bytes:
    """StableHLO shape refinement: propagate the static argument types through shape arithmetic. The
    diagnostics jaxlib's C++ prints on the process's stderr go into the error it raises instead (tripy's
    report gives them once, at the user's line)."""
    import jaxlib._jax as jx

    with _native_stderr() as printed:
        try:
            out = jx.mlir.refine_polymorphic_shapes(
                module_bytes, enable_shape_assertions=True, validate_static_shapes=True, enable_shardy=False
            )
            error = None
        except Exception as e:
            error = e
    if error is not None:
        raise RuntimeError("\n".join(part for part in (str(error).strip(), printed[0].strip()) if part)) from None
    if printed[0]:  # (not ours to keep: e.g. another thread's output meanwhile)
        os.write(2, printed[0].encode())
    return out if isinstance(out, bytes) else out.encode()


_STDERR_LOCK = threading.Lock()


@contextlib.contextmanager
def _native_stderr() -> Iterator[List[str]]:
    """File descriptor 2, where MLIR's and XLA's C++ print diagnostics, redirected to a temporary file for the
    body; afterwards the list holds what was printed. (Process-wide: keep the body short.)"""
    printed: List[str] = []
    with _STDERR_LOCK, tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            yield printed
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            printed.append(capture.read().decode(errors="replace"))


def execute(executable: Any, buffers: Sequence[Any]) -> list:
    return executable.execute(list(buffers))


def to_device(array: np.ndarray, platform: str, index: int) -> Any:
    """A new device buffer with a copy of `array`. (Always a copy: by default the CPU client aliases a
    suitably aligned host array, and the user's later writes to it would change the tensor.)"""
    put, copy, _ = _uploader(platform, index)
    return put(array, copy)


def copier(platform: str, index: int) -> Callable[[np.ndarray], Any]:
    """``to_device`` for one device, with the device looked up once: for callers that upload many arrays."""
    put, copy, _ = _uploader(platform, index)
    return lambda array: put(array, copy)


def adopt(array: np.ndarray, platform: str, index: int) -> Any:
    """A device buffer with the data of `array`, an array tripy made and nobody else holds: on the CPU it
    may share its memory (PJRT keeps the array alive), which saves the copy `to_device` makes."""
    put, _, share = _uploader(platform, index)
    return put(array, share)


# (platform, device index) -> (put(array, semantics) -> buffer, the copying and the sharing semantics): an
# upload looks up none of them.
_uploaders: Dict[Tuple[str, int], Tuple[Callable[[np.ndarray, Any], Any], Any, Any]] = {}


def _uploader(platform: str, index: int) -> Tuple[Callable[[np.ndarray, Any], Any], Any, Any]:
    uploader = _uploaders.get((platform, index))
    if uploader is None:
        import jaxlib._jax as jx

        semantics = jx.HostBufferSemantics
        put = _put_function(client(platform), device_handle(platform, index))
        uploader = _uploaders[(platform, index)] = (put, semantics.IMMUTABLE_ONLY_DURING_CALL, semantics.ZERO_COPY)
    return uploader


def _put_function(c: Any, dev: Any) -> Callable[[np.ndarray, Any], Any]:
    """put(array, host buffer semantics) -> a buffer on `dev`: the client's own upload where jaxlib has it
    (jaxlib 0.6), else jaxlib's batched_device_put of one shard (jaxlib >= 0.7 removed ``buffer_from_pyval``)."""
    if hasattr(c, "buffer_from_pyval"):
        from_pyval = c.buffer_from_pyval
        return lambda array, semantics: from_pyval(array, dev, False, semantics)
    import jaxlib._jax as jx
    from jax.sharding import SingleDeviceSharding

    sharding, devices, device_put = SingleDeviceSharding(dev), [dev], jx.batched_device_put
    return lambda array, semantics: device_put(
        _aval(array.shape, array.dtype), sharding, [array], devices, True, False, semantics, True
    )  # (True: keep 64-bit types as they are)


@functools.lru_cache(maxsize=1024)
def _aval(shape: Tuple[int, ...], dtype: np.dtype) -> Any:
    import jax.core

    return jax.core.ShapedArray(shape, dtype)


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


def deserialize_portable_artifact(artifact: bytes) -> "str | bytes":
    """The module in a portable StableHLO artifact (text, or bytecode), for ``ir.Module.parse``; raises if it is
    not a valid artifact. (jaxlib 0.6 returns the text; newer jaxlibs a module in the current MLIR context.)"""
    import jaxlib._jax as jx

    with context():
        out = jx.mlir.deserialize_portable_artifact(artifact)
        if isinstance(out, (str, bytes)):
            return out
        return bytecode(out)


class Launcher:
    """Runs one compiled program repeatedly with the least overhead: ``launcher(buffers)`` -> output
    buffers, with runtime errors turned into ``on_error(e)``. The first run learns each output's shape,
    dtype and placement (the same on every run); later runs build outputs with XLA's C++ result
    handlers instead of Python. After the first run, ``steps()`` gives two C-level callables with
    ``finish(execute(buffers))`` equal to a run, for callers that generate code around them (they
    then catch ``error_types`` and raise ``on_error(e)`` themselves)."""

    __slots__ = ("executable", "_execute", "_handlers", "_finish", "error_types", "on_error", "out_shapes")
    provisional = False  # (see ``launch.BoundedLauncher.provisional``)

    def __init__(
        self,
        executable: Any,
        on_error: Callable[[Exception], Exception],
        handlers: Sequence[Any] = (),
        out_shapes: Sequence[Tuple[int, ...]] = (),
        extra: Sequence[Any] = (),
    ) -> None:
        """`handlers` and `out_shapes`: known in advance (an SPMD program's, see ``sharded_result_handlers``).
        `extra`: buffers the program takes after the caller's, on every run (a range bucket's copies of transposed
        weights, see ``passes.transposed_weights``)."""
        self.executable = executable  # (the compiled program, for serialize_executable)
        self._execute = executable.execute_sharded
        if extra:
            run, more = executable.execute_sharded, list(extra)
            self._execute = lambda buffers: run(buffers + more)
        self._handlers: List[Any] = list(handlers)
        self._finish: Any = operator.methodcaller("consume_with_handlers", self._handlers) if handlers else None
        self.out_shapes: Tuple[Tuple[int, ...], ...] = tuple(out_shapes)  # known after the first run
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
    try:
        return jx.array_result_handler(aval, array.sharding, True, True)  # (committed, _skip_checks)
    except TypeError:  # jaxlib >= 0.12 dropped _skip_checks
        return jx.array_result_handler(aval, array.sharding, True)


# ---- persistent compilation cache support (used by disk_cache.py) -------------------------------------
def serialize_executable(executable: Any, platform: str) -> bytes:
    """The compiled program as bytes that `deserialize_executable` can load in another process."""
    return bytes(client(platform).serialize_executable(executable))


def deserialize_executable(data: bytes, platform: str, index: int, num_devices: int = 1) -> Any:
    import jaxlib._jax as jx

    c = client(platform)
    return c.deserialize_executable(
        data, jx.DeviceList(_program_devices(platform, index, num_devices)), _compile_options(platform, num_devices)
    )


@functools.lru_cache(maxsize=None)
def host_fingerprint(platform: str, index: int) -> str:
    """The compiler and the host it compiles for: jaxlib (XLA) version, platform and device, the host CPU's
    features (XLA:CPU specializes code to them) and ``XLA_FLAGS``."""
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
    parts = [
        f"jaxlib={jaxlib.__version__}",
        f"platform={c.platform}",
        f"platform_version={c.platform_version}",
        f"device={dev.device_kind}:{index}",
        f"machine={host.machine()}",
        f"cpu={hashlib.sha256(cpu.encode()).hexdigest()[:16]}",
        f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')}",
    ]
    return ";".join(parts)


def from_dlpack(capsule: Any) -> Any:
    """A CPU buffer sharing the memory of a DLPack capsule."""
    import jaxlib._jax as jx

    return jx.dlpack_managed_tensor_to_buffer(capsule, device_handle("cpu", 0), None)


# ---- sharded data (SPMD programs) ---------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _mesh_sharding(platform: str, layout: Any) -> Any:
    """jax's description of `layout` (a ``tripy_flatir.sharding.Layout``) on the platform's devices; jax's array
    type (a buffer per device) and its gathering to the host need one. The device order is ``Layout.gspmd``'s."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = np.array(spmd_devices(platform, layout.num_devices), dtype=object).reshape(layout.mesh_shape)
    return NamedSharding(Mesh(devices, layout.axis_names), PartitionSpec(*layout.spec))


def put_sharded(array: np.ndarray, platform: str, layout: Any) -> Any:
    """A copy of `array` split over devices as `layout` says: one buffer per device of this process."""
    import jaxlib._jax as jx

    sharding = _mesh_sharding(platform, layout)
    where = sharding.addressable_devices_indices_map(array.shape)
    devices = list(where)
    shards = [np.array(array[where[d]], copy=True) for d in devices]  # (copies: the user may write to array)
    aval = _aval(array.shape, array.dtype)
    if hasattr(client(platform), "buffer_from_pyval"):  # jaxlib 0.6
        return jx.batched_device_put(aval, sharding, shards, devices, True, False)
    return jx.batched_device_put(
        aval, sharding, shards, devices, True, False, jx.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL, True
    )


def has_layout(buffer: Any, platform: str, layout: Any) -> bool:
    """Whether `buffer` is split over the devices exactly as `layout` says (so a program can take it as is)."""
    try:
        return bool(buffer.sharding.is_equivalent_to(_mesh_sharding(platform, layout), len(buffer.shape)))
    except Exception:  # (a buffer of another kind)
        return False


def is_sharded(buffer: Any) -> bool:
    """Whether `buffer` spans several devices."""
    return len(buffer.sharding.device_set) > 1


def is_local(buffer: Any) -> bool:
    """Whether every piece of `buffer` is on this process's devices."""
    return bool(buffer.is_fully_addressable)


def sharded_result_handlers(
    executable: Any, platform: str, num_devices: int, shapes: Sequence[Tuple[int, ...]], dtypes: Sequence[Any]
) -> List[Any]:
    """C++ handlers that assemble an SPMD program's per-device results into arrays of the global `shapes`,
    split as the partitioner chose (``get_output_shardings``)."""
    import jax.core
    import jaxlib._jax as jx
    from jax._src.lib import xla_client as xc

    devices = spmd_devices(platform, num_devices)
    handlers = []
    for op_sharding, shape, dtype in zip(executable.get_output_shardings(), shapes, dtypes):
        sharding = xc.GSPMDSharding(devices, op_sharding)
        aval = jax.core.ShapedArray(tuple(shape), dtype)
        try:
            handlers.append(jx.array_result_handler(aval, sharding, True, True))
        except TypeError:  # jaxlib >= 0.12 dropped _skip_checks
            handlers.append(jx.array_result_handler(aval, sharding, True))
    return handlers


# ---- profiling (used by profiling.py) -------------------------------------------------------------------
# The names of the event XLA's profiler records for one run of a compiled program on the CPU (jaxlib >= 0.7;
# jaxlib 0.6).
EXECUTE_EVENTS = ("CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice", "PjRtCpuExecutable::ExecuteHelper")


def profiler_trace(body: Callable[[], None]) -> Dict[str, Any]:
    """Run `body` under XLA's profiler (jaxlib's ``ProfilerSession``: host events only, no Python tracer) and
    give what it recorded as a Chrome trace (the dict of its ``trace.json``, which the profiler writes itself).
    XLA:CPU's thunk runtime records an event per HLO op or fusion, with ``hlo_op``, ``hlo_module`` and ``run_id``
    (one per run of a program) in its args; its classic runtime (jaxlib < 0.8) records the runs only."""
    import glob
    import gzip
    import json

    from jaxlib import _profiler

    options = _profiler.ProfileOptions()
    options.python_tracer_level = 0  # (its hooks cost more than what is measured; they need TensorFlow on 0.6)
    options.host_tracer_level = 2
    with _native_stderr():  # (jaxlib 0.6 says it misses TensorFlow's Python tracer, which is off)
        session = _profiler.ProfilerSession(options)
    try:
        body()
    finally:
        xspace = session.stop()
    with tempfile.TemporaryDirectory(prefix="tripy-profile-") as folder:
        session.export(xspace, folder)
        (path,) = glob.glob(os.path.join(folder, "plugins", "profile", "*", "*.trace.json.gz"))
        with gzip.open(path, "rb") as f:
            return json.load(f)  # type: ignore[no-any-return]


def optimized_hlo(executable: Any) -> str:
    """The HLO text of a compiled program after XLA's optimizations (its fusions, with each op's metadata)."""
    return "\n".join(module.to_string() for module in executable.hlo_modules())


def hlo_cost(executable: Any, hlo_text: str) -> Optional[Dict[str, float]]:
    """XLA's cost analysis (``flops``, ``bytes accessed``, ...) of the HLO module `hlo_text`, as the compiler of
    `executable` counts it; None where this jaxlib cannot parse HLO text (jaxlib 0.6) or the text does not parse."""
    try:
        from jaxlib import _hlo  # (jaxlib >= 0.7)
        import jaxlib._jax as jx

        return dict(jx.hlo_module_cost_analysis(executable.client, _hlo.hlo_module_from_text(hlo_text)))
    except Exception:
        return None
