"""Running a bucket's bounded program (see ``ranges``) on inputs of one shape signature: ``BoundedLauncher`` pads
the inputs smaller than the bucket, passes their real sizes, and gives each dynamic output as a ``Padded`` buffer of
its real shape. The program runs through the adapter's ``_xla.Launcher``, one per bucket, shared by its shapes."""

from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from tripy_backend import _xla


class BoundedLauncher:
    """Runs a bounded program on inputs of `shapes` (its bucket's shapes: `bucket_shapes`; `dynamic_dims`: the
    (input, dim) pairs whose real sizes it takes). Same interface as ``_xla.Launcher``. `out_dims`: each output's
    dynamic dims, whose real sizes the program returns as its last output (learned on the first run: the same on
    every run). A program whose output dims end with ``[-1]`` also says whether the input shapes fit its shape
    arithmetic (the sizes vector's last element): if not, `on_invalid(shapes)` is raised."""

    # True for the cover's launcher standing in while the shapes' own bucket compiles (``RangeProgram.launcher``):
    # callers do not keep it.
    provisional = False

    def __init__(
        self,
        bucket: "_xla.Launcher",
        bucket_shapes: List[Tuple[int, ...]],
        shapes: Tuple[Tuple[int, ...], ...],
        dynamic_dims: List[Tuple[int, int]],
        out_dims: List[List[int]],
        platform: str,
        index: int,
        on_invalid: Optional[Callable[[Sequence[Tuple[int, ...]]], Exception]] = None,
    ) -> None:
        self._bucket = bucket
        self.error_types = bucket.error_types
        self.on_error = bucket.on_error
        self._platform, self._index = platform, index
        # (input, bucket shape, where its data goes in the padded buffer) for each input to pad
        self._pad = [
            (i, bucket_shapes[i], tuple(slice(0, n) for n in shapes[i]))
            for i in range(len(shapes))
            if tuple(shapes[i]) != bucket_shapes[i]
        ]
        self._sizes = [_xla.to_device(np.int32(shapes[i][d]), platform, index) for i, d in dynamic_dims]
        self._checked = bool(out_dims) and out_dims[-1] == [-1]
        self._out_dims = out_dims[:-1] if self._checked else out_dims
        self._has_sizes = any(self._out_dims) or self._checked
        self._shapes = shapes
        self._on_invalid = on_invalid
        self._out_shapes: Optional[List[Tuple[int, ...]]] = None  # the real shapes, known after the first run

    @property
    def pads(self) -> bool:
        """Whether some input is smaller than the bucket (a call pads it)."""
        return bool(self._pad)

    def _padded(self, buffers: List[Any]) -> List[Any]:
        args = list(buffers)
        for i, bucket_shape, where in self._pad:
            data = np.asarray(args[i])
            padded = np.zeros(bucket_shape, dtype=data.dtype)
            padded[where] = data
            args[i] = _upload(padded, self._platform, self._index)
        return args + self._sizes

    def _outputs(self, outputs: List[Any]) -> List[Any]:
        if self._out_shapes is None:
            self._learn_shapes(outputs)
        return [
            Padded(o, s, self._platform, self._index) if dims else o
            for o, s, dims in zip(outputs, self._out_shapes, self._out_dims)  # type: ignore[arg-type]
        ]

    def _learn_shapes(self, outputs: List[Any]) -> None:
        shapes = [tuple(o.shape) for o in outputs[: len(self._out_dims)]]
        if self._has_sizes:
            values = np.asarray(outputs[-1]).tolist()
            if self._checked and not values.pop():
                raise (
                    self._on_invalid(self._shapes)
                    if self._on_invalid is not None
                    else ValueError(f"The program is not valid for input shapes {[list(s) for s in self._shapes]}")
                )
            sizes = iter(values)
            shapes = [
                tuple(next(sizes) if d in dims else s for d, s in enumerate(shape))
                for shape, dims in zip(shapes, self._out_dims)
            ]
        self._out_shapes = shapes

    def __call__(self, buffers: List[Any]) -> List[Any]:
        return self._outputs(self._bucket(self._padded(buffers)))

    def steps(self) -> Tuple[Callable[[List[Any]], Any], Callable[[Any], List[Any]]]:
        """As ``_xla.Launcher.steps`` (after the first run)."""
        execute, finish = self._bucket.steps()
        return (lambda buffers: execute(self._padded(buffers))), (lambda results: self._outputs(finish(results)))


class Padded:
    """A dynamic output of a bounded program: XLA writes it compactly at the start of its bucket-sized
    `buffer`; `shape` is its real shape. Made a buffer of its own (a copy) only when a consumer needs one;
    reading it into NumPy needs no copy. (A dynamic output's buffer keeps a dynamic shape even when it is full,
    which DLPack cannot export: a consumer always gets the copy.)"""

    __slots__ = ("buffer", "shape", "_platform", "_index")

    def __init__(self, buffer: Any, shape: Tuple[int, ...], platform_name: str, index: int) -> None:
        self.buffer = buffer
        self.shape = shape
        self._platform, self._index = platform_name, index

    def to_numpy(self) -> np.ndarray:
        return np.asarray(self.buffer).reshape(-1)[: math.prod(self.shape)].reshape(self.shape)

    def materialize(self) -> Any:
        """A buffer of its own, of the real shape (a copy)."""
        return _upload(self.to_numpy(), self._platform, self._index)


def _upload(array: np.ndarray, platform_name: str, index: int) -> Any:
    """A buffer with `array`'s data: small arrays are copied (measured ~10 us faster per buffer on XLA:CPU
    than sharing their memory), large ones shared."""
    if array.nbytes <= 1 << 18:
        return _xla.to_device(array, platform_name, index)
    return _xla.adopt(array, platform_name, index)
