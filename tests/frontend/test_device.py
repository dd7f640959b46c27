"""``tp.device``: a device the backend can run programs on."""

import pytest

import tripy as tp


def test_cpu_device_names_its_compiler():
    assert repr(tp.device("cpu")) == "device(kind=cpu, index=0, compiler=XLA:CPU)"
    with pytest.raises(tp.TripyException, match="only one CPU device"):
        tp.device("cpu:1")
