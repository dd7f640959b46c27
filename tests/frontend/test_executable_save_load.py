"""Executable.save / Executable.load: round trips (static, dynamic, named dims, baked-in tensors of every
kind, tuple results), the portable versioned artifact in the file, and clear errors, with nothing
half-loaded, for missing, truncated, corrupted, foreign and future files."""

import hashlib
import json
import os
import re
import zipfile

import numpy as np
import pytest

import tripy as tp
from tripy_frontend.compiler import artifact


def _line_of(marker):
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A dynamic executable with a named dim, a baked-in tensor and a tuple result, saved to a file."""
    batch = tp.NamedDimension("batch", 1, 2, 6)
    w = tp.Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))

    def fn(x, y, w):
        return x @ w + tp.unsqueeze(y, 1), tp.reshape(x, (x.shape[0] * 3,))

    exe = tp.compile(fn, args=[tp.InputInfo((batch, 3), tp.float32), tp.InputInfo((batch,), tp.float32), w])
    path = str(tmp_path_factory.mktemp("exe") / "fn.tpexe")
    exe.save(path)
    return exe, path


def _check_fn(exe, n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    a, b = exe(tp.Tensor(x), tp.Tensor(y))
    assert np.allclose(np.from_dlpack(a), x @ w + y[:, None], rtol=1e-5, atol=1e-6)
    assert np.array_equal(np.from_dlpack(b), x.reshape(-1))


def test_round_trip(saved):
    exe, path = saved
    loaded = tp.Executable.load(path)
    assert isinstance(loaded, tp.Executable)
    assert loaded.input_infos == exe.input_infos
    assert loaded.input_infos["x"].dimension_names == {0: "batch"}
    assert repr(loaded) == repr(exe)
    for n in (1, 2, 5, 6):
        _check_fn(loaded, n)
    with pytest.raises(tp.TripyException, match="disagree on the named dimension 'batch'"):
        loaded(tp.ones((2, 3)), tp.ones((3,)))
    with pytest.raises(tp.TripyException, match=re.escape("dim 0 is 7, which is outside the allowed range [1, 6]")):
        loaded(tp.ones((7, 3)), tp.ones((7,)))
    assert "tensor<?x3xf32>" in loaded.stablehlo and "dot_general" in loaded.stablehlo


def test_file_holds_a_versioned_portable_artifact_and_the_signature(saved):
    _, path = saved
    with zipfile.ZipFile(path) as z:
        header = json.loads(z.read(artifact.HEADER))
        program = z.read(header["program"]["member"])
        constant = z.read(header["constants"][0]["member"])
    assert header["magic"] == "tripy.Executable" and header["format_version"] == artifact.FORMAT_VERSION
    assert re.fullmatch(r"\d+\.\d+\.\d+", header["stablehlo_version"])
    assert program.startswith(b"ML\xefR")  # MLIR bytecode (StableHLO portable artifact)
    assert b"StableHLO_v" in program
    assert [i["name"] for i in header["inputs"]] == ["x", "y"]
    assert header["inputs"][0]["min"] == [1, 3] and header["inputs"][0]["max"] == [6, 3]
    assert header["returns_tuple"] is True
    assert np.array_equal(np.frombuffer(constant, np.float32), np.linspace(-1, 1, 12, dtype=np.float32))


@pytest.mark.parametrize("dtype", [tp.float32, tp.float16, tp.bfloat16, tp.int8, tp.int32, tp.int64, tp.bool])
def test_baked_tensors_of_every_dtype_and_static_programs(tmp_path, dtype):
    c = tp.cast(tp.Tensor([[1.0, 0.0, 3.0]]), dtype).eval()
    exe = tp.compile(
        lambda x, c: tp.cast(x, tp.float32) + tp.cast(c, tp.float32), args=[tp.InputInfo((2, 3), dtype), c]
    )
    path = str(tmp_path / "exe.tpexe")
    exe.save(path)
    loaded = tp.Executable.load(path)
    x = tp.cast(tp.Tensor([[1.0, 1.0, 0.0], [2.0, 0.0, 1.0]]), dtype)
    assert loaded(x).tolist() == exe(x).tolist()


def test_save_replaces_an_existing_file(saved, tmp_path):
    path = str(tmp_path / "exe.tpexe")
    tp.compile(lambda x: x, args=[tp.InputInfo((1,), tp.float32)]).save(path)
    saved[0].save(path)
    _check_fn(tp.Executable.load(path), 3)
    assert os.listdir(tmp_path) == ["exe.tpexe"]  # no temporary files left behind


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_save_honours_the_umask(saved, tmp_path, umask, mode):
    # as open() would create it: a server running as another user (or a container) can read a 0644 file
    old = os.umask(umask)
    try:
        saved[0].save(str(tmp_path / "exe.tpexe"))
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "exe.tpexe").st_mode & 0o777 == mode


def test_load_can_ignore_the_stored_compiled_code(saved, monkeypatch):
    # The compiled code in a file is run as it is (checksums catch damage, not tampering); not trusting it
    # compiles the stored StableHLO instead, by argument or for the whole process by the environment.
    import tripy_backend

    _, path = saved
    before = tripy_backend.compilation_count()
    _check_fn(tp.Executable.load(path), 2)
    assert tripy_backend.compilation_count() == before  # the stored code, trusted by default
    _check_fn(tp.Executable.load(path, trust_compiled_code=False), 2)
    assert tripy_backend.compilation_count() > before
    monkeypatch.setenv("TRIPY_TRUST_COMPILED_CODE", "0")
    before = tripy_backend.compilation_count()
    _check_fn(tp.Executable.load(path), 5)
    assert tripy_backend.compilation_count() > before
    before = tripy_backend.compilation_count()
    _check_fn(tp.Executable.load(path, trust_compiled_code=True), 5)  # the argument wins
    assert tripy_backend.compilation_count() == before


def test_save_creates_missing_parent_directories(saved, tmp_path):
    path = tmp_path / "missing" / "nested" / "exe.tpexe"
    saved[0].save(str(path))  # as nvtripy's save does
    assert tp.Executable.load(str(path)) is not None


def test_save_under_a_file_is_a_clear_error(saved, tmp_path):
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(tp.TripyException, match="tripy.Executable.save: could not write") as e:
        saved[0].save(str(tmp_path / "file" / "exe.tpexe"))  # MARK-save
    assert f"{__file__}:{_line_of('MARK-save')}" in str(e.value)


# ---- bad files -------------------------------------------------------------------------------------
def _load_error(path):
    with pytest.raises(tp.TripyException) as e:
        tp.Executable.load(str(path))  # MARK-load
    msg = str(e.value)
    assert f"{__file__}:{_line_of('MARK-load')}" in msg
    assert f"tripy.Executable.load: cannot load '{path}'" in msg
    return msg


def _rewrite(src, dst, header_edit=None, member_edit=None, drop=None):
    """Copy the archive `src` to `dst`, editing the header (a dict) or a member's bytes."""
    with zipfile.ZipFile(src) as z:
        items = {n: z.read(n) for n in z.namelist()}
    header = json.loads(items[artifact.HEADER])
    if header_edit:
        header_edit(header)
    items[artifact.HEADER] = json.dumps(header).encode()
    if member_edit:
        name, fn = member_edit
        items[name] = fn(items[name])
    with zipfile.ZipFile(dst, "w") as z:
        for n, data in items.items():
            if n != drop:
                z.writestr(n, data)


