"""``tripy serve model.tpexe [more.tpexe ...] --port 8000`` (also ``python -m tripy_serve ...`` and
``python -m tripy.serve ...``; the ``tripy`` command of ``tripy-inference`` hands ``serve`` to :func:`main`).

Loads each saved executable (its compiled code, or it compiles it for its declared ranges now, so no request
compiles), names it after its file (``resnet.tpexe`` -> ``resnet``), and serves them with uvicorn until
SIGINT or SIGTERM; on either, uvicorn stops accepting connections and finishes the requests in flight
before it exits.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import Any, AsyncIterator, Callable, Optional, Sequence, TypeVar

import uvicorn

import tripy as tp
from tripy_serve.app import create_app
from tripy_serve.completions import LanguageModel
from tripy_serve.grpc_v2 import service as grpc_service
from tripy_serve.metrics import Metrics
from tripy_serve.protocol import client_message
from tripy_serve.repository import Batching, ModelStore

T = TypeVar("T")
log = logging.getLogger("tripy.serve")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tripy serve",
        description="Serve saved tripy executables over the Open "
        "Inference Protocol (KServe v2), and a language model over /v1/completions.",
    )
    p.add_argument("models", nargs="*", metavar="MODEL.tpexe", help="saved executables (tp.Executable.save)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default: %(default)s)")
    p.add_argument(
        "--model-repository",
        metavar="DIR",
        help="a directory of MODEL.tpexe files: each a model named after its file, listed, loaded and "
        "unloaded through the repository API (POST /v2/repository/...)",
    )
    p.add_argument(
        "--model-control-mode",
        choices=["none", "explicit"],
        default="none",
        help="none: load the repository's models at start-up (default); explicit: only on request",
    )
    p.add_argument(
        "--grpc-port",
        type=int,
        metavar="PORT",
        help="also serve the protocol over gRPC (KServe v2 GRPCInferenceService) on this port, e.g. 8001 "
        "(default: HTTP only)",
    )
    _add_batching_options(p)
    p.add_argument(
        "--max-body-bytes",
        type=int,
        default=64 << 20,
        help="refuse request bodies larger than this with 413 (default: %(default)s)",
    )
    p.add_argument(
        "--lm",
        metavar="MODEL.json",
        help="a language model's manifest (examples/gpt2/export.py) to serve on /v1/completions",
    )
    p.add_argument(
        "--tokenizer",
        metavar="tokenizer.json",
        help="a Hugging Face tokenizer file: /v1/completions then takes and returns text too",
    )
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    return p


def _add_batching_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-batch",
        type=int,
        default=1,
        help="dynamic batching: at most this many rows (dim 0) per call; 1 turns it off (default)",
    )
    p.add_argument(
        "--max-wait-ms",
        type=float,
        default=2.0,
        help="dynamic batching: how long a request waits for others (default: %(default)s ms)",
    )
    p.add_argument(
        "--pad-batch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="dynamic batching: run every call at --max-batch rows, so a request's result is bitwise "
        "the same whatever it is batched with (default); --no-pad-batch runs each batch at its size",
    )


def main(argv: Optional[Sequence[str]] = None) -> None:
    """``tripy serve``: serve the models that `argv` (the command line after ``serve``) names until SIGINT or
    SIGTERM."""
    args = parser().parse_args(argv)
    if not args.models and not args.lm and not args.model_repository:
        parser().error("give at least one MODEL.tpexe, --model-repository DIR or --lm MODEL.json")
    if args.max_batch < 1 or args.max_wait_ms < 0 or args.max_body_bytes < 1:
        parser().error("--max-batch and --max-body-bytes must be positive, --max-wait-ms not negative")
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s:     %(name)s: %(message)s")
    metrics = Metrics()
    store = _store(args, metrics)
    lm = _loaded(LanguageModel.load, args.lm, args.tokenizer) if args.lm else None
    lifespan = grpc_lifespan(store, args.host, args.grpc_port, args.max_body_bytes) if args.grpc_port else None
    app = create_app(store, lm, args.max_body_bytes, lifespan, metrics)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)


def _store(args: argparse.Namespace, metrics: Metrics) -> ModelStore:
    """The models to serve: the command line's (exit with one line if one cannot be loaded), then the repository's
    (unless --model-control-mode explicit; one that cannot be loaded is logged and listed UNAVAILABLE)."""
    if args.model_repository is not None and not os.path.isdir(args.model_repository):
        sys.exit(f"tripy serve: the model repository '{args.model_repository}' is not a directory.")
    store = ModelStore(Batching(args.max_batch, args.max_wait_ms / 1e3, args.pad_batch), metrics, args.model_repository)
    for path in args.models:
        name = os.path.splitext(os.path.basename(path))[0]
        if name in store.models:
            sys.exit(f"tripy serve: two models are named '{name}' (a model is named after its file)")
        store.add(name, _loaded(tp.Executable.load, path), path)
    if args.model_control_mode == "none":
        for name, path in store.paths().items():
            if name not in store.models:
                try:
                    store.add(name, tp.Executable.load(str(path)))
                except (tp.TripyException, OSError) as e:
                    store.failures[name] = client_message(e)
                    log.error("model '%s' (%s) could not be loaded: %s", name, path, client_message(e))
    return store


def _loaded(load: Callable[..., T], *args: Any) -> T:
    """`load(*args)` (a saved executable, a language model); tripy's message alone (no traceback), and exit,
    when the file cannot be loaded."""
    try:
        return load(*args)
    except tp.TripyException as e:  # (its report points at this script's line: the message alone is what helps)
        text = str(e)
        sys.exit(f"tripy serve: {text.split(chr(10) * 2, 1)[-1] if text.startswith('-->') else text}")
    except OSError as e:
        sys.exit(f"tripy serve: cannot read '{e.filename or args[0]}': {e.strerror or e}.")
    except (ValueError, KeyError) as e:
        sys.exit(f"tripy serve: cannot load '{args[0]}': {e}.")


def grpc_lifespan(store: ModelStore, host: str, port: int, max_message_bytes: int) -> Callable[[Any], Any]:
    """The HTTP application's lifespan: the gRPC server runs beside it, in its event loop, over the same models.
    It stops after the HTTP server (which, on SIGTERM, finishes its requests first), finishing its own requests
    in flight (up to 30 s)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        server = await grpc_service.start(grpc_service.InferenceService(store), host, port, max_message_bytes)
        log.info("gRPC (KServe v2 GRPCInferenceService) on %s:%d", host, port)
        try:
            yield
        finally:
            await server.stop(grace=30)

    return lifespan
