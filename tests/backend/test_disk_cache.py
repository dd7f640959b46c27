"""The persistent (on-disk) cache of compiled programs: hits across processes, concurrent writers, and
damaged entries, which are ignored and rebuilt (never a crash).

Only the backend and FlatIR are used here (programs are built by hand in FlatIR).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tripy_backend import _xla, cpu_plan, disk_cache
from tripy_backend import compile as backend_compile
from tripy_backend.memory import to_device, to_numpy
from tripy_flatir import FlatIRFunction, FlatIRTensor, device, float32
from tripy_flatir.ops.add import AddOp
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.constant import ConstantOp
from tripy_flatir.ops.tanh import TanhOp

CPU = device("cpu")
SHAPE = (2, 3)


def make_module(offset: float) -> object:
    """tanh(x) + offset, as a StableHLO module built through FlatIR."""
    fn = FlatIRFunction()
    x = fn.add_input(FlatIRTensor("x", SHAPE, float32, CPU))
    t = FlatIRTensor("t", SHAPE, float32, CPU)
    TanhOp.build([x], [t])
    c = FlatIRTensor("c", (), float32, CPU)
    ConstantOp.build([], [c], data=np.float32(offset))
    cb = FlatIRTensor("cb", SHAPE, float32, CPU)
    BroadcastOp.build([c], [cb], broadcast_dim=[])
    out = FlatIRTensor("out", SHAPE, float32, CPU)
    AddOp.build([t, cb], [out])
    fn.integrate_subgraph([], [out], [], [out])
    fn.outputs = [out]
    return fn.to_mlir()


def run(offset: float) -> np.ndarray:
    """Compile (through the disk cache, if on) and run the program on a fixed input."""
    x = np.arange(6, dtype=np.float32).reshape(SHAPE)
    exe = backend_compile(make_module(offset), [SHAPE], CPU)
    out = to_numpy(exe([to_device(x, CPU)])[0])
    np.testing.assert_allclose(out, np.tanh(x) + offset, rtol=1e-6)
    return out


def entries(root) -> list:
    return sorted(n for n in os.listdir(root) if n.endswith(disk_cache.SUFFIX))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh cache directory, turned on for this test only; counters reset."""
    monkeypatch.setattr(disk_cache, "stats", disk_cache.Stats())
    root = tmp_path / "cache"
    disk_cache.set_directory(root)
    yield str(root)
    disk_cache.set_directory(None)
    monkeypatch.setattr(disk_cache, "_directory", disk_cache._UNSET)


def test_off_by_default(monkeypatch, tmp_path):
    monkeypatch.delenv(disk_cache.ENV_VAR, raising=False)
    monkeypatch.setattr(disk_cache, "_directory", disk_cache._UNSET)
    assert disk_cache.directory() is None
    monkeypatch.setenv(disk_cache.ENV_VAR, str(tmp_path))
    assert disk_cache.directory() == str(tmp_path)
    disk_cache.set_directory(None)  # the API wins over the environment
    assert disk_cache.directory() is None


def test_second_compile_is_loaded_not_compiled(cache_dir, monkeypatch):
    run(1.0)
    assert disk_cache.stats.misses == 1 and disk_cache.stats.writes == 1
    assert len(entries(cache_dir)) == 1

    def no_compile(*args, **kwargs):
        raise AssertionError("should have been loaded from the disk cache")

    monkeypatch.setattr(_xla, "compile", no_compile)
    run(1.0)
    assert disk_cache.stats.hits == 1
    with pytest.raises(Exception, match="should have been loaded"):
        run(2.0)  # a different program is a different key


def test_key_covers_program_and_compiler():
    fp = cpu_plan.fingerprint("cpu", 0)
    assert "jaxlib=" in fp and "platform=cpu" in fp and "device=" in fp
    base = disk_cache.program_key(b"program", fp)
    assert base == disk_cache.program_key(b"program", fp)
    assert base != disk_cache.program_key(b"program2", fp)
    assert base != disk_cache.program_key(b"program", fp.replace("jaxlib=", "jaxlib=0"))