def test_missing_file(tmp_path):
    assert "the file does not exist" in _load_error(tmp_path / "nope.tpexe")


def test_directory(tmp_path):
    assert "it is a directory" in _load_error(tmp_path)


def test_empty_file(tmp_path):
    (tmp_path / "empty.tpexe").write_bytes(b"")
    assert "the file is empty" in _load_error(tmp_path / "empty.tpexe")


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.999])
def test_truncated_file(saved, tmp_path, keep):
    data = open(saved[1], "rb").read()
    path = tmp_path / "truncated.tpexe"
    path.write_bytes(data[: int(len(data) * keep)])
    assert "truncated, corrupted" in _load_error(path)


def test_flipped_byte_in_the_program(saved, tmp_path):
    data = bytearray(open(saved[1], "rb").read())
    with zipfile.ZipFile(saved[1]) as z:
        info = z.getinfo(artifact.PROGRAM)
    offset = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.file_size // 2
    data[offset] ^= 0xFF
    path = tmp_path / "flipped.tpexe"
    path.write_bytes(bytes(data))
    msg = _load_error(path)
    assert "the program ('program.stablehlo') is corrupted" in msg


def test_program_altered_with_a_matching_zip_crc(saved, tmp_path):
    path = tmp_path / "altered.tpexe"
    _rewrite(saved[1], path, member_edit=(artifact.PROGRAM, lambda b: b[:-8] + b"\0" * 8))
    assert "does not match the header" in _load_error(path)


