"""tp.Executable: the user's compiled function. Validates its arguments, runs its backend ``Program``
(``tripy_backend.program``), and turns the results into tensors (``results.new_tensor``).

The call path is the hot path of compiled mode, so everything that does not depend on the arguments
(the checks for each input, the baked-in buffers, the output dtypes and static shapes) is worked out
once when the executable is made; a call does a few comparisons per input and one program launch.

The whole class is here: what a call runs (the fast path that ``fast_call.py`` generates, ``_call_sharded``,
or ``_nested_call`` in front of the fast path), ``stream``, ``save`` and ``load``. Helpers, by job:
``backend_program.py`` compiles the program, ``saved_file.py`` opens a saved file, ``input_info.py``
reports an argument that does not fit.
"""

from __future__ import annotations

import difflib
import inspect
import operator
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, List, NoReturn, Optional, Sequence, Set, Tuple, TypeVar

from tripy_backend import Program, disk_cache, kernels, memory, portable
from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException, raise_error
from tripy_flatir.logging import logger
from tripy_flatir.sharding import Layout
from tripy_flatir.mlir_utils import context
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_frontend import results
from tripy_frontend.compiler import artifact, saved_file, spmd
from tripy_frontend.compiler.call_site import call_site
from tripy_frontend.compiler.dimension_input_info import DimensionInputInfo
from tripy_frontend.compiler.fast_call import Runs, make_fast_call
from tripy_frontend.compiler.input_info import InputInfo, report_argument
from tripy_frontend.compiler.nested_inputs import Nesting
from tripy_frontend.compiler.output_info import OutputInfo
from tripy_frontend.compiler.backend_program import build_program
from tripy_frontend.compiler.stream import Stream, default_stream
from tripy_frontend.export import public_api
from tripy_frontend.tensor import DimensionSize, Tensor
from tripy_frontend.tracebacks import strip_tripy_frames
import tripy_frontend

# Shape signatures remembered per executable (the backend keeps as many compiled specializations).
_MAX_SIGNATURES = Program.MAX_SPECIALIZATIONS


# What calling an executable returns, for type checkers: what the compiled function returns (``tp.compile``'s
# ``Callable[..., R]``), so ``np.from_dlpack(exe(x))`` checks; Any for a loaded one.
R = TypeVar("R")


