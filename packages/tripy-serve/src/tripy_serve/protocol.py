"""The Open Inference Protocol's (KServe v2) JSON tensors and model metadata, to and from NumPy.

A request's input is ``{"name", "shape", "datatype", "data"}`` with the data flat (row-major) or nested;
a response's output has the same fields with the data flat. Outputs are named ``output_0``, ``output_1``,
... in the order the compiled function returns them. Metadata gives each dim as ``-1`` where it is dynamic
(the protocol's convention) and, as an extension, the ``min``/``opt``/``max`` shapes of the executable's
:class:`tripy.InputInfo`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

import ml_dtypes
import numpy as np

import tripy as tp

# The protocol's tensor data types and their NumPy types (BF16 is carried as JSON numbers too).
DATATYPES: Dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_), "UINT8": np.dtype(np.uint8), "INT8": np.dtype(np.int8),
    "INT16": np.dtype(np.int16), "INT32": np.dtype(np.int32), "INT64": np.dtype(np.int64),
    "FP16": np.dtype(np.float16), "BF16": np.dtype(ml_dtypes.bfloat16), "FP32": np.dtype(np.float32),
    "FP64": np.dtype(np.float64),
}
# The tripy data types with a protocol equivalent (tripy has no FP64, UINT8 or INT16; the protocol has no float8
# or int4).
TRIPY_DATATYPES: Dict[tp.dtype, str] = {
    tp.bool: "BOOL", tp.int8: "INT8", tp.int32: "INT32", tp.int64: "INT64", tp.float16: "FP16",
    tp.bfloat16: "BF16", tp.float32: "FP32",
}
# The ones a request may send: those with a tripy data type.
ACCEPTED = [name for name in DATATYPES if name in TRIPY_DATATYPES.values()]
_NAMES = {v: k for k, v in DATATYPES.items()}


class ServeError(Exception):
    """A request the server refuses: `status` is the HTTP status, the message is sent to the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def datatype(dt: tp.dtype) -> str:
    """The protocol's name for a tripy data type (e.g. ``FP32``)."""
    name = TRIPY_DATATYPES.get(dt)
    if name is None:
        raise ServeError(500, f"tripy data type {dt} has no Open Inference Protocol equivalent")
    return name


def input_datatypes(exe: tp.Executable) -> Dict[str, str]:
    """Each input's datatype in the protocol's terms (a tripy name where the protocol has none, e.g. float8)."""
    return {n: TRIPY_DATATYPES.get(info.dtype, str(info.dtype)) for n, info in exe.input_infos.items()}


def decode_inputs(body: Any, inputs: Dict[str, str]) -> List[np.ndarray]:
    """The arrays of a parsed infer request for a model with `inputs` (name -> datatype, in the executable's
    order), in that order. Raises ServeError (400), with advice in the protocol's terms."""
    names = list(inputs)
    if not isinstance(body, dict) or not isinstance(body.get("inputs"), list):
        raise ServeError(400, "The request body must be a JSON object with an 'inputs' list.")
    given: Dict[str, np.ndarray] = {}
    for i, item in enumerate(body["inputs"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ServeError(400, f"inputs[{i}] must be an object with a 'name'.")
        if item["name"] not in names:
            raise ServeError(400, f"The model has no input named '{item['name']}'. Its inputs are: {', '.join(names)}.")
        given[item["name"]] = decode_tensor(item, inputs[item["name"]])
    missing = [n for n in names if n not in given]
    if missing:
        raise ServeError(400, f"Missing input(s): {', '.join(missing)}.")
    return [given[n] for n in names]


def decode_tensor(item: Dict[str, Any], expected: str) -> np.ndarray:
    """One request tensor as an array of its declared datatype and shape, for a model input of the datatype
    `expected`. Raises ServeError (400)."""
    name, shape, dt = item["name"], item.get("shape"), item.get("datatype")
    if not (isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
        raise ServeError(400, f"Input '{name}': 'shape' must be a list of non-negative integers.")
    if dt not in ACCEPTED:
        what = "unknown datatype" if dt not in DATATYPES else "datatype"
        raise ServeError(400, f"Input '{name}': {what} {dt!r} is not one this server takes; it takes "
                              f"{', '.join(ACCEPTED)}, and this input is {expected}.")
    if dt != expected:
        raise ServeError(400, f"Input '{name}' has datatype {dt}, but the model takes it as {expected} (see the "
                              f"model's metadata). Send its data with \"datatype\": \"{expected}\".")
    if "data" not in item:
        raise ServeError(400, f"Input '{name}' has no 'data'.")
    try:
        array = np.asarray(item["data"], dtype=DATATYPES[dt])
    except (TypeError, ValueError, OverflowError) as e:
        raise ServeError(400, f"Input '{name}': its data cannot be read as {dt}: {e}.") from None
    if array.size != int(np.prod(shape)):
        raise ServeError(400, f"Input '{name}' has {array.size} element(s), but its shape {shape} needs "
                              f"{int(np.prod(shape))}.")
    return np.ascontiguousarray(array.reshape(shape))


def encode_outputs(arrays: Sequence[np.ndarray]) -> List[Dict[str, Any]]:
    """Response tensors (flat data; NumPy's ``tolist`` gives Python numbers that print exactly)."""
    outputs = []
    for i, a in enumerate(arrays):
        data = a.astype(np.float32) if a.dtype == ml_dtypes.bfloat16 else a
        outputs.append({"name": f"output_{i}", "datatype": _NAMES[a.dtype], "shape": list(a.shape),
                        "data": data.reshape(-1).tolist()})
    return outputs


def metadata(name: str, exe: tp.Executable, parameters: Dict[str, Any]) -> Dict[str, Any]:
    """The model metadata response: inputs with their dynamic dims and ranges, outputs, `parameters`."""
    inputs = []
    for input_name, info in exe.input_infos.items():
        if isinstance(info, tp.DimensionInputInfo):
            raise ServeError(500, f"Input '{input_name}' is a shape value (DimensionInputInfo), which the server "
                                  "cannot take over the Open Inference Protocol.")
        b = info.shape_bounds
        shape = [lo if lo == hi else -1 for lo, hi in zip(b.min, b.max)]
        inputs.append({"name": input_name, "datatype": datatype(info.dtype), "shape": shape,
                       "min_shape": list(b.min), "opt_shape": list(b.opt), "max_shape": list(b.max)})
    outputs = [{"name": output_name, "datatype": datatype(info.dtype), "shape": list(info.shape)}
               for output_name, info in exe.output_infos.items()]
    return {"name": name, "versions": ["1"], "platform": "tripy", "inputs": inputs, "outputs": outputs,
            "parameters": parameters}



def client_message(e: Exception) -> str:
    """A tripy error report for a client: its message and advice, without the code frames (they point into the
    server, not at the client's request)."""
    kept, skipping = [], False
    for line in str(e).splitlines():
        stripped = line.strip()
        if stripped.startswith("-->") or (stripped.endswith("was created here:") and stripped.startswith("Input")):
            skipping = True
        elif skipping and (stripped == "" or stripped[0].isdigit() or stripped.startswith("|")):
            continue
        else:
            skipping = False
        if not skipping and stripped:
            kept.append(stripped)
    return "\n".join(kept)
