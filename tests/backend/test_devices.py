"""GPU backend selection and its errors (these run without a GPU; real GPU runs are marked `gpu`)."""

import importlib.metadata

import pytest

from tripy_backend import devices
from tripy_backend.devices import check_device, compiler_name
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import TripyException


def usable_device(name):
    """What ``usable_device(name)`` does, at this layer: a device the backend can run programs on."""
    d = Device(name)
    check_device(d)
    return d


@pytest.fixture(autouse=True)
def _fresh_selection():
    devices._usable.cache_clear()
    yield
    devices._usable.cache_clear()


def test_cpu_is_always_available():
    assert compiler_name(usable_device("cpu")) == "XLA:CPU"
    with pytest.raises(TripyException, match="only one CPU device"):
        usable_device("cpu:1")


def test_gpu_without_backend_names_the_plugin_packages(monkeypatch):
    monkeypatch.delenv(devices.ENV_VAR, raising=False)
    monkeypatch.setattr(devices, "_usable", lambda name: False)
    with pytest.raises(TripyException) as info:
        usable_device("gpu")
    text = str(info.value)
    # The plugin packages themselves: 'tripy' on PyPI is an unrelated project, so no 'tripy[...]' extras.
    assert "pip install 'mlir-tensorrt-jax>=0.4'" in text and "tp.device('cpu')" in text
    assert f"pip install 'jax[cuda12]=={importlib.metadata.version('jax')}'" in text and "tripy[" not in text


def test_override_picks_backend_and_reports_what_is_missing(monkeypatch):
    monkeypatch.setenv(devices.ENV_VAR, "tensorrt")
    monkeypatch.setattr(devices, "_installed", lambda package: False)
    with pytest.raises(
        TripyException, match=r"TRIPY_GPU_BACKEND=tensorrt asks for MLIR-TensorRT.*pip install 'mlir-tensorrt-jax>=0.4'"
    ):
        usable_device("gpu")
    monkeypatch.setenv(devices.ENV_VAR, "cuda13")
    with pytest.raises(TripyException, match="not a GPU backend"):
        usable_device("gpu")


def test_selection_order_prefers_tensorrt(monkeypatch):
    monkeypatch.delenv(devices.ENV_VAR, raising=False)
    monkeypatch.setattr(devices, "_usable", lambda name: True)
    assert devices.gpu_backend() == "tensorrt"
    assert devices.platform(Device("gpu")) == "mlir_tensorrt"
    monkeypatch.setenv(devices.ENV_VAR, "xla")
    assert devices.gpu_backend() == "xla"
    assert devices.compiler_name(Device("gpu")) == "XLA:GPU"


def test_configure_tensorrt_sets_builder_flags(monkeypatch):
    monkeypatch.delenv("MLIR_TRT_FLAGS", raising=False)
    devices.configure_tensorrt(builder_optimization_level=5)
    import os

    assert os.environ["MLIR_TRT_FLAGS"] == "--tensorrt-builder-opt-level=5"
    with pytest.raises(TripyException, match=r"\[0, 5\]"):
        devices.configure_tensorrt(builder_optimization_level=9)


def test_xla_cpu_options_follow_the_level_and_the_runtime():
    from tripy_backend import _xla, cpu_plan

    classic = ("xla_cpu_use_thunk_runtime", False)
    llvm_o2 = ("xla_backend_optimization_level", 2)
    for level in range(6):
        options = cpu_plan.compile_options("cpu", level)
        if _xla.has_classic_cpu_runtime():
            assert classic in options and (llvm_o2 in options) == (level <= 3)
        else:  # (jaxlib >= 0.8: the thunk runtime only)
            assert classic not in options and (llvm_o2 in options) == (level <= 2)
    for level in range(6):  # (eager evaluation's level 2 and below: LLVM -O2 on the thunk runtime too)
        assert (llvm_o2 in cpu_plan.compile_options("cpu", level, "thunk")) == (level <= 2)
    assert cpu_plan.compile_options("cpu", 3, "thunk") == cpu_plan.compile_options("cpu", 5, "thunk")
    assert cpu_plan.compile_options("cuda", 5) == []