def test_program_replaced_consistently_is_still_checked(saved, tmp_path):
    """A member that matches its checksum but is not a valid program is caught when deserializing."""
    junk = b"ML\xefR not really a program"

    def edit(h):
        h["program"]["size"] = len(junk)
        h["program"]["sha256"] = hashlib.sha256(junk).hexdigest()

    path = tmp_path / "junk.tpexe"
    _rewrite(saved[1], path, header_edit=edit, member_edit=(artifact.PROGRAM, lambda b: junk))
    assert "the program is corrupted or was written by an incompatible version" in _load_error(path)


def test_signature_not_matching_the_program(saved, tmp_path):
    def edit(h):
        h["inputs"][0]["min"][1] = h["inputs"][0]["opt"][1] = h["inputs"][0]["max"][1] = 5

    path = tmp_path / "sig.tpexe"
    _rewrite(saved[1], path, header_edit=edit)
    assert "the program's inputs do not match the signature in the header" in _load_error(path)


def test_missing_member(saved, tmp_path):
    path = tmp_path / "missing.tpexe"
    _rewrite(saved[1], path, drop="constants/0.bin")
    assert "constant 0 ('constants/0.bin') is missing" in _load_error(path)


def test_constant_of_the_wrong_size(saved, tmp_path):
    def edit(h):
        h["constants"][0]["shape"] = [5, 4]

    path = tmp_path / "size.tpexe"
    _rewrite(saved[1], path, header_edit=edit)
    assert "does not hold float32 data of shape [5, 4]" in _load_error(path)


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda h: h.update(magic="something.else"), "not a tripy executable (its header has the wrong magic)"),
        (
            lambda h: h.update(format_version=artifact.FORMAT_VERSION + 1),
            f"saved in executable format version {artifact.FORMAT_VERSION + 1}",
        ),
        (lambda h: h.update(format_version="1"), "invalid format version"),
        (lambda h: h.pop("inputs"), "its header lacks the field 'inputs'"),
        (lambda h: h["inputs"][0].update(dtype="float128"), "unknown data type 'float128'"),
        (lambda h: h["inputs"][0].update(min=[9, 3]), "invalid input shape bounds"),
        (lambda h: h.update(outputs=[]), "invalid signature"),
        (lambda h: h.update(device="tpu:0"), "Unknown device kind 'tpu'"),
    ],
)
def test_bad_headers(saved, tmp_path, edit, message):
    path = tmp_path / "header.tpexe"
    _rewrite(saved[1], path, header_edit=edit)
    assert message in _load_error(path)


def test_corrupted_header_json(saved, tmp_path):
    path = tmp_path / "json.tpexe"
    with zipfile.ZipFile(saved[1]) as z:
        items = {n: z.read(n) for n in z.namelist()}
    items[artifact.HEADER] = items[artifact.HEADER][:-20]
    with zipfile.ZipFile(path, "w") as z:
        for n, data in items.items():
            z.writestr(n, data)
    assert "its header is corrupted" in _load_error(path)


@pytest.mark.parametrize("kind", ["text", "random", "npz", "json"])
def test_foreign_files(tmp_path, kind):
    path = tmp_path / f"foreign.{kind}"
    if kind == "text":
        path.write_text("hello, this is not an executable\n")
    elif kind == "random":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "npz":
        with open(path, "wb") as f:
            np.savez(f, a=np.ones(3))
    else:
        path.write_text(json.dumps({"magic": "tripy.Executable", "format_version": 1}))
    assert "it is not a tripy executable" in _load_error(path)


def test_chlo_ops_survive_the_portable_artifact(tmp_path):
    """tp.gelu lowers to chlo.erf, which the portable artifact stores in a form XLA still compiles."""
    exe = tp.compile(lambda x: tp.gelu(x), args=[tp.InputInfo(((1, 2, 4), 3), tp.float32)])
    assert "chlo.erf" in exe.stablehlo
    path = str(tmp_path / "gelu.tpexe")
    exe.save(path)
    loaded = tp.Executable.load(path)
    x = tp.Tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3))
    assert np.allclose(np.from_dlpack(loaded(x)), np.from_dlpack(exe(x)), rtol=1e-6, atol=1e-6)
