"""Running saved executables on Ray (``pip install 'tripy-inference[ray]'``): Ray Data batch inference and Ray Serve
deployments. See the guide *Scaling out* (docs/guides/scaling_out.rst).

* :class:`BatchPredictor`: the callable class for ``Dataset.map_batches``; each actor loads the executable once
  (an executable pickles as its saved file: loading it compiles nothing) and runs every batch at one row count;
* :func:`batch_size`: the batch size an executable's declared range of dim 0 allows (its largest);
* :func:`deployment`: a Ray Serve deployment serving one executable with Ray Serve's own batching.

``tripy_serve.ray.oip_deployment`` (in the ``tripy-serve`` distribution) wraps ``tripy serve``'s Open Inference
Protocol application in a Ray Serve deployment.

Only this module needs Ray; ``import tripy`` never imports it.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from tripy_backend import compilation_count
from tripy_flatir.exceptions import TripyException
from tripy_frontend.compiler.executable import Executable
from tripy_frontend.tensor import Tensor

try:  # (the optional extra: only users of this module need Ray)
    from ray import serve
    from starlette.requests import Request
except ImportError as e:  # pragma: no cover (tests/ray runs with Ray installed)
    raise ImportError(f"tripy.ray needs Ray and its Serve library ({e}): pip install 'tripy-inference[ray]'") from e

__all__ = ["BatchPredictor", "ExecutableSource", "batch_size", "deployment", "executable_of"]

ExecutableSource = Union[Executable, str, "os.PathLike[str]"]


def executable_of(source: ExecutableSource) -> Executable:
    """`source` itself, or the executable saved at that path (loaded as tp.Executable.load does)."""
    return source if isinstance(source, Executable) else Executable.load(os.fspath(source))


def batch_size(executable: Executable) -> int:
    """The largest batch `executable` runs: the largest dim 0 every input's declared range allows.

    Raises :class:`tripy.TripyException` if an input has no dim 0 or the inputs' ranges of dim 0 do not overlap.
    """
    infos = executable.input_infos
    if not infos or any(info.rank == 0 for info in infos.values()):
        raise TripyException(
            f"The executable cannot run batches: every input needs a dim 0 (the batch), but its "
            f"inputs are {executable}. Compile it with a range for dim 0, e.g. "
            "tp.InputInfo(((1, 8, 32), 64), tp.float32)."
        )
    lo = max(info.shape_bounds.min[0] for info in infos.values())
    hi = min(info.shape_bounds.max[0] for info in infos.values())
    if lo > hi:
        raise TripyException(f"The executable's inputs allow no common batch size (dim 0): {executable}.")
    return hi


def _run(executable: Executable, arrays: Sequence[np.ndarray], rows: int) -> List[np.ndarray]:
    """Run `arrays` (equal dim 0) in calls of exactly `rows` rows each (the last one padded with copies of its last
    row, whose results are dropped): results do not depend on how the data was split into batches."""
    total = len(arrays[0])
    pieces: List[List[np.ndarray]] = []
    for start in range(0, total, rows):
        chunk = [a[start : start + rows] for a in arrays]
        n = len(chunk[0])
        chunk = [np.concatenate([c, np.repeat(c[-1:], rows - n, axis=0)]) if n < rows else c for c in chunk]
        outs = executable(*[Tensor(np.ascontiguousarray(c)) for c in chunk])
        pieces.append([np.array(np.from_dlpack(o))[:n] for o in (outs if isinstance(outs, tuple) else (outs,))])
    return [np.concatenate(column) for column in zip(*pieces)]


class BatchPredictor:
    """The callable class for Ray Data's ``map_batches``: each actor loads the executable once, then runs every
    batch (a dict of NumPy arrays) through it.

    Each of the executable's inputs is read from the column of the same name; the outputs are written to the
    columns `outputs` (default ``"output"``, or ``"output_0"``, ``"output_1"``, ... for a tuple), beside the
    batch's other columns (ids, labels: passed through; the input columns are not). Every call runs
    exactly `rows` rows (default :func:`batch_size`): a smaller batch is padded, a larger one split, so a row's
    result is the same whatever batch Ray put it in.

    Args:
        executable: a :class:`tripy.Executable` (shipped to each actor pickled: it loads without compiling) or
            the path of one saved with :meth:`tripy.Executable.save` that every node can read.
        outputs: the output columns' names.
        rows: the row count of each call (in the executable's range of dim 0).

    .. code-block:: python

        ds = ray.data.from_numpy(images).map_batches(
            BatchPredictor, fn_constructor_args=(exe,), batch_size=batch_size(exe), concurrency=2)
    """

    def __init__(
        self, executable: ExecutableSource, outputs: Optional[Sequence[str]] = None, rows: Optional[int] = None
    ) -> None:
        self.executable = executable_of(executable)
        self.inputs = list(self.executable.input_infos)
        largest = batch_size(self.executable)
        self.rows = largest if rows is None else rows
        if not isinstance(self.rows, int) or not 1 <= self.rows <= largest:
            raise TripyException(
                f"rows must be an int from 1 to {largest} (the largest batch the executable's "
                f"declared range allows), but got {rows!r}."
            )
        self.outputs = list(outputs) if outputs is not None else None

    def __call__(self, batch: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        missing = [name for name in self.inputs if name not in batch]
        if missing:
            raise TripyException(
                f"The batch has no column for the executable's input(s) {missing}: its columns are "
                f"{sorted(batch)}. Name the columns after the inputs ({self.inputs})."
            )
        results = _run(self.executable, [np.asarray(batch[name]) for name in self.inputs], self.rows)
        names = self.outputs or (["output"] if len(results) == 1 else [f"output_{i}" for i in range(len(results))])
        if len(names) != len(results):
            raise TripyException(
                f"The executable has {len(results)} output(s), but {len(names)} output column "
                f"name(s) were given: {names}."
            )
        passed = {name: column for name, column in batch.items() if name not in self.inputs}  # (ids, labels, ...)
        return {**passed, **dict(zip(names, results))}


@serve.deployment
class _Deployment:
    """One executable behind Ray Serve's batching: a request is a dict of arrays (input name -> rows, through a
    deployment handle) or, over HTTP, a JSON object of nested lists; the answer is the output rows, as a dict."""

    def __init__(self, executable: ExecutableSource, max_batch_size: int, batch_wait_timeout_s: float) -> None:
        self.predictor = BatchPredictor(executable)
        self.infer.set_max_batch_size(max_batch_size)
        self.infer.set_batch_wait_timeout_s(batch_wait_timeout_s)
        self.batch_sizes: Dict[int, int] = {}  # requests per batch -> how many batches had that many

    def stats(self) -> Dict[str, Any]:
        """What this replica ran: Ray Serve's batches by size, and the programs it compiled (0 when the executable
        loaded with its compiled code)."""
        return {"batch_sizes": dict(self.batch_sizes), "compilations": compilation_count()}

    async def __call__(self, request: Any) -> Dict[str, Any]:
        if isinstance(request, Request):  # (HTTP: JSON in, JSON out)
            body = await request.json()
            infos = self.predictor.executable.input_infos
            arrays = {name: np.asarray(body[name], dtype=info.dtype.numpy_dtype) for name, info in infos.items()}
            return {name: out.tolist() for name, out in (await self.infer(arrays)).items()}
        return await self.infer(dict(request))  # type: ignore[no-any-return]

    @serve.batch
    async def infer(self, requests: List[Mapping[str, np.ndarray]]) -> List[Dict[str, np.ndarray]]:
        """Ray Serve's batch of requests as one call of the predictor; each request gets its own rows back."""
        self.batch_sizes[len(requests)] = self.batch_sizes.get(len(requests), 0) + 1
        counts = np.cumsum([len(next(iter(r.values()))) for r in requests])[:-1]
        merged = {name: np.concatenate([np.asarray(r[name]) for r in requests]) for name in self.predictor.inputs}
        out = self.predictor(merged)
        return [
            {name: part for name, part in zip(out, parts)}
            for parts in zip(*[np.split(column, counts) for column in out.values()])
        ]


def deployment(
    executable: ExecutableSource,
    *,
    max_batch_size: Optional[int] = None,
    batch_wait_timeout_s: float = 0.005,
    **options: Any,
) -> Any:
    """A Ray Serve application serving `executable` with Ray Serve's dynamic batching (``@serve.batch``): the
    requests gathered within `batch_wait_timeout_s`, up to `max_batch_size` of them (default :func:`batch_size`),
    run as one call. A request is a dict of arrays, input name -> rows (through a deployment handle), or over
    HTTP a JSON object of nested lists; it is answered with the output rows, named as :class:`BatchPredictor`
    names them. `options` go to Ray Serve's ``Deployment.options`` (``num_replicas``, ``ray_actor_options``, ...).

    .. code-block:: python

        handle = serve.run(deployment(exe, num_replicas=2))
        out = handle.remote({"x": np.ones((3, 64), np.float32)}).result()["output"]
    """
    size = batch_size(executable_of(executable)) if max_batch_size is None else max_batch_size
    # (serve.deployment made the class a Deployment; mypy keeps the class type for class decorators)
    return _Deployment.options(**options).bind(executable, size, batch_wait_timeout_s)  # type: ignore[attr-defined]
