"""Programs on a GPU (skipped without an NVIDIA GPU and a GPU backend)."""

import numpy as np
import pytest

import tripy as tp
from tripy_backend import devices


@pytest.mark.gpu
def test_gpu_round_trip():
    if devices.gpu_backend() is None:
        pytest.skip("no GPU backend")
    x = tp.Tensor(np.arange(4, dtype=np.float32), device=tp.device("gpu"))
    assert (tp.tanh(x) * 2).tolist() == pytest.approx(list(np.tanh(np.arange(4)) * 2), rel=1e-5)
