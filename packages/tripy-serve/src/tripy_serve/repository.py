"""The models a server serves, and the model repository extension: a directory of ``.tpexe`` files (each a model
named after its file, ``resnet.tpexe`` -> ``resnet``) that can be listed (index), loaded and unloaded while the
server runs, over HTTP and gRPC alike.

Loading reads the file again (so a replaced file is served from then on) and swaps the model in at once: requests
already running finish on the model they started on. Unloading takes the model out of service (new requests get a
404) and returns once its requests in flight are answered.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional

import tripy as tp
from tripy_serve.batching import BatchingModel
from tripy_serve.metrics import Metrics
from tripy_serve.protocol import ServeError, client_message


# Load/unload parameters that mean nothing here (a model has no dependents) and are accepted as clients send them.
IGNORED_PARAMETERS = {"unload_dependents"}


def check_repository_parameters(names: Iterable[str]) -> None:
    """A 400 for load or unload parameters this server does not take (a configuration or file overrides)."""
    refused = sorted(set(names) - IGNORED_PARAMETERS)
    if refused:
        raise ServeError(
            400,
            f"This server takes no load or unload parameters ({', '.join(refused)}): a model is its "
            ".tpexe file as it is.",
        )


@dataclass
class Batching:
    """How the store's models batch (the server's ``--max-batch``, ``--max-wait-ms``, ``--pad-batch``)."""

    max_batch: int = 1
    max_wait: float = 0.002
    pad: bool = True


@dataclass
class IndexEntry:
    name: str
    state: str  # READY or UNAVAILABLE
    reason: str = ""

    def to_json(self) -> Dict[str, str]:
        entry = {"name": self.name, "version": "1", "state": self.state}
        return {**entry, "reason": self.reason} if self.reason else entry


class ModelStore:
    """The served models by name, the files they come from (the command line's, and the repository directory's
    ``.tpexe`` files), and loading and unloading them."""

    def __init__(self, batching: Batching, metrics: Optional[Metrics] = None, repository: Optional[str] = None) -> None:
        self.batching, self.metrics = batching, metrics
        self.repository = Path(repository) if repository is not None else None
        self.models: Dict[str, BatchingModel] = {}
        self.files: Dict[str, Path] = {}  # the models given on the command line
        self.failures: Dict[str, str] = {}  # why a model's last load failed
        self._lock = asyncio.Lock()

    def get(self, name: str, version: Optional[str] = None) -> BatchingModel:
        """The model named `name` (every model has one version, "1": an empty `version` means it too); a 404
        naming the models there are if it is not loaded."""
        if version not in (None, "", "1"):
            raise ServeError(404, f"Model '{name}' has no version {version!r}: every model here has one version, '1'.")
        if name not in self.models:
            served = ", ".join(sorted(self.models)) or "none"
            raise ServeError(
                404,
                f"Unknown model '{name}'. This server has: {served}."
                + (" (It is in the repository: load it first.)" if name in self.paths() else ""),
            )
        return self.models[name]

    def add(self, name: str, exe: tp.Executable, path: Optional[str] = None) -> None:
        """Serve `exe` as `name` (from the file `path`, which a load request reads again)."""
        self.models[name] = self._model(name, exe)
        if path is not None:
            self.files[name] = Path(path)

    def _model(self, name: str, exe: tp.Executable) -> BatchingModel:
        b = self.batching
        return BatchingModel(
            exe, b.max_batch, b.max_wait, b.pad, self.metrics.model(name) if self.metrics is not None else None
        )

    def paths(self) -> Dict[str, Path]:
        """Every model the server can load: the repository's ``.tpexe`` files (as they are now) and the command
        line's."""
        found = dict(self.files)
        if self.repository is not None:
            for entry in sorted(os.scandir(self.repository), key=lambda e: e.name):
                if entry.name.endswith(".tpexe") and entry.is_file():
                    found[entry.name[: -len(".tpexe")]] = Path(entry.path)
        return found

    def index(self, ready_only: bool = False) -> List[IndexEntry]:
        names = sorted(set(self.paths()) | set(self.models))
        entries = [
            IndexEntry(n, "READY")
            if n in self.models
            else IndexEntry(n, "UNAVAILABLE", self.failures.get(n, "unloaded"))
            for n in names
        ]
        return [e for e in entries if e.state == "READY" or not ready_only]

    async def load(self, name: str, load: Callable[[str], tp.Executable] = tp.Executable.load) -> None:
        """(Re)load `name` from its file; a 404 if there is no such model, a 400 with tripy's reason if the file
        cannot be loaded (the model served before, if any, stays)."""
        async with self._lock:
            path = self.paths().get(name)
            if path is None:
                where = f" in the repository {self.repository}" if self.repository is not None else ""
                raise ServeError(404, f"There is no model '{name}'{where}: a model is a NAME.tpexe file there.")
            try:
                exe = await asyncio.to_thread(load, str(path))
            except (tp.TripyException, OSError) as e:
                self.failures[name] = client_message(e)
                raise ServeError(400, f"Model '{name}' could not be loaded from {path}: {client_message(e)}") from None
            old = self.models.get(name)
            self.models[name] = self._model(name, exe)
            self.failures.pop(name, None)
        if old is not None:
            await old.drain()

    async def unload(self, name: str) -> None:
        """Stop serving `name`; returns once its requests in flight are answered."""
        async with self._lock:
            model = self.get(name)
            del self.models[name]
        await model.drain()
