"""gRPC tensors to and from NumPy: an infer request's inputs (``raw_input_contents`` or typed ``contents``) and a
response's outputs (``raw_output_contents``, as Triton sends them), checked as the HTTP JSON tensors are."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

import numpy as np

from tripy_serve.grpc_v2 import kserve_v2_pb2 as pb
from tripy_serve.protocol import DATATYPES, ServeError, check_datatype, check_shape, from_bytes, in_model_order

# The typed contents' field for each datatype tripy takes (FP16 and BF16 have none: raw contents only).
CONTENTS_FIELD = {
    "BOOL": "bool_contents",
    "INT8": "int_contents",
    "INT32": "int_contents",
    "INT64": "int64_contents",
    "FP32": "fp32_contents",
}


def parameter(value: Any) -> Any:
    """A parameter's value (an InferParameter's choice)."""
    choice = value.WhichOneof("parameter_choice")
    return getattr(value, choice) if choice else None


def decode_inputs(request: Any, inputs: Dict[str, str]) -> List[np.ndarray]:
    """The arrays of a ModelInferRequest for a model with `inputs` (name -> datatype, in order), in that order.
    Raises ServeError (400)."""
    raw = list(request.raw_input_contents)
    if raw and len(raw) != len(request.inputs):
        raise ServeError(
            400,
            f"The request has {len(raw)} raw_input_contents for {len(request.inputs)} inputs: give "
            "every input's data there (in the order of the inputs), or none.",
        )
    given: Dict[str, np.ndarray] = {}
    for i, item in enumerate(request.inputs):
        if item.name not in inputs:
            raise ServeError(400, f"The model has no input named '{item.name}'. Its inputs are: {', '.join(inputs)}.")
        if "shared_memory_region" in item.parameters:
            raise ServeError(
                400, f"Input '{item.name}': this server has no shared-memory extension; send the data in the request."
            )
        shape = check_shape(item.name, list(item.shape))
        np_dtype = check_datatype(item.name, item.datatype, inputs[item.name])
        given[item.name] = (
            from_bytes(item.name, raw[i], np_dtype, shape) if raw else _from_contents(item, np_dtype, shape)
        )
    return in_model_order(given, list(inputs))


def _from_contents(item: Any, np_dtype: np.dtype, shape: List[int]) -> np.ndarray:
    field = CONTENTS_FIELD.get(item.datatype)
    if field is None:
        raise ServeError(
            400,
            f"Input '{item.name}': {item.datatype} data has no typed contents field in the protocol; "
            "send it in raw_input_contents.",
        )
    values = getattr(item.contents, field)
    if len(values) != int(np.prod(shape)):
        raise ServeError(
            400,
            f"Input '{item.name}' has {len(values)} element(s) in contents.{field}, but its shape "
            f"{shape} needs {int(np.prod(shape))}.",
        )
    info = np.iinfo(np_dtype) if np.issubdtype(np_dtype, np.integer) else None
    array = np.asarray(values, dtype=np.int64 if info is not None else np_dtype)
    if info is not None and array.size and (array.min() < info.min or array.max() > info.max):
        raise ServeError(400, f"Input '{item.name}': a value of contents.{field} is outside {item.datatype}'s range.")
    return array.astype(np_dtype).reshape(shape)


def requested_outputs(request: Any, names: Sequence[str]) -> List[str]:
    """The outputs a request asks for, in its order (all of the model's when it names none)."""
    for o in request.outputs:
        if o.name not in names:
            raise ServeError(400, f"The model has no output named '{o.name}'. Its outputs are: {', '.join(names)}.")
        if "classification" in o.parameters:
            raise ServeError(400, f"Output '{o.name}': this server has no classification extension.")
    return [o.name for o in request.outputs] or list(names)


def encode_outputs(response: Any, outputs: Dict[str, np.ndarray], requested: Sequence[str]) -> None:
    """Add the `requested` outputs to a ModelInferResponse: name, datatype and shape, and the data in
    ``raw_output_contents`` (row-major, little-endian; NaN and +-Inf as they are)."""
    names = {v: k for k, v in DATATYPES.items()}
    for name in requested:
        a = outputs[name]
        response.outputs.append(
            pb.ModelInferResponse.InferOutputTensor(name=name, datatype=names[a.dtype], shape=list(a.shape))
        )
        response.raw_output_contents.append(np.ascontiguousarray(a).tobytes())
