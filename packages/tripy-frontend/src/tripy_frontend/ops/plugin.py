from typing import Any, List, Optional, Sequence, Tuple

from tripy_backend.devices import gpu_backend, install_command
from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.tensor import Tensor


@public_api(document_under="configuration")
def plugin(
    name: str,
    inputs: Sequence[Tensor],
    output_info: Optional[List[Tuple[int, dtypes.dtype]]] = None,
    version: str = "1",
    namespace: str = "",
    **kwargs: Any,
) -> Any:
    """Call a TensorRT plugin (nvtripy's signature).

    A TensorRT plugin is a kernel registered with TensorRT's plugin registry; it runs only inside a TensorRT
    engine. tripy compiles with XLA (CPU, or GPU through JAX's CUDA plugin) or with MLIR-TensorRT, and does
    not lower plugin calls to any of them yet, so this raises an error that says what the call needs. Write
    the computation with tripy operations instead (e.g. :func:`tripy.gelu` for nvtripy's
    ``CustomGeluPluginDynamic`` example).

    Args:
        name: The name of the plugin.
        inputs: The inputs to the plugin.
        output_info: The rank and data type of each output.
        version: The version of the plugin.
        namespace: The namespace of the plugin.
        **kwargs: The plugin's fields.

    .. code-block:: python

        inp = tp.iota((2, 1, 4))
        try:
            tp.plugin("CustomGeluPluginDynamic", [inp], output_info=[(inp.rank, inp.dtype)], type_id=0)
        except tp.TripyException as e:
            assert "TensorRT plugin" in str(e)
    """
    where = _stack.capture()
    backend = gpu_backend()
    if backend != "tensorrt":
        raise_error(
            f"tripy.plugin('{name}'): a TensorRT plugin runs only inside a TensorRT engine, and this "
            f"machine has {'no TensorRT GPU backend' if backend is None else 'XLA:GPU, not MLIR-TensorRT'}.",
            where,
            [
                f"It needs an NVIDIA GPU with MLIR-TensorRT: {install_command('tensorrt')} (CUDA 13, "
                "TensorRT 10). Or write the computation with tripy operations, which run everywhere."
            ],
        )
    raise_error(
        f"tripy.plugin('{name}'): calling TensorRT plugins is not supported by tripy yet, even with the "
        "MLIR-TensorRT backend.",
        where,
        ["Write the computation with tripy operations."],
    )
