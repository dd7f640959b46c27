"""One sharded program run by two processes on this machine (loopback): PJRT's distributed runtime joins their
CPU devices into one mesh (tp.initialize_distributed, the coordination service jax.distributed uses), gloo's TCP
collectives carry the all-reduce, and each process gets the same result as one process with two host devices."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np

_PROGRAM = """
import json, sys
import numpy as np
import tripy as tp
process_id, port = int(sys.argv[1]), sys.argv[2]
if process_id >= 0:
    tp.initialize_distributed(f"127.0.0.1:{port}", 2, process_id)
mesh = tp.Mesh((2,), ("model",))
rng = np.random.default_rng(0)
x = rng.normal(size=(4, 8)).astype(np.float32)
w = rng.normal(size=(8, 6)).astype(np.float32)
w_split = tp.shard(tp.Tensor(w), tp.Sharding(mesh, (None, "model")))  # each device holds 3 columns
exe = tp.compile(lambda a: tp.sum(tp.relu(a @ w_split), dim=1), args=[tp.InputInfo((4, 8), tp.float32)])
out = np.from_dlpack(exe(tp.Tensor(x)))  # the sum over the split dim: an all-reduce, whole in every process
assert np.allclose(out, np.maximum(x @ w, 0).sum(1), rtol=1e-5), out
split = tp.compile(lambda a: a @ w_split, args=[tp.InputInfo((4, 8), tp.float32)])(tp.Tensor(x))
try:
    np.from_dlpack(split)
    whole = True
except tp.TripyException as e:
    assert "holds only its own pieces" in str(e), str(e)
    whole = False
print(json.dumps({"out": out.tolist(), "whole": whole}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _result(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def test_two_processes_give_the_result_of_one() -> None:
    port = str(_free_port())
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # one device per process
    procs = [subprocess.Popen([sys.executable, "-c", _PROGRAM, str(i), port], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in (0, 1)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out[-2000:] + err[-3000:]
    first, second = (_result(out) for out, _ in outs)
    one = subprocess.run([sys.executable, "-c", _PROGRAM, "-1", "0"], capture_output=True, text=True, timeout=300,
                         env=dict(env, XLA_FLAGS="--xla_force_host_platform_device_count=2"))
    assert one.returncode == 0, one.stderr[-3000:]
    single = _result(one.stdout)
    assert first["out"] == second["out"]
    np.testing.assert_allclose(first["out"], single["out"], rtol=1e-6)
    assert single["whole"] and not first["whole"] and not second["whole"]