def _corrupt(path: str, how: str) -> None:
    data = open(path, "rb").read()
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "truncated_header":
        data = data[:10]
    elif how == "empty":
        data = b""
    elif how == "flipped_byte":
        i = len(data) - 7
        data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :]
    elif how == "garbage":
        data = os.urandom(len(data))
    elif how == "valid_checksum_bad_payload":  # intact file, but not a loadable executable
        key = os.path.basename(path)[: -len(disk_cache.SUFFIX)]
        data = disk_cache.encode(b"\x00not an executable" * 20, key)
    elif how == "other_key":  # a complete entry that belongs to a different program
        data = disk_cache.encode(disk_cache.decode(data, os.path.basename(path)[:-3]) or b"", "0" * 64)
    with open(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize(
    "how",
    ["truncated", "truncated_header", "empty", "flipped_byte", "garbage", "valid_checksum_bad_payload", "other_key"],
)
def test_damaged_entry_is_ignored_and_rebuilt(cache_dir, how):
    run(3.0)
    (name,) = entries(cache_dir)
    path = os.path.join(cache_dir, name)
    _corrupt(path, how)

    run(3.0)  # no crash, right answer: the entry was ignored and the program compiled again
    assert disk_cache.stats.bad_entries == 1
    assert disk_cache.stats.misses == 2 and disk_cache.stats.hits == 0
    key = name[: -len(disk_cache.SUFFIX)]
    assert disk_cache.decode(open(path, "rb").read(), key) is not None, "the entry was not rewritten"

    run(3.0)  # and the rebuilt entry is used
    assert disk_cache.stats.hits == 1


def test_unwritable_directory_only_costs_the_compile(tmp_path, monkeypatch):
    monkeypatch.setattr(disk_cache, "stats", disk_cache.Stats())
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    disk_cache.set_directory(blocker / "cache")
    try:
        run(4.0)
        run(4.0)
    finally:
        disk_cache.set_directory(None)
        monkeypatch.setattr(disk_cache, "_directory", disk_cache._UNSET)
    assert disk_cache.stats.write_errors == 2 and disk_cache.stats.hits == 0


# ---- several processes ----------------------------------------------------------------------------

_STORE_LOAD_WORKER = textwrap.dedent("""
    import os, sys, time
    from tripy_backend.disk_cache import DiskCache
    root, key, worker, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    while not os.path.exists(go):
        time.sleep(0.001)
    cache = DiskCache(root)
    valid = {bytes([w]) * (1000 + 997 * w) for w in range(8)}  # what any worker may have written
    for i in range(150):
        if worker % 2 == 0:
            assert cache.store(key, bytes([worker]) * (1000 + 997 * worker))
        payload = cache.load(key)
        assert payload is None or payload in valid, f"torn or corrupt read: {len(payload)} bytes"
    print("ok")
""")


def _spawn(code: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def test_concurrent_writers_and_readers_never_see_a_partial_entry(tmp_path):
    root, key, go = str(tmp_path / "cache"), "ab" * 32, str(tmp_path / "go")
    procs = [_spawn(_STORE_LOAD_WORKER, root, key, str(w), go) for w in range(4)]
    open(go, "w").close()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    assert entries(root) == [key + disk_cache.SUFFIX]
    assert not [n for n in os.listdir(root) if n.endswith(".tmp")], "temporary files were left behind"


_COMPILE_WORKER = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, os.path.dirname(sys.argv[2]))
    go = sys.argv[1]
    import test_disk_cache as t
    from tripy_backend import disk_cache
    while not os.path.exists(go):
        time.sleep(0.001)
    t.run(5.0)
    s = disk_cache.stats
    print(s.hits, s.misses, s.bad_entries)
""")


def test_processes_compiling_the_same_program_at_once(tmp_path):
    root, go = str(tmp_path / "cache"), str(tmp_path / "go")
    env = dict(os.environ, **{disk_cache.ENV_VAR: root})
    procs = [_spawn(_COMPILE_WORKER, go, __file__, env=env) for _ in range(3)]
    open(go, "w").close()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        hits, misses, bad = map(int, out.split())
        assert hits + misses == 1 and bad == 0
    (name,) = entries(root)
    assert disk_cache.decode(open(os.path.join(root, name), "rb").read(), name[: -len(disk_cache.SUFFIX)])
    assert not [n for n in os.listdir(root) if n.endswith(".tmp")]

    # a new process now loads the program instead of compiling it
    p = _spawn(_COMPILE_WORKER, str(tmp_path), __file__, env=env)  # `go` = an existing path: start at once
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert out.split() == ["1", "0", "0"]


def test_size_limit_evicts_the_least_recently_used_entries(cache_dir, monkeypatch):
    run(1.0)
    one = os.path.getsize(os.path.join(cache_dir, entries(cache_dir)[0]))
    monkeypatch.setenv(disk_cache.MAX_SIZE_ENV_VAR, str(int(one * 2.5)))  # room for two entries
    assert disk_cache.max_size() == int(one * 2.5)
    run(2.0)
    first_two = entries(cache_dir)
    assert len(first_two) == 2 and disk_cache.stats.evictions == 0
    old = os.stat(os.path.join(cache_dir, first_two[0])).st_mtime_ns
    for name in first_two:  # both written "long ago"; then the program of offset 1.0 is used again
        os.utime(os.path.join(cache_dir, name), ns=(old - 10**9, old - 10**9))
    run(1.0)
    assert disk_cache.stats.hits == 1
    run(3.0)  # a third entry: the least recently used one (offset 2.0) goes
    assert disk_cache.stats.evictions == 1 and len(entries(cache_dir)) == 2
    monkeypatch.setattr(_xla, "compile", lambda *a, **k: (_ for _ in ()).throw(AssertionError("compiled")))
    run(1.0)
    run(3.0)
    with pytest.raises(Exception, match="compiled"):
        run(2.0)  # evicted


@pytest.mark.parametrize(
    "text,size", [("1000", 1000), ("500M", 500 << 20), ("2GB", 2 << 30), ("1.5k", 1536), ("", None), ("lots", None)]
)
def test_size_limit_from_the_environment(monkeypatch, text, size):
    monkeypatch.setattr(disk_cache, "_max_size", disk_cache._UNSET)
    monkeypatch.setenv(disk_cache.MAX_SIZE_ENV_VAR, text)
    assert disk_cache.max_size() == size
    disk_cache.set_max_size(10)  # the API wins over the environment
    assert disk_cache.max_size() == 10
    disk_cache.set_max_size(None)
    assert disk_cache.max_size() is None


def test_untrusted_compiled_code_is_never_read(cache_dir, monkeypatch):
    # entries are native code that the process runs; TRIPY_TRUST_COMPILED_CODE=0 turns reading them off
    run(1.0)
    monkeypatch.setenv(disk_cache.TRUST_ENV_VAR, "0")
    assert not disk_cache.trusted()
    count = _xla.compilation_count()
    run(1.0)
    assert _xla.compilation_count() == count + 1 and disk_cache.stats.hits == 0
