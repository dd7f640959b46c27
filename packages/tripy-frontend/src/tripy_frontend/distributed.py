"""tp.initialize_distributed: several processes, one mesh (PJRT's distributed runtime, gloo's CPU collectives)."""

from __future__ import annotations

from typing import Optional

from tripy_backend import devices
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api


@public_api(document_under="sharding")
def initialize_distributed(
    coordinator_address: str, num_processes: int, process_id: int, host: Optional[str] = None
) -> None:
    """Make this process one of `num_processes` that run sharded programs together: the CPU devices of all of them
    form one platform, and a :class:`Mesh` spans them (process 0's devices first). Call it in every process before
    tripy runs anything. Each process then compiles the same function and calls it with the same arguments;
    each computes its own devices' pieces, and XLA's collectives (gloo, over TCP) exchange what the program needs.

    It uses the same coordination service as ``jax.distributed.initialize``: process 0 runs it at
    `coordinator_address`, and every process connects to it.

    Args:
        coordinator_address: ``host:port`` of the coordination service (process 0 listens there).
        num_processes: How many processes take part.
        process_id: This process's number, from 0 to ``num_processes - 1``.
        host: The address this process's collectives listen on (default: the coordinator's host, right when
            all the processes are on one machine).

    .. code-block:: python

        # Each process calls it first thing, e.g. tp.initialize_distributed("127.0.0.1:12345", 2, process_id)
        # (examples/sharded_processes.py). Bad arguments are reported before anything starts:
        try:
            tp.initialize_distributed("127.0.0.1:12345", num_processes=2, process_id=2)
        except tp.TripyException as e:
            assert "process_id must be in [0, 2)" in str(e)
    """
    where = _stack.capture()
    if not 0 <= process_id < num_processes:
        raise_error(
            f"tripy.initialize_distributed: process_id must be in [0, {num_processes}), but got {process_id}.", where
        )
    if ":" not in coordinator_address:
        raise_error(
            f"tripy.initialize_distributed: coordinator_address must be 'host:port', but got {coordinator_address!r}.",
            where,
        )
    try:
        devices.join_processes(
            coordinator_address,
            num_processes,
            process_id,
            host if host is not None else coordinator_address.rsplit(":", 1)[0],
        )
    except Exception as e:
        raise_error(
            f"tripy.initialize_distributed: could not join the other processes: {e}",
            where,
            [
                "Call it before tripy runs anything, in every process, with the same coordinator_address and "
                "num_processes."
            ],
        )
