"""Starting `tripy serve` in a subprocess on 127.0.0.1 for the tests (and the benchmark)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running server: its base `url`, its process, and its log file (stdout and stderr)."""

    def __init__(self, process: subprocess.Popen, url: str, log: Path) -> None:
        self.process, self.url, self.log = process, url, log

    def client(self, timeout: float = 60.0) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=timeout)

    def log_text(self) -> str:
        return self.log.read_text()


@contextlib.contextmanager
def serve(
    args: Sequence[str], log: Path, command: Optional[List[str]] = None, startup_s: float = 120.0
) -> Iterator[Server]:
    """Run ``python -m tripy.serve ARGS --port P`` (or `command` + args) until the block ends, then SIGTERM it."""
    port = free_port()
    cmd = (command or [sys.executable, "-m", "tripy.serve"]) + list(args) + ["--host", "127.0.0.1", "--port", str(port)]
    with open(log, "w") as out:
        process = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}:\n{server.log_text()}")
            try:
                if httpx.get(f"{server.url}/v2/health/ready", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start in {startup_s} s:\n{server.log_text()}")
            time.sleep(0.1)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
