"""The file format of a saved tp.Executable.

A zip archive (stored, not compressed) holding:

* ``tripy_executable.json``: the header: a format magic and version, the producer, the StableHLO
  version of the program, the signature (runtime inputs with their bounds and dim names, outputs),
  and, for every other member, its size and SHA-256;
* ``program.stablehlo``: the shape-polymorphic program as a portable (versioned) StableHLO artifact,
  which later versions of the compiler stack can still read;
* ``constants/<i>.bin``: the raw data of each tensor that was baked into the program, in argument order;
* ``compiled/...`` (optional): every compiled program the executable runs, with the compiler
  fingerprint they were made for in the header (``tripy_backend.SavedCode``): ``compiled/static.bin``,
  the program of a static executable; ``compiled/<i>.bin``, the bounded programs covering the declared
  ranges (see ``tripy_backend.ranges``); ``compiled/specialization/<i>.bin``, the programs compiled for
  single input shapes; ``compiled/with-copies/<i>.bin``, the bounded programs that read copies of
  transposed weights (``tripy_backend.passes.transposed_weights``: their ``compiled/<i>.bin`` is empty),
  and ``compiled/copier/<i>.bin``, the programs that make those copies. A loader on the same compiler and
  host uses them instead of compiling; on another, it compiles from the StableHLO.

The compiled code was added without a new format version: its header entries are optional, so a file
without them loads (compiling), and an older tripy reading a newer file ignores what it does not know
(the static program, specializations, programs that read copies and their copiers) and compiles.

Reading validates everything (archive integrity, header schema, checksums, sizes, the program and its
signature against the header) before anything is built, so a bad file never half-loads.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import tempfile
import zipfile
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

import numpy as np

from tripy_backend import SavedCode
from tripy_flatir import dtypes
from tripy_flatir.sharding import Layout
from tripy_flatir.mlir_utils import context, main_function, tensor_type
from tripy_frontend.compiler.dimension_input_info import input_info_from_json
from tripy_frontend.compiler.input_info import InputInfo, dtype_from_name

MAGIC = "tripy.Executable"
FORMAT_VERSION = 1
HEADER = "tripy_executable.json"
PROGRAM = "program.stablehlo"


class FormatError(ValueError):
    """The file is not a valid saved executable; the message says why."""


@dataclass
class Contents:
    """Everything a saved executable holds, validated."""

    names: List[str]
    infos: List[InputInfo]
    outputs: List[Tuple[dtypes.dtype, Tuple[int, ...]]]  # dtype, shape with -1 for dynamic dims
    returns_tuple: bool
    device: str
    program: bytes  # the portable artifact
    stablehlo_version: str
    constants: List[np.ndarray]
    optimization_level: int = 3
    compiled: Optional[SavedCode] = None  # the compiled programs, for one compiler and host
    constant_layouts: List[Optional[Layout]] = field(default_factory=list)  # each constant's split (SPMD programs)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write(path: str, contents: Contents, producer: str) -> None:
    """Write atomically: the file at `path` is either the old one or the complete new one."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)  # as nvtripy's Executable.save does
    fd, tmp = tempfile.mkstemp(prefix=".tripy-", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # (mkstemp's file is 0600: the file gets the mode open() would give)
        with os.fdopen(fd, "wb") as f:
            _write_archive(f, contents, producer)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def to_bytes(contents: Contents, producer: str) -> bytes:
    """The archive ``write`` would write, in memory (a pickled executable: see ``Executable.__reduce__``)."""
    buffer = io.BytesIO()
    _write_archive(buffer, contents, producer)
    return buffer.getvalue()


def _write_archive(f: BinaryIO, contents: Contents, producer: str) -> None:
    """Write the archive (header and members) to the open file `f`."""
    members: Dict[str, bytes] = {PROGRAM: contents.program}
    constants_meta = []
    for i, array in enumerate(contents.constants):
        data = np.ascontiguousarray(array).tobytes()
        member = f"constants/{i}.bin"
        members[member] = data
        dt = dtypes.from_numpy(array.dtype)
        assert dt is not None
        constants_meta.append(
            {"member": member, "dtype": dt.name, "shape": list(array.shape), "size": len(data), "sha256": _sha256(data)}
        )
        layout = contents.constant_layouts[i] if i < len(contents.constant_layouts) else None
        if layout is not None:
            constants_meta[-1]["sharding"] = layout.to_json()
    header = {
        "magic": MAGIC,
        "format_version": FORMAT_VERSION,
        "producer": producer,
        "stablehlo_version": contents.stablehlo_version,
        "device": contents.device,
        "inputs": [dict(name=n, **info.to_json()) for n, info in zip(contents.names, contents.infos)],
        "outputs": [{"dtype": dt.name, "shape": list(shape)} for dt, shape in contents.outputs],
        "returns_tuple": contents.returns_tuple,
        "program": {"member": PROGRAM, "size": len(contents.program), "sha256": _sha256(contents.program)},
        "constants": constants_meta,
        "optimization_level": contents.optimization_level,
    }
    if contents.compiled is not None:
        header["compiled"] = _compiled_header(contents.compiled, members)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(HEADER, json.dumps(header, indent=1))
        for name, data in members.items():
            z.writestr(name, data)


def _umask() -> int:
    """The process's umask: from /proc on Linux; elsewhere reading it means setting it (set straight back, a
    moment in which another thread's new file would get 022)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read(path: str) -> Contents:
    """Read and validate a saved executable. Raises FormatError (or OSError) on any problem."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            raise FormatError("the file is empty")
        return _read_archive(f)


def from_bytes(data: bytes) -> Contents:
    """Validate an archive held in memory (``to_bytes``'s). Raises FormatError on any problem."""
    if not data:
        raise FormatError("it is empty")
    return _read_archive(io.BytesIO(data))


def _read_archive(f: BinaryIO) -> Contents:
    try:
        archive = zipfile.ZipFile(f)  # (members are read from the file as needed, each once)
    except zipfile.BadZipFile:
        raise FormatError(
            "it is not a tripy executable (not a valid archive: it is truncated, corrupted, or of another kind)"
        ) from None
    with archive:
        return _contents(archive)


def _contents(archive: zipfile.ZipFile) -> Contents:
    """The validated contents of a saved executable's archive."""
    names = set(archive.namelist())
    if HEADER not in names:
        raise FormatError(f"it is not a tripy executable (the archive has no '{HEADER}')")
    try:
        header = json.loads(archive.read(HEADER).decode("utf-8"))
    except (zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError, ValueError) as e:
        raise FormatError(f"its header is corrupted ({e})") from None
    _check_header(header)

    def member(meta: Dict[str, Any], what: str) -> bytes:
        name = meta["member"]
        if name not in names:
            raise FormatError(f"{what} ('{name}') is missing from the archive")
        try:
            data = archive.read(name)
        except (zipfile.BadZipFile, ValueError, OSError) as e:  # CRC mismatch, bad local header, ...
            raise FormatError(f"{what} ('{name}') is corrupted ({e})") from None
        if len(data) != meta["size"] or _sha256(data) != meta["sha256"]:
            raise FormatError(f"{what} ('{name}') is corrupted (its size or checksum does not match the header)")
        return data

    program = member(header["program"], "the program")
    constants = []
    layouts: List[Optional[Layout]] = []
    for i, meta in enumerate(header["constants"]):
        data = member(meta, f"constant {i}")
        dt = dtype_from_name(meta["dtype"])
        shape = tuple(meta["shape"])
        np_dtype = dt.numpy_dtype
        if np_dtype is None or len(data) != math.prod(shape) * np_dtype.itemsize:
            raise FormatError(
                f"constant {i} ('{meta['member']}') does not hold {meta['dtype']} data of shape {list(shape)}"
            )
        constants.append(np.frombuffer(data, dtype=np_dtype).reshape(shape))
        layouts.append(Layout.from_json(meta["sharding"]) if "sharding" in meta else None)
    compiled = _read_compiled(header["compiled"], member) if "compiled" in header else None
    inputs = header["inputs"]
    return Contents(
        names=[i["name"] for i in inputs],
        infos=[input_info_from_json(i) for i in inputs],
        outputs=[(dtype_from_name(o["dtype"]), tuple(o["shape"])) for o in header["outputs"]],
        returns_tuple=header["returns_tuple"],
        device=header["device"],
        program=program,
        stablehlo_version=header["stablehlo_version"],
        constants=constants,
        optimization_level=header.get("optimization_level", 3),
        compiled=compiled,
        constant_layouts=layouts,
    )


def _compiled_header(code: SavedCode, members: Dict[str, bytes]) -> Dict[str, Any]:
    """The header's description of the compiled programs (added to `members`). "programs" (the bounded
    ones) is always there, as the first readers of compiled code expect."""

    def add(name: str, data: bytes, **meta: Any) -> Dict[str, Any]:
        members[name] = data
        return {"member": name, "size": len(data), "sha256": _sha256(data), **meta}

    def program(
        i: int, bucket: List[int], out_dims: List[List[int]], data: bytes, transposed: List[int]
    ) -> Dict[str, Any]:
        if not transposed:
            return add(f"compiled/{i}.bin", data, bucket=list(bucket), out_dims=out_dims)
        # (a program that reads copies of transposed weights: its own entry is empty, so that a tripy that does
        # not know the copies compiles the bucket from the StableHLO instead of running it without them)
        reads = add(f"compiled/with-copies/{i}.bin", data, transposed=transposed)
        return add(f"compiled/{i}.bin", b"", bucket=list(bucket), out_dims=out_dims, reads_copies=reads)

    out: Dict[str, Any] = {
        "fingerprint": code.fingerprint,
        "bounded": code.buckets is not None,
        "programs": [program(i, *saved) for i, saved in enumerate(code.buckets or [])],
        "specializations": [
            add(f"compiled/specialization/{i}.bin", data, shapes=shapes)
            for i, (shapes, data) in enumerate(code.specializations)
        ],
        "copiers": [
            add(f"compiled/copier/{i}.bin", data, transposed=transposed)
            for i, (transposed, data) in enumerate(code.copiers)
        ],
    }
    if code.static is not None:
        out["static"] = add("compiled/static.bin", code.static)
    return out


def _read_compiled(c: Any, member: Any) -> SavedCode:
    """The compiled programs the header's entry `c` describes (`member(meta, what)` reads one, checked)."""

    def valid() -> bool:
        if not (
            isinstance(c, dict)
            and isinstance(c.get("fingerprint"), str)
            and isinstance(c.get("programs"), list)
            and isinstance(c.get("bounded", True), bool)
            and isinstance(c.get("specializations", []), list)
        ):
            return False
        return (
            all(
                isinstance(m, dict)
                and _is_int_list(m.get("bucket"), 0)
                and isinstance(m.get("out_dims"), list)
                and all(_is_int_list(d, -1) for d in m["out_dims"])
                and (_reads_copies(m.get("reads_copies", {"transposed": []})))
                for m in c["programs"]
            )  # (-1: see ranges)
            and isinstance(c.get("copiers", []), list)
            and all(_reads_copies(m) for m in c.get("copiers", []))
            and all(
                isinstance(m, dict)
                and isinstance(m.get("shapes"), list)
                and all(_is_int_list(s, 0) for s in m["shapes"])
                for m in c.get("specializations", [])
            )
            and isinstance(c.get("static", {}), dict)
        )

    if not valid():
        raise FormatError("its header has an invalid description of the compiled programs")

    def bucket(i: int, m: Dict[str, Any]) -> Tuple[List[int], List[List[int]], bytes, List[int]]:
        if "reads_copies" in m:  # (its own entry is empty: see `_compiled_header`)
            reads = m["reads_copies"]
            return m["bucket"], m["out_dims"], member(reads, f"compiled program {i}"), reads["transposed"]
        return m["bucket"], m["out_dims"], member(m, f"compiled program {i}"), []

    return SavedCode(
        c["fingerprint"],
        static=member(c["static"], "the compiled program") if "static" in c else None,
        # (files from before "bounded" was recorded hold bounded programs only)
        buckets=[bucket(i, m) for i, m in enumerate(c["programs"])] if c.get("bounded", True) else None,
        specializations=[
            (m["shapes"], member(m, f"compiled specialization {i}")) for i, m in enumerate(c.get("specializations", []))
        ],
        copiers=[(m["transposed"], member(m, f"copier {i}")) for i, m in enumerate(c.get("copiers", []))],
    )


def _reads_copies(m: Any) -> bool:
    """Whether `m` describes a program's copies of transposed weights: the arguments they are copies of."""
    return isinstance(m, dict) and _is_int_list(m.get("transposed"), 0)


def _is_int_list(v: Any, minimum: int) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= minimum for x in v)