@public_api(document_under="compile")
class Executable(Generic[R]):
    """A function compiled by :func:`tripy.compile`. Call it with :class:`tripy.Tensor` s for the
    runtime inputs (the arguments that were given as :class:`InputInfo` s) and a
    :class:`tripy.DimensionSize` (or an int) for each :class:`DimensionInputInfo`, positionally or by
    name; it returns a tensor, or a tuple of tensors if the function returned a tuple or list.

    Every argument is checked before the program runs: its type, data type, rank, each dim against
    the range its InputInfo allows, and dims that share a :class:`NamedDimension` name. A bad
    argument raises :class:`tripy.TripyException` naming the argument, the dim, the value given and
    the range allowed, e.g. ``Input 'x' has shape [1, 9, 3]: dim 1 is 9, which is outside the
    allowed range [2, 8].``

    Every shape in the declared ranges was compiled for by :func:`tripy.compile` (a few bounded
    programs, each serving the sizes up to its bound), so calls do not compile. A program that bounded
    dims cannot express (e.g. one that sorts along a dynamic dim) compiles each new input-shape
    signature at its first call instead (``tp.logger.verbosity = "compile"`` says which and why).

    An executable pickles (``pickle``, ``multiprocessing``, Ray) as the file :meth:`save` writes, held in
    memory, so another process gets it without compiling. Unpickling it *is* loading it, under the same trust
    rule as :meth:`load`: its compiled code is run unless ``TRIPY_TRUST_COMPILED_CODE=0``, in which case it
    compiles from the StableHLO. (Unpickling runs code anyway: unpickle only data you trust.) What a saved file
    does not keep, a pickle does not either: the structures the inputs were nested in, and :attr:`stream`.

    .. code-block:: python

        def scale(x, y):
            return x * 2 + y

        exe = tp.compile(scale, args=[tp.InputInfo(((1, 2, 8), 3), tp.float32), tp.InputInfo((3,), tp.float32)])
        out = exe(tp.ones((5, 3)), y=tp.ones((3,)))
        assert out.tolist() == [[3.0, 3.0, 3.0]] * 5
        assert list(exe.input_infos) == ["x", "y"]
        assert "stablehlo" in exe.stablehlo
    """

    _program: Program
    _module_bytes: bytes  # the shape-polymorphic program (MLIR bytecode)
    _names: Tuple[str, ...]
    _infos: Tuple[InputInfo, ...]
    _num_inputs: int
    _dimension_inputs: Dict[int, DimensionInputInfo]  # the inputs that are shape values, by position
    _dtypes: Tuple[dtypes.dtype, ...]
    _constants: List[Any]  # buffers of the baked-in tensors, bound after the runtime inputs
    _constant_shapes: Tuple[Tuple[int, ...], ...]
    _outputs: Tuple[Tuple[dtypes.dtype, Tuple[int, ...]], ...]  # dtype, shape with -1 for dynamic dims
    _returns_tuple: bool
    _device: Device
    _layouts: Optional[List[Optional[Layout]]]  # each argument's split across devices (an SPMD program), or None
    # Named dims checked at run time: (name, ((input, dim), ...)) for groups of 2+ dims not all static.
    _named: Tuple[Tuple[str, Tuple[Tuple[int, int], ...]], ...]
    # Input-shape signatures already validated, each with its launcher and output shapes. A call whose
    # signature is here needs no per-dim checks: one dict lookup replaces them.
    _runs: Runs
    # What `exe(...)` runs (an API boundary, see tracebacks.py): the generated fast path (see fast_call),
    # or _call_sharded, or a _nested_call in front of the fast path.
    _call: Callable[..., Any]
    _nesting: Optional[Nesting]  # the structures (lists, tuples, dicts) the runtime inputs come in, if any
    _hints: Tuple[str, ...]  # added to the report of a call with the wrong inputs (see tp.compile)
    _stream: Optional[Stream]
    __signature__: inspect.Signature

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise_error(
            "tripy.Executable cannot be created directly.",
            _stack.capture(),
            ["Use tripy.compile(func, args=[...]) or tripy.Executable.load(path)."],
        )

    @classmethod
    def _create(
        cls,
        module_bytes: bytes,
        names: Sequence[str],
        infos: Sequence[InputInfo],
        constant_shapes: Sequence[Tuple[int, ...]],
        constants: Callable[[], Sequence[Any]],
        outputs: Sequence[Tuple[dtypes.dtype, Tuple[int, ...]]],
        returns_tuple: bool,
        device: Device,
        optimization_level: int,
        what: str = "program",
        saved: Any = None,
        layouts: Optional[Sequence[Optional[Layout]]] = None,
        nesting: Optional[Nesting] = None,
        hints: Sequence[str] = (),
        wait: bool = True,
    ) -> "Executable":
        """The executable of a shape-polymorphic program (MLIR bytecode) whose arguments are the runtime
        inputs `infos`, then the baked-in data of `constant_shapes`, whose device buffers `constants()` gives once
        the program is compiled (tp.compile may still be computing some: see ``compiler/hoisting.py``), or where a
        program runs before. `what` names it in the compile log;
        `saved` is compiled code saved with it (a ``tripy_backend.SavedCode``); `layouts`: each argument's
        split across devices, for an SPMD program (``compiler/spmd.py``); `nesting`: the structures
        the executable takes its runtime inputs in (``compiler/nested_inputs.py``); `hints`: added to the
        report of a call with the wrong inputs (arguments of tp.compile that look like a forgotten InputInfo);
        `wait`: return once every program of a range plan is compiled, not once every shape can run."""
        self = cls.__new__(cls)
        self._hints = tuple(hints)
        self._layouts = list(layouts) if layouts is not None else None
        self._program = build_program(
            module_bytes,
            names,
            infos,
            constant_shapes,
            constants,
            device,
            optimization_level,
            what,
            saved,
            spmd.num_devices(layouts),
            wait,
        )
        self._module_bytes = module_bytes
        self._names = tuple(names)
        self._infos = tuple(infos)
        self._num_inputs = len(self._names)
        self._dimension_inputs = {i: info for i, info in enumerate(self._infos) if isinstance(info, DimensionInputInfo)}
        self._dtypes = tuple(info.dtype for info in self._infos)
        self._constants = list(constants())
        if self._layouts is not None:  # (an SPMD program reads its baked-in data on every device of the mesh)
            mesh = spmd.mesh_of(self._layouts)
            self._constants = [
                spmd.place(c, lay, mesh, device) for c, lay in zip(self._constants, self._layouts[len(names) :])
            ]
        self._constant_shapes = tuple(tuple(s) for s in constant_shapes)
        kernels.pin(self._constants)  # (the kernels read these weights as laid out, unchecked: nothing writes them)
        self._outputs = tuple((dt, tuple(s)) for dt, s in outputs)
        self._returns_tuple = returns_tuple
        self._device = device
        self._named = _shared_dimension_names(self._infos)
        self._stream = None
        self._set_up_calls(returns_tuple)
        self.__signature__ = _signature(self._names, self._infos, len(self._outputs), returns_tuple)
        self._nesting = nesting
        if nesting is not None:  # (the structures are flattened in front of the fast path)
            self._call = _nested_call(self._call, nesting)
            self.__signature__ = nesting.signature
        return self

    def _set_up_calls(self, returns_tuple: bool) -> None:
        """The call path: the generated fast path (with the exact buckets' launchers ready), or, for an SPMD
        program, the sharded call."""
        self._runs = {}
        self._runs_lock = threading.Lock()  # (changes to `_runs`: calls and background compiles make them)
        # Signatures whose run stands in while their own program compiles (``BoundedLauncher.provisional``): kept
        # for the fast path until a program is ready in the background (`_forget_provisional`)
        self._provisional: Set[Tuple[Tuple[int, ...], ...]] = set()
        self._program.on_ready(self._forget_provisional)
        if self._layouts is not None:  # (an SPMD program: arguments are placed on the mesh at each call)
            self._call = self._call_sharded
            return
        if self._program.ranges is not None and not self._dimension_inputs:
            # The exact buckets' shapes are in range by construction: their first calls take the fast path too.
            for shapes, launch in self._program.ranges.ready_launchers()[:_MAX_SIGNATURES]:
                execute, finish = launch.steps()
                self._runs[shapes[: self._num_inputs]] = (execute, finish, launch.out_shapes, launch)
        self._call = make_fast_call(
            self._dtypes,
            [dt for dt, _ in self._outputs],
            returns_tuple,
            self._constants,
            self._device,
            self._runs,
            _slow_path(weakref.ref(self)),
        )
        if not self._program.ready:  # (a dropped executable's plan stops compiling: see `_slow_path`)
            weakref.finalize(self, self._program.stop_background)

    # ---- calling ----------------------------------------------------------------------------------------
    if TYPE_CHECKING:

        def __call__(self, *args: Any, **kwargs: Any) -> R: ...
    else:
        # Python looks __call__ up on the type: this property hands out the executable's generated call
        # (see fast_call), so that `exe(x)` runs it with no frame of Executable's own in between.
        __call__ = property(
            operator.attrgetter("_call"),
            doc=(
                "Run the program on `args` / `kwargs` (tensors for the runtime inputs): the executable's generated "
                "fast path (see ``fast_call``), which falls back to ``_call_slow`` for anything but the common case."
            ),
        )

    def _call_slow(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        """Bind keywords, evaluate lazy tensors, validate every argument in detail, then run; a new
        shape signature is compiled (once) and remembered for the fast path."""
        if kwargs or len(args) != self._num_inputs:
            return self(*self._bind(args, kwargs))  # positionally: the fast path if it applies
        buffers = []
        shapes = []
        for i, a in enumerate(args):
            dimension = self._dimension_inputs.get(i)
            if dimension is not None:  # a shape value: the empty input that carries it (see dimension_input_info)
                carrier = dimension.carrier(self._names[i], a)
                buffers.append(memory.to_device(carrier, self._device))
                shapes.append(carrier.shape)
                continue
            self._check_argument(i, a)
            a.eval()
            producer = a.trace_tensor.producer
            if producer.__class__ is ShardedStorage:  # (a one-device program: gathered onto its device)
                buffers.append(memory.to_device(memory.to_numpy(producer.data), self._device))
            else:
                buffers.append(producer.data)
            shapes.append(tuple(a.trace_tensor.shape))
        if self._named:
            self._check_named_dims(shapes)
        key = tuple(shapes)
        run = self._runs.get(key)
        if run is None:
            version = self._program.version
            launch = self._program.launcher(key + self._constant_shapes)
            buffers = launch(buffers + self._constants)
            out_shapes = tuple(tuple(r.shape) for r in buffers)
            self._keep_run(key, launch, out_shapes, version)
        else:
            out_shapes, launch = run[2], run[3]
            buffers = launch(buffers + self._constants)
        site = call_site(sys._getframe(1))
        outs = tuple(
            results.new_tensor(buf, shape, dt, self._device, site)
            for buf, shape, (dt, _) in zip(buffers, out_shapes, self._outputs)
        )
        return outs if self._returns_tuple else outs[0]

    def _keep_run(self, key: Tuple[Tuple[int, ...], ...], launch: Any, out_shapes: Any, version: int) -> None:
        """Keep `launch` for the fast path's calls of input shapes `key` (the oldest go past ``_MAX_SIGNATURES``).
        One standing in while the shapes' own program compiles (`version`: the program's when it was asked for) is
        kept until a program is ready in the background."""
        execute, finish = launch.steps()
        with self._runs_lock:
            if len(self._runs) >= _MAX_SIGNATURES:
                self._runs.pop(next(iter(self._runs)), None)  # forget the oldest
            self._runs[key] = (execute, finish, out_shapes, launch)
            if launch.provisional:
                self._provisional.add(key)
        if launch.provisional and self._program.version != version:  # (ready meanwhile: forgotten at once)
            self._forget_provisional()

    def _forget_provisional(self) -> None:
        """A program is ready in the background: the runs standing in for shapes whose program was compiling are
        forgotten, so that their next calls find the best program ready (``Program.on_ready``)."""
        with self._runs_lock:
            for key in self._provisional:
                self._runs.pop(key, None)
            self._provisional.clear()

    def _call_sharded(self, *args: Any, **kwargs: Any) -> Any:
        """A call of an SPMD program: each argument checked as in ``_call_slow``, then placed on the mesh as the
        program reads it (``spmd.place``); the results may stay split across devices."""
        try:
            args = tuple(self._bind(args, kwargs)) if kwargs or len(args) != self._num_inputs else args
            layouts = self._layouts
            assert layouts is not None
            mesh = spmd.mesh_of(layouts)
            buffers = []
            for i, a in enumerate(args):
                self._check_argument(i, a)
                buffers.append(spmd.place(a._buffer(), layouts[i], mesh, self._device))
            outs = self._program(buffers + self._constants)
            site = call_site(sys._getframe(1))
            tensors = tuple(
                results.new_sharded_tensor(buf, tuple(buf.shape), dt, self._device, site)
                for buf, (dt, _) in zip(outs, self._outputs)
            )
        except TripyException as e:
            strip_tripy_frames(e)
            raise
        return tensors if self._returns_tuple else tensors[0]

    def _bind(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> List[Any]:
        """Order positional and keyword arguments as the executable's inputs (the slow path)."""
        names = self._names

        def fail(message: str) -> NoReturn:
            raise_error(
                message,
                _stack.capture(),
                [f"The executable's inputs are: {self._signature_text() or 'none'}.", *self._hints],
            )

        if len(args) > len(names):
            fail(f"The executable takes {len(names)} input(s), but {len(args)} positional arguments were given.")
        bound: Dict[str, Any] = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                fail(f"The executable has no input named '{key}'." + (f" Did you mean '{close[0]}'?" if close else ""))
            if key in bound:
                fail(f"Input '{key}' was given both positionally and by keyword.")
            bound[key] = value
        missing = [n for n in names if n not in bound]
        if missing:
            fail(f"Missing input(s): {', '.join(repr(m) for m in missing)}.")
        return [bound[n] for n in names]

    def _check_named_dims(self, shapes: List[Tuple[int, ...]]) -> None:
        for name, dims in self._named:
            i0, d0 = dims[0]
            size = shapes[i0][d0]
            for i, d in dims[1:]:
                if shapes[i][d] != size:
                    n0, n = self._names[i0], self._names[i]
                    raise_error(
                        f"Inputs '{n0}' and '{n}' disagree on the named dimension '{name}': dim {d0} of "
                        f"'{n0}' is {size}, but dim {d} of '{n}' is {shapes[i][d]}.",
                        _stack.capture(),
                        [
                            f"Dims that share the name '{name}' must be equal.",
                            f"The executable's inputs are: {self._signature_text()}.",
                        ],
                    )

    def _check_argument(self, i: int, arg: Any) -> None:
        """Raise an error naming input `i` if `arg` does not fit its InputInfo."""
        name, info = self._names[i], self._infos[i]
        if (
            isinstance(arg, Tensor)
            and arg.dtype is info.dtype
            and info.rank == len(arg.trace_tensor.shape)
            and all(
                lo <= size <= hi
                for size, lo, hi in zip(arg.trace_tensor.shape, info.shape_bounds.min, info.shape_bounds.max)
            )
        ):
            return  # fine (the common case: no report to prepare)
        report_argument(name, info, arg, [f"The executable's inputs are: {self._signature_text()}."])

    # ---- introspection --------------------------------------------------------------------------------
    @property
    def input_infos(self) -> Dict[str, InputInfo]:
        """The runtime inputs, in order: name -> :class:`InputInfo`."""
        return dict(zip(self._names, self._infos))

    @property
    def output_infos(self) -> Dict[str, OutputInfo]:
        """The outputs, in the order the compiled function returns them: name -> :class:`OutputInfo`. Outputs
        are named ``output_0``, ``output_1``, ... (the names a server gives them)."""
        return {f"output_{i}": OutputInfo(dt, shape) for i, (dt, shape) in enumerate(self._outputs)}

    def check_inputs(self, *args: Any, **kwargs: Any) -> None:
        """Check arguments as a call does, without running the program: raises the
        :class:`tripy.TripyException` that calling the executable with them would raise (an argument of the
        wrong type, data type or rank, a dim outside its range, named dims that disagree, a missing or unknown
        input), and returns None if they fit.

        Args:
            args: The runtime inputs, positionally (:class:`tripy.Tensor` s; ints for a
                :class:`DimensionInputInfo`).
            kwargs: The runtime inputs by name.

        .. code-block:: python

            exe = tp.compile(lambda x: x + 1, args=[tp.InputInfo(((1, 2, 4),), tp.float32)])
            exe.check_inputs(tp.ones((3,)))
            try:
                exe.check_inputs(tp.ones((5,)))
            except tp.TripyException as e:
                assert "dim 0 is 5, which is outside the allowed range [1, 4]" in str(e)
            else:
                assert False, "expected a TripyException"
        """
        if self._nesting is not None:
            args, kwargs = tuple(self._nesting.leaves(args, kwargs)), {}
        args = tuple(self._bind(args, kwargs)) if kwargs or len(args) != self._num_inputs else args
        shapes: List[Tuple[int, ...]] = []
        for i, a in enumerate(args):
            dimension = self._dimension_inputs.get(i)
            if dimension is not None:
                shapes.append(dimension.carrier(self._names[i], a).shape)
                continue
            self._check_argument(i, a)
            shapes.append(tuple(a.trace_tensor.shape))
        if self._named:
            self._check_named_dims(shapes)

    @property
    def stablehlo(self) -> str:
        """The shape-polymorphic StableHLO program this executable was built from (``?`` for dynamic dims)."""
        from jax.extend.mlir import ir

        with context():
            return str(ir.Module.parse(self._module_bytes))

    @property
    def device(self) -> Device:
        return self._device

    @property
    def stream(self) -> Stream:
        """The stream this executable runs on (nvtripy's ``Executable.stream``; see :class:`tripy.Stream`)."""
        return self._stream or default_stream(self._device)

    @stream.setter
    def stream(self, stream: Stream) -> None:
        if not isinstance(stream, Stream):
            raise_error(f"Executable.stream must be a tripy.Stream, but got {type(stream).__name__}.", _stack.capture())
        self._stream = stream

    def _signature_text(self) -> str:
        return ", ".join(f"{n}: {info}" for n, info in zip(self._names, self._infos))

    def __repr__(self) -> str:
        ret = f"Tuple[{', '.join(['Tensor'] * len(self._outputs))}]" if self._returns_tuple else "Tensor"
        return f"Executable({self._signature_text()}) -> {ret}"

    __str__ = __repr__

    # ---- saving and loading ------------------------------------------------------------------------------
    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait until every program of the declared ranges' plan is compiled. :func:`compile` returns as soon as
        every shape in range can run and compiles the rest of the plan in the background; calls never wait for
        it, but a benchmark or a server that wants every call at its fastest from the start can.

        Args:
            timeout: At most this many seconds (None: as long as it takes).

        Returns:
            Whether the whole plan is compiled (always, without a `timeout`).

        .. code-block:: python

            exe = tp.compile(lambda x: x * 2, args=[tp.InputInfo(((1, 8, 64),), tp.float32)])
            assert exe.wait()
            assert exe.ready
        """
        return self._program.wait(timeout)

    @property
    def ready(self) -> bool:
        """Whether every program of the declared ranges' plan is compiled (see :meth:`wait`); always True for an
        executable of static shapes."""
        return self._program.ready

    def save(self, path: str) -> None:
        """Save this executable to a file: its signature, the baked-in tensors, the program as a
        versioned, portable StableHLO artifact that later versions of tripy can load, and its compiled
        code, which :meth:`load` uses on the same compiler and host instead of compiling.

        Args:
            path: Where to write it (replaced atomically if it exists).

        .. code-block:: python

            import os, tempfile

            exe = tp.compile(lambda x: x + 1, args=[tp.InputInfo(((1, 2, 4),), tp.float32)])
            path = os.path.join(tempfile.mkdtemp(), "add_one.tpexe")
            exe.save(path)
            loaded = tp.Executable.load(path)
            assert loaded(tp.Tensor([1.0, 2.0])).tolist() == [2.0, 3.0]
        """

        path = saved_file.file_path(path, "tripy.Executable.save", _stack.capture())
        contents = self._contents("tripy.Executable.save")
        try:
            artifact.write(path, contents, producer=_producer())
        except OSError as e:
            raise_error(f"tripy.Executable.save: could not write '{path}': {e.strerror or e}.", _stack.capture())

    def _contents(self, what: str) -> artifact.Contents:
        """What a saved (or pickled) executable holds; `what` names the caller in errors and the log."""
        try:
            program, version = portable.serialize(self._module_bytes)
        except Exception as e:
            raise_error(f"{what}: could not serialize the program: {e}", _stack.capture())
        try:
            compiled = self._program.saved_code()
        except Exception as e:  # a runtime that cannot serialize its programs: load compiles them
            logger.log(f"[compile] {what}: the compiled code is not saved ({e})", "compile")
            compiled = None
        return artifact.Contents(
            names=list(self._names),
            infos=list(self._infos),
            outputs=list(self._outputs),
            returns_tuple=self._returns_tuple,
            device=str(self._device),
            program=program,
            stablehlo_version=version,
            constants=[memory.to_numpy(c) for c in self._constants],  # (sharded ones gathered)
            optimization_level=self._program.optimization_level,
            compiled=compiled,
            constant_layouts=self._layouts[self._num_inputs :] if self._layouts is not None else [],
        )

    @staticmethod
    def load(path: str, *, trust_compiled_code: Optional[bool] = None) -> "Executable[Any]":
        """Load an executable saved with :meth:`save`. The file is fully validated first; a missing,
        truncated, corrupted or foreign file raises :class:`tripy.TripyException` saying why.

        The file holds the program as portable StableHLO and, when it was saved by the same compiler on
        the same kind of host, its compiled code, which is used instead of compiling. That code is run as
        it is: the file's checksums catch damage, not tampering, so load compiled code only from files you
        trust as you would trust a Python module. ``trust_compiled_code=False`` ignores it and compiles the
        StableHLO (for every declared range, as :func:`tripy.compile` does).

        Args:
            path: The file to load.
            trust_compiled_code: Whether to run the compiled code stored in the file (when it matches this
                compiler and host). None (the default): yes, unless the environment variable
                ``TRIPY_TRUST_COMPILED_CODE`` is ``0``, which also keeps the disk cache
                (``TRIPY_CACHE_DIR``) from loading compiled code.

        .. code-block:: python

            import os, tempfile

            exe = tp.compile(lambda x: x * 2, args=[tp.InputInfo((2,), tp.float32)])
            path = os.path.join(tempfile.mkdtemp(), "double.tpexe")
            exe.save(path)
            assert tp.Executable.load(path)(tp.Tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
        """

        where = _stack.capture()
        path = saved_file.file_path(path, "tripy.Executable.load", where)
        trusted = disk_cache.trusted() if trust_compiled_code is None else bool(trust_compiled_code)
        return Executable._open(saved_file.load(path, where), trusted, f"'{path}'")

    @staticmethod
    def _open(loaded: saved_file.Loaded, trusted: bool, source: str) -> "Executable[Any]":
        """The executable of a validated saved file; its compiled code is run only if `trusted`. `source` names
        where it came from in the compile log."""
        c = loaded.contents
        if c.compiled is not None and not trusted:
            logger.log(
                f"[compile] tripy.Executable.load: ignoring the compiled code in {source} (not trusted): "
                "compiling its StableHLO",
                "compile",
            )
        return Executable._create(
            loaded.module_bytes,
            c.names,
            c.infos,
            [tuple(k.shape) for k in loaded.constants],
            lambda: loaded.constants,
            c.outputs,
            c.returns_tuple,
            loaded.device,
            c.optimization_level,
            f"executable loaded from {source}",
            c.compiled if trusted else None,
            loaded.layouts,
        )

    # ---- pickling (pickle, multiprocessing, Ray) -----------------------------------------------------------
    def __reduce__(self) -> Tuple[Any, ...]:
        """An executable pickles as the file :meth:`save` writes, held in memory: unpickling loads it as
        :meth:`load` does, running its compiled code only where ``TRIPY_TRUST_COMPILED_CODE`` allows."""
        contents = self._contents("pickling a tripy.Executable")
        return (_from_pickle, (artifact.to_bytes(contents, producer=_producer()),))


def _producer() -> str:
    """Who wrote a saved executable (its header's "producer")."""
    return f"tripy-frontend {tripy_frontend.__version__}"


def _from_pickle(data: bytes) -> Executable[Any]:
    """Unpickle an executable (see ``Executable.__reduce__``): loading it, under the trust rule of ``load``."""
    return Executable._open(saved_file.load_bytes(data, _stack.capture()), disk_cache.trusted(), "a pickle")


def _shared_dimension_names(infos: Sequence[InputInfo]) -> Tuple[Tuple[str, Tuple[Tuple[int, int], ...]], ...]:
    """Each dimension name that several dynamic dims of the inputs share, with those (input, dim) pairs."""
    groups: Dict[str, List[Tuple[int, int]]] = {}
    for i, info in enumerate(infos):
        for d, name in info.dimension_names.items():
            groups.setdefault(name, []).append((i, d))
    return tuple(
        (name, tuple(dims))
        for name, dims in groups.items()
        if len(dims) > 1 and not all(infos[i].shape_bounds.min[d] == infos[i].shape_bounds.max[d] for i, d in dims)
    )


def _signature(
    names: Sequence[str], infos: Sequence[InputInfo], num_outputs: int, returns_tuple: bool
) -> inspect.Signature:
    """The executable's call signature: a parameter per runtime input, and what it returns."""
    params = [
        inspect.Parameter(
            n,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=DimensionSize if isinstance(info, DimensionInputInfo) else Tensor,
        )
        for n, info in zip(names, infos)
    ]
    # (as nvtripy: Tuple[Tensor, Tensor] for a function returning a tuple or list of two tensors)
    returns = Tuple[tuple([Tensor] * num_outputs)] if returns_tuple else Tensor  # type: ignore[misc]
    return inspect.Signature(params, return_annotation=returns)


def _nested_call(flat_call: Callable[..., Any], nesting: Nesting) -> Callable[..., Any]:
    """A call with the runtime inputs inside the structures they were compiled with: their leaves, in order, go to
    `flat_call` (the fast path). Not a bound method, for the reason `_slow_path` gives."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return flat_call(*nesting.leaves(args, kwargs))

    return call


def _slow_path(ref: "weakref.ref[Executable[Any]]") -> Callable[[Tuple[Any, ...], Dict[str, Any]], Any]:
    """The executable's general call path, for its fast path to fall back to, without holding the executable: a
    bound method there would make a reference cycle (executable, fast path, method), and a dropped executable would
    then live until the cycle collector ran, its plan compiling in the background meanwhile (`_set_up_calls`)."""

    def call_slow(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        executable = ref()
        if executable is None:  # (only a caller that kept `exe.__call__` and dropped `exe`)
            raise TripyException("This executable's call was kept after the executable itself was deleted.")
        return executable._call_slow(args, kwargs)

    return call_slow
