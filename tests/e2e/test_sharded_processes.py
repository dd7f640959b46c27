"""examples/sharded_processes.py: one sharded program run by two processes on this machine (loopback). PJRT's
distributed runtime joins their CPU devices into one mesh (tp.initialize_distributed, the coordination service
jax.distributed uses), gloo's TCP collectives carry the all-reduce, and each process gets the result of one
process with two host devices."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np

EXAMPLE = str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "sharded_processes.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _result(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def test_two_processes_give_the_result_of_one() -> None:
    coordinator = f"127.0.0.1:{_free_port()}"
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # one device per process
    procs = [
        subprocess.Popen(
            [sys.executable, EXAMPLE, "--process-id", str(i), "--coordinator", coordinator],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in (0, 1)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out[-2000:] + err[-3000:]
    first, second = (_result(out) for out, _ in outs)
    one = subprocess.run(
        [sys.executable, EXAMPLE],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(env, XLA_FLAGS="--xla_force_host_platform_device_count=2"),
    )
    assert one.returncode == 0, one.stderr[-3000:]
    single = _result(one.stdout)
    assert first["row_sums"] == second["row_sums"]
    np.testing.assert_allclose(first["row_sums"], single["row_sums"], rtol=1e-6)
    assert single["split_result_readable"] and not first["split_result_readable"]
    assert not second["split_result_readable"]
