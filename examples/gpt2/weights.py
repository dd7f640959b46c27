"""Reading GPT-2 checkpoints: ``.safetensors`` (Hugging Face's format) and ``.npz``, with progress output.

    state = load_checkpoint("model.safetensors", config)   # names -> NumPy arrays in model.GPT's layout
    model.load_state_dict(state)

``.safetensors`` needs the ``safetensors`` package (``pip install safetensors``; the tests install it
with the dev group). Tensors are read one at a time, converted to the model's dtype and, where Hugging
Face's layout differs from ``model.GPT``'s (``Conv1D`` weights stored ``[in, out]``, no ``transformer.``
prefix, attention-mask buffers, a tied LM head left out), converted by ``model.convert_state_dict``.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Iterator, Optional, Tuple

import numpy as np

from model import GPTConfig, convert_state_dict

Progress = Callable[[str], None]


def _print_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _read_safetensors(path: str) -> Tuple[int, Iterator[Tuple[str, np.ndarray]]]:
    try:
        from safetensors import safe_open
    except ImportError:
        raise ImportError(f"Reading {path} needs the safetensors package: pip install safetensors") from None
    handle = safe_open(path, framework="np")
    names = list(handle.keys())
    return len(names), ((name, handle.get_tensor(name)) for name in names)


def _read_npz(path: str) -> Tuple[int, Iterator[Tuple[str, np.ndarray]]]:
    archive = np.load(path)
    names = list(archive.files)
    return len(names), ((name, archive[name]) for name in names)


READERS = {".safetensors": _read_safetensors, ".npz": _read_npz}


def read_tensors(path: str, dtype: np.dtype, progress: Optional[Progress] = _print_progress) -> Dict[str, np.ndarray]:
    """All tensors of a ``.safetensors`` or ``.npz`` file as ``dtype`` arrays, reporting progress about
    every tenth of the tensors (``progress=None``: silently)."""
    reader = READERS.get(os.path.splitext(path)[1])
    if reader is None:
        raise ValueError(f"{path}: unknown checkpoint format; expected a file ending in one of {sorted(READERS)}")
    count, tensors = reader(path)
    state: Dict[str, np.ndarray] = {}
    size = 0
    step = max(1, count // 10)
    for i, (name, value) in enumerate(tensors, 1):
        state[name] = np.ascontiguousarray(value, dtype=dtype)
        size += state[name].nbytes
        if progress is not None and (i % step == 0 or i == count):
            progress(f"reading {os.path.basename(path)}: {i}/{count} tensors, {size / 1e6:.0f} MB")
    return state


def load_checkpoint(
    path: str, config: GPTConfig, progress: Optional[Progress] = _print_progress
) -> Dict[str, np.ndarray]:
    """A GPT-2 checkpoint (Hugging Face ``GPT2LMHeadModel`` / ``GPT2Model`` or nanoGPT layout, in a
    ``.safetensors`` or ``.npz`` file) as a state dict for ``model.GPT(config)``."""
    return convert_state_dict(read_tensors(path, config.dtype.numpy_dtype, progress), config)