def _check_header(h: Any) -> None:
    if not isinstance(h, dict) or h.get("magic") != MAGIC:
        raise FormatError("it is not a tripy executable (its header has the wrong magic)")
    version = h.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FormatError(f"its header has an invalid format version {version!r}")
    if version > FORMAT_VERSION:
        producer = h.get("producer", "a newer tripy")
        raise FormatError(
            f"it was saved in executable format version {version} (by {producer}); this version of "
            f"tripy reads versions up to {FORMAT_VERSION}. Upgrade tripy to load it"
        )
    try:
        if not isinstance(h["stablehlo_version"], str) or not isinstance(h["device"], str):
            raise FormatError("its header has an invalid StableHLO version or device")
        if not isinstance(h["returns_tuple"], bool):
            raise FormatError("its header has an invalid 'returns_tuple'")
        level = h.get("optimization_level", 3)  # absent in files from before it was recorded
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 5:
            raise FormatError("its header has an invalid 'optimization_level'")
        inputs, outputs, constants = h["inputs"], h["outputs"], h["constants"]
        if not (isinstance(inputs, list) and isinstance(outputs, list) and outputs and isinstance(constants, list)):
            raise FormatError("its header has an invalid signature")
        seen = set()
        for i in inputs:
            if not isinstance(i, dict) or not isinstance(i.get("name"), str) or i["name"] in seen:
                raise FormatError("its header has an invalid or repeated input name")
            seen.add(i["name"])
            input_info_from_json(i)
        for o in outputs:
            if not isinstance(o, dict) or not _is_int_list(o.get("shape"), -1):
                raise FormatError("its header has an invalid output")
            dtype_from_name(o.get("dtype"))
        for meta in [h["program"]] + constants:
            if not (
                isinstance(meta, dict)
                and isinstance(meta.get("member"), str)
                and isinstance(meta.get("sha256"), str)
                and isinstance(meta.get("size"), int)
            ):
                raise FormatError("its header has an invalid member description")
        for meta in constants:
            if not _is_int_list(meta.get("shape"), 0):
                raise FormatError("its header has an invalid constant shape")
            dtype_from_name(meta.get("dtype"))
    except KeyError as e:
        raise FormatError(f"its header lacks the field {e}") from None
    except FormatError:
        raise
    except ValueError as e:
        raise FormatError(f"its header is invalid: {e}") from None


def check_signature(module_bytes: bytes, contents: Contents) -> None:
    """Check the program's main function against the header's signature. Raises FormatError."""
    from jax.extend.mlir import ir

    with context(), ir.Location.unknown():
        module = ir.Module.parse(module_bytes)
        main = main_function(module)
        if main is None:
            raise FormatError("the program has no 'main' function")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        expected_inputs = [tensor_type(info.trace_shape, info.dtype) for info in contents.infos]
        expected_inputs += [
            tensor_type(c.shape, dtypes.from_numpy(c.dtype))  # type: ignore[arg-type]
            for c in contents.constants
        ]
        if [str(t) for t in ftype.inputs] != [str(t) for t in expected_inputs]:
            raise FormatError("the program's inputs do not match the signature in the header")
        results = [ir.RankedTensorType(t) for t in ftype.results]
        if len(results) != len(contents.outputs) or any(
            r.rank != len(shape) or str(r.element_type) != str(dt.mlir_type())
            for r, (dt, shape) in zip(results, contents.outputs)
        ):
            raise FormatError("the program's outputs do not match the signature in the header")
