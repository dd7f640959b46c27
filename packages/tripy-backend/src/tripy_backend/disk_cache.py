"""An opt-in persistent cache of compiled programs on disk, so a new process does not recompile.

Turn it on with the environment variable ``TRIPY_CACHE_DIR=/some/dir`` or from Python with
``tripy_backend.disk_cache.set_directory("/some/dir")`` (``set_directory(None)`` turns it off again,
whatever the environment says). Off by default.

* **Key**: SHA-256 of the program (the StableHLO bytecode handed to the compiler, after shape
  specialization) and the compiler fingerprint: jaxlib/XLA version, platform and its version, device,
  host CPU features and ``XLA_FLAGS`` (see ``cpu_plan.fingerprint``). A different compiler or
  machine never loads another's entry.
* **Entries** are written to a temporary file in the same directory and moved into place with
  ``os.replace``, which is atomic: concurrent processes compiling the same program each write a
  complete entry and the last one wins; a reader sees a whole old or a whole new file, never a partial one.
* **Integrity**: each entry starts with a header (magic, the key, the payload length and its SHA-256).
  A truncated, corrupt, foreign or unloadable entry is ignored (logged under the ``cache`` topic) and
  rebuilt: it never crashes the program. Writing is best effort too: a read-only or full disk only
  costs the recompile.

* **Size limit**: ``TRIPY_CACHE_MAX_SIZE`` (bytes, or with a K/M/G suffix: ``500M``; as JAX's
  ``jax_compilation_cache_max_size``) or ``set_max_size()``. After each write, the least recently used
  entries (by modification time, which a hit refreshes) are deleted until the entries fit. Unset: no
  limit; delete the directory (or call ``clear()``) to reclaim space.
* **Trust**: an entry is native code that this process runs. The checksums catch damage (a truncated or
  flipped file), not tampering: anyone who can write to the directory can make this process run their
  code. Keep the directory writable only by you. ``TRIPY_TRUST_COMPILED_CODE=0`` (``trusted()``) makes
  tripy read no entries (it compiles everything itself; it writes none either) and load no compiled code
  from saved executables either (see ``tp.Executable.load``).
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from typing import Any, List, Optional, Tuple, Union

from tripy_flatir.logging import logger
from tripy_backend import _xla, cpu_plan

ENV_VAR = "TRIPY_CACHE_DIR"
MAX_SIZE_ENV_VAR = "TRIPY_CACHE_MAX_SIZE"
TRUST_ENV_VAR = "TRIPY_TRUST_COMPILED_CODE"
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
FORMAT_VERSION = 1
MAGIC = b"TRIPYXC" + bytes([FORMAT_VERSION])
_HEADER = struct.Struct("<8s32sQ32s")  # magic, sha256(key), payload length, sha256(payload)
SUFFIX = ".xc"

_UNSET = object()
_directory: Any = _UNSET  # set_directory() overrides the environment variable
_max_size: Any = _UNSET  # set_max_size() overrides the environment variable


class Stats:
    """Counters for this process (tests and benchmarks read them)."""

    def __init__(self) -> None:
        self.hits = self.misses = self.bad_entries = self.writes = self.write_errors = self.evictions = 0

    def __repr__(self) -> str:
        return (
            f"Stats(hits={self.hits}, misses={self.misses}, bad_entries={self.bad_entries}, "
            f"writes={self.writes}, write_errors={self.write_errors}, evictions={self.evictions})"
        )


stats = Stats()


def set_directory(path: Union[str, "os.PathLike[str]", None]) -> None:
    """Use `path` for the persistent cache (created if needed); None turns the cache off."""
    global _directory
    _directory = None if path is None else os.fspath(path)


def directory() -> Optional[str]:
    """The cache directory in use, or None when the persistent cache is off."""
    if _directory is not _UNSET:
        return _directory
    return os.environ.get(ENV_VAR) or None


def set_max_size(size: Optional[int]) -> None:
    """Keep the cache's entries under `size` bytes (least recently used first out); None: no limit."""
    global _max_size
    _max_size = size


def max_size() -> Optional[int]:
    """The size limit in bytes, or None (``TRIPY_CACHE_MAX_SIZE``; an unreadable value is logged, ignored)."""
    if _max_size is not _UNSET:
        return _max_size  # type: ignore[no-any-return]
    text = os.environ.get(MAX_SIZE_ENV_VAR, "").strip().upper().removesuffix("IB").removesuffix("B")
    if not text:
        return None
    unit = text[-1] if text[-1] in _UNITS else ""
    try:
        return int(float(text[: len(text) - len(unit)]) * _UNITS[unit])
    except ValueError:
        logger.log(f"disk cache: ignoring {MAX_SIZE_ENV_VAR}={os.environ[MAX_SIZE_ENV_VAR]!r} (not a size)", "cache")
        return None


def trusted() -> bool:
    """Whether compiled code stored in files (cache entries, saved executables) may be loaded and run:
    ``TRIPY_TRUST_COMPILED_CODE`` unset or not ``0``/``false``/``no``/``off``."""
    return os.environ.get(TRUST_ENV_VAR, "1").strip().lower() not in ("0", "false", "no", "off")


