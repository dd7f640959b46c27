from typing import Any

import numpy as np

from tripy_flatir import stack_info as _stack
from tripy_flatir.device import device as Device
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.storage import Storage
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES
from tripy_frontend.ops.registry import TENSOR_METHOD_REGISTRY
from tripy_frontend.tensor import Tensor
from tripy_backend import memory
from tripy_frontend.device import device as PublicDevice
from tripy_frontend.ops.getitem import _depends_on_runtime_inputs


@public_api(document_under="ops_creation")
@TENSOR_METHOD_REGISTRY("copy")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def copy(input: Tensor, device: Any) -> Tensor:
    """Copy a tensor to `device` (also ``t.copy(device)``). The result is a new tensor with its own
    memory, also when `input` is already on that device.

    The copy evaluates `input`, so it cannot be used inside a function passed to :func:`tripy.compile`
    on values computed from the function's inputs.

    Args:
        input: The tensor to copy.
        device: The target device, e.g. ``tp.device("cpu")``.

    .. code-block:: python

        input = tp.Tensor([1.0, 2.0])
        out = tp.copy(input, tp.device("cpu"))
        assert out.tolist() == [1.0, 2.0] and str(out.device) == "cpu:0"
    """

    if not isinstance(input, Tensor):
        raise_error(f"tripy.copy expects a tripy.Tensor, but got {type(input).__name__}.", _stack.capture())
    if isinstance(device, str):
        raise_error(
            f"tripy.copy: device must be a tripy.device, but got the string {device!r}.",
            _stack.capture(),
            [f"Use tp.device({device!r})."],
        )
    if not isinstance(device, Device):
        raise_error(
            f"tripy.copy: device must be a tripy.device such as tp.device('cpu'), but got {type(device).__name__}.",
            _stack.capture(),
        )
    if not isinstance(device, PublicDevice):
        device = PublicDevice(str(device))  # checks that a backend can use it
    if _depends_on_runtime_inputs(input):
        raise_error(
            "tripy.copy cannot copy a tensor computed from the inputs of a function being compiled: "
            "it has no value yet.",
            _stack.capture(),
            ["Copy the inputs before calling the compiled function, or copy its outputs."],
            [input.stack_info],
        )
    info = _stack.capture()
    data = np.array(memory.to_numpy(input._buffer()), copy=True)
    op = Storage.build(
        [], info, data=memory.to_device(data, device), shape=data.shape, dtype=input.dtype, device=device
    )
    return Tensor._from_trace_tensor(op.outputs[0])