def program_key(module_bytes: bytes, fingerprint: str) -> str:
    h = hashlib.sha256()
    h.update(f"tripy-disk-cache-v{FORMAT_VERSION}\0{fingerprint}\0".encode())
    h.update(module_bytes)
    return h.hexdigest()


class DiskCache:
    """Entries in one directory, one file per key."""

    def __init__(self, root: str) -> None:
        self.root = root

    def path(self, key: str) -> str:
        return os.path.join(self.root, key + SUFFIX)

    def load(self, key: str) -> Optional[bytes]:
        """The payload stored for `key`, or None if there is none or it is not intact."""
        try:
            with open(self.path(key), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            logger.log(f"disk cache: cannot read entry {key[:16]}: {e}", "cache")
            return None
        payload = decode(data, key)
        if payload is None:
            stats.bad_entries += 1
            logger.log(f"disk cache: ignoring a damaged entry {key[:16]} (it will be rebuilt)", "cache")
        else:
            try:  # (used now: the last to be evicted)
                os.utime(self.path(key))
            except OSError:
                pass
        return payload

    def evict(self, limit: int) -> int:
        """Delete the least recently used entries until the entries take at most `limit` bytes; how many."""
        found = []
        for name in os.listdir(self.root):
            if name.endswith(SUFFIX):
                try:
                    st = os.stat(os.path.join(self.root, name))
                except OSError:
                    continue
                found.append((st.st_mtime_ns, name, st.st_size))
        total = sum(size for _, _, size in found)
        evicted = 0
        for _, name, size in sorted(found):
            if total <= limit:
                break
            try:
                os.unlink(os.path.join(self.root, name))
            except OSError:
                continue
            total -= size
            evicted += 1
        if evicted:
            stats.evictions += evicted
            logger.log(f"disk cache: evicted {evicted} least recently used entries (limit {limit} bytes)", "cache")
        return evicted

    def store(self, key: str, payload: bytes) -> bool:
        """Write an entry atomically; False (and no exception) if that is not possible."""
        tmp = None
        try:
            os.makedirs(self.root, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{key[:16]}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(encode(payload, key))
            os.replace(tmp, self.path(key))
            tmp = None
            stats.writes += 1
            limit = max_size()
            if limit is not None:
                self.evict(limit)
            return True
        except OSError as e:
            stats.write_errors += 1
            logger.log(f"disk cache: cannot write entry {key[:16]}: {e}", "cache")
            return False
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def clear(self) -> None:
        """Remove every entry (and leftover temporary files) from the directory."""
        if not os.path.isdir(self.root):
            return
        for name in os.listdir(self.root):
            if name.endswith((SUFFIX, ".tmp")):
                try:
                    os.unlink(os.path.join(self.root, name))
                except OSError:
                    pass


def encode(payload: bytes, key: str) -> bytes:
    header = _HEADER.pack(MAGIC, hashlib.sha256(key.encode()).digest(), len(payload), hashlib.sha256(payload).digest())
    return header + payload


def decode(data: bytes, key: str) -> Optional[bytes]:
    """The payload of an entry, or None if it is truncated, corrupt, or belongs to another key."""
    if len(data) < _HEADER.size:
        return None
    magic, key_digest, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if (
        magic != MAGIC
        or key_digest != hashlib.sha256(key.encode()).digest()
        or length != len(payload)
        or hashlib.sha256(payload).digest() != digest
    ):
        return None
    return payload


def clear() -> None:
    """Empty the cache directory in use (if any)."""
    root = directory()
    if root:
        DiskCache(root).clear()


def compile(
    module_bytes: bytes,
    options: List[Tuple[str, Any]],
    platform: str,
    index: int,
    optimization_level: int = 3,
    num_devices: int = 1,
) -> Tuple[Any, Optional[bytes]]:
    """Compile a module the pipeline prepared (``pipeline.for_xla``: the module and its XLA `options`), through
    the persistent cache when it is on (see the module docstring): (the compiled program, the entry's bytes if it
    was loaded from one, else None). `num_devices` > 1: an SPMD program over that many devices (see
    ``_xla.compile``)."""
    root = directory()
    if not root or not trusted():
        return _xla.compile(module_bytes, platform, index, options, num_devices), None
    cache = DiskCache(root)
    key = program_key(module_bytes, f"{cpu_plan.fingerprint(platform, index, optimization_level)};{options}")
    payload = cache.load(key)
    if payload is not None:
        try:
            exe = _xla.deserialize_executable(payload, platform, index, num_devices)
            stats.hits += 1
            logger.log(f"disk cache hit: {key[:16]}", "cache")
            return exe, payload
        except Exception as e:  # an intact file that this runtime cannot load: rebuild it
            stats.bad_entries += 1
            logger.log(f"disk cache: cannot load entry {key[:16]} ({type(e).__name__}: {e}); recompiling", "cache")
    stats.misses += 1
    exe = _xla.compile(module_bytes, platform, index, options, num_devices)
    try:
        data = _xla.serialize_executable(exe, platform)
    except Exception as e:  # some programs/runtimes cannot be serialized: just do not cache them
        logger.log(f"disk cache: cannot serialize the program ({type(e).__name__}: {e})", "cache")
        return exe, None
    if cache.store(key, data):
        logger.log(f"disk cache: stored {key[:16]} ({len(data)} bytes)", "cache")
    return exe, None
