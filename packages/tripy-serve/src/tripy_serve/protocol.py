"""The Open Inference Protocol's (KServe v2) tensors and model metadata, to and from NumPy.

A request's input is ``{"name", "shape", "datatype", "data"}`` with the data flat (row-major) or nested, or,
with the binary tensor data extension, ``"parameters": {"binary_data_size": n}`` and its ``n`` bytes after the
JSON; a response's output has the same fields with the data flat, or binary when the request asks for it. Outputs are named ``output_0``, ``output_1``,
... in the order the compiled function returns them. Metadata gives each dim as ``-1`` where it is dynamic
(the protocol's convention) and, as an extension, the ``min``/``opt``/``max`` shapes of the executable's
:class:`tripy.InputInfo`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import ml_dtypes
import numpy as np

import tripy as tp

# The protocol's tensor data types and their NumPy types (BF16 is carried as JSON numbers too).
DATATYPES: Dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_),
    "UINT8": np.dtype(np.uint8),
    "INT8": np.dtype(np.int8),
    "INT16": np.dtype(np.int16),
    "INT32": np.dtype(np.int32),
    "INT64": np.dtype(np.int64),
    "FP16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "FP32": np.dtype(np.float32),
    "FP64": np.dtype(np.float64),
}
# The tripy data types with a protocol equivalent (tripy has no FP64, UINT8 or INT16; the protocol has no float8
# or int4).
TRIPY_DATATYPES: Dict[tp.dtype, str] = {
    tp.bool: "BOOL",
    tp.int8: "INT8",
    tp.int32: "INT32",
    tp.int64: "INT64",
    tp.float16: "FP16",
    tp.bfloat16: "BF16",
    tp.float32: "FP32",
}
# The ones a request may send: those with a tripy data type.
ACCEPTED = [name for name in DATATYPES if name in TRIPY_DATATYPES.values()]
_NAMES = {v: k for k, v in DATATYPES.items()}


# The protocol's extensions this server implements (server metadata).
EXTENSIONS = ["binary_tensor_data", "statistics", "model_repository"]


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


class BinaryData:
    """The binary section of a request (after its JSON header), read in order by the inputs that declare a
    ``binary_data_size``."""

    def __init__(self, data: bytes) -> None:
        self.data, self.offset = memoryview(data), 0

    def take(self, name: str, size: Any) -> memoryview:
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ServeError(400, f"Input '{name}': 'binary_data_size' must be a non-negative integer.")
        if self.offset + size > len(self.data):
            raise ServeError(
                400,
                f"Input '{name}' declares {size} bytes of binary data, but the request has only "
                f"{len(self.data) - self.offset} left (check Inference-Header-Content-Length).",
            )
        self.offset += size
        return self.data[self.offset - size : self.offset]

    def check_all_read(self) -> None:
        if self.offset != len(self.data):
            raise ServeError(
                400,
                f"The request has {len(self.data) - self.offset} bytes of binary data beyond what "
                "its inputs' 'binary_data_size' parameters declare.",
            )


def decode_inputs(body: Any, inputs: Dict[str, str], binary: bytes = b"") -> List[np.ndarray]:
    """The arrays of a parsed infer request for a model with `inputs` (name -> datatype, in the executable's
    order), in that order; `binary` is the request's binary section. Raises ServeError (400), with advice in
    the protocol's terms."""
    names = list(inputs)
    if not isinstance(body, dict) or not isinstance(body.get("inputs"), list):
        raise ServeError(400, "The request body must be a JSON object with an 'inputs' list.")
    given: Dict[str, np.ndarray] = {}
    section = BinaryData(binary)
    for i, item in enumerate(body["inputs"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ServeError(400, f"inputs[{i}] must be an object with a 'name'.")
        if item["name"] not in names:
            raise ServeError(400, f"The model has no input named '{item['name']}'. Its inputs are: {', '.join(names)}.")
        given[item["name"]] = decode_tensor(item, inputs[item["name"]], section)
    section.check_all_read()
    return in_model_order(given, names)


def in_model_order(given: Dict[str, np.ndarray], names: List[str]) -> List[np.ndarray]:
    """The arrays of `given` (name -> array) in the model's order of input `names`; a 400 if one is missing."""
    missing = [n for n in names if n not in given]
    if missing:
        raise ServeError(400, f"Missing input(s): {', '.join(missing)}.")
    return [given[n] for n in names]


def _parameters(item: Dict[str, Any], what: str) -> Dict[str, Any]:
    parameters = item.get("parameters", {})
    if not isinstance(parameters, dict):
        raise ServeError(400, f"{what}: 'parameters' must be a JSON object.")
    if "shared_memory_region" in parameters:
        raise ServeError(400, f"{what}: this server has no shared-memory extension; send the data in the request.")
    return parameters


def check_datatype(name: str, dt: Any, expected: str) -> np.dtype:
    """The NumPy type of a request tensor's `dt` for a model input of the datatype `expected`. Raises
    ServeError (400)."""
    if dt == "BYTES":
        raise ServeError(
            400,
            f"Input '{name}': datatype BYTES (strings) is not one tripy computes on; this input "
            f"takes {expected} numbers.",
        )
    if dt not in ACCEPTED:
        what = "unknown datatype" if dt not in DATATYPES else "datatype"
        raise ServeError(
            400,
            f"Input '{name}': {what} {dt!r} is not one this server takes; it takes "
            f"{', '.join(ACCEPTED)}, and this input is {expected}.",
        )
    if dt != expected:
        raise ServeError(
            400,
            f"Input '{name}' has datatype {dt}, but the model takes it as {expected} (see the "
            f'model\'s metadata). Send its data with "datatype": "{expected}".',
        )
    return DATATYPES[dt]


def check_shape(name: str, shape: Any) -> List[int]:
    if not (isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
        raise ServeError(400, f"Input '{name}': 'shape' must be a list of non-negative integers.")
    return shape


def from_bytes(name: str, raw: Any, np_dtype: np.dtype, shape: List[int]) -> np.ndarray:
    """A tensor sent as raw bytes (row-major, in the host's byte order: little-endian wherever tripy runs; BOOL one
    byte each), copied out of the request. Raises ServeError (400)."""
    count = int(np.prod(shape))
    if len(raw) != count * np_dtype.itemsize:
        raise ServeError(
            400,
            f"Input '{name}' has {len(raw)} bytes of data, but its shape {shape} and datatype "
            f"need {count * np_dtype.itemsize} ({count} x {np_dtype.itemsize} bytes).",
        )
    if np_dtype == np.bool_:
        return (np.frombuffer(raw, np.uint8) != 0).reshape(shape)
    return np.frombuffer(raw, np_dtype).reshape(shape).copy()


def decode_tensor(item: Dict[str, Any], expected: str, binary: BinaryData) -> np.ndarray:
    """One request tensor as an array of its declared datatype and shape, for a model input of the datatype
    `expected`: its JSON ``data``, or its bytes of the request's `binary` section. Raises ServeError (400)."""
    name = item["name"]
    shape = check_shape(name, item.get("shape"))
    np_dtype = check_datatype(name, item.get("datatype"), expected)
    size = _parameters(item, f"Input '{name}'").get("binary_data_size")
    if size is not None:
        if "data" in item:
            raise ServeError(400, f"Input '{name}' has both 'data' and a 'binary_data_size': send one of them.")
        return from_bytes(name, binary.take(name, size), np_dtype, shape)
    if "data" not in item:
        raise ServeError(400, f"Input '{name}' has no 'data' (nor a 'binary_data_size' parameter).")
    try:
        array = np.asarray(item["data"], dtype=np_dtype)
    except (TypeError, ValueError, OverflowError) as e:
        raise ServeError(400, f"Input '{name}': its data cannot be read as {item['datatype']}: {e}.") from None
    if array.size != int(np.prod(shape)):
        raise ServeError(
            400, f"Input '{name}' has {array.size} element(s), but its shape {shape} needs {int(np.prod(shape))}."
        )
    return np.ascontiguousarray(array.reshape(shape))


def requested_outputs(body: Dict[str, Any], names: Sequence[str]) -> List[Tuple[str, bool]]:
    """The outputs a request asks for, in its order (all of the model's when it names none), each with whether
    to send it as binary data (its ``binary_data`` parameter, else the request's ``binary_data_output``).
    Raises ServeError (400)."""
    default = _parameters(body, "The request").get("binary_data_output", False)
    if not isinstance(default, bool):
        raise ServeError(400, "The request's 'binary_data_output' parameter must be true or false.")
    asked = body.get("outputs")
    if asked is None:
        return [(n, default) for n in names]
    if not isinstance(asked, list) or not all(isinstance(o, dict) and isinstance(o.get("name"), str) for o in asked):
        raise ServeError(400, "'outputs' must be a list of objects with a 'name'.")
    chosen = []
    for o in asked:
        if o["name"] not in names:
            raise ServeError(400, f"The model has no output named '{o['name']}'. Its outputs are: {', '.join(names)}.")
        parameters = _parameters(o, f"Output '{o['name']}'")
        if "classification" in parameters:
            raise ServeError(400, f"Output '{o['name']}': this server has no classification extension.")
        binary = parameters.get("binary_data", default)
        if not isinstance(binary, bool):
            raise ServeError(400, f"Output '{o['name']}': 'binary_data' must be true or false.")
        chosen.append((o["name"], binary))
    return chosen


def encode_outputs(
    outputs: Dict[str, np.ndarray], requested: Sequence[Tuple[str, bool]]
) -> Tuple[List[Dict[str, Any]], List[bytes]]:
    """Response tensors for the `requested` outputs (name, binary?) of `outputs` (name -> array): JSON data flat
    (NumPy's ``tolist`` gives Python numbers that print exactly; NaN and +-Inf as the tokens ``NaN``,
    ``Infinity``, ``-Infinity``, as Triton writes them), or a ``binary_data_size`` and the bytes (row-major,
    little-endian) to send after the JSON, in order."""
    tensors, binaries = [], []
    for name, binary in requested:
        a = outputs[name]
        tensor: Dict[str, Any] = {"name": name, "datatype": _NAMES[a.dtype], "shape": list(a.shape)}
        if binary:
            raw = np.ascontiguousarray(a).tobytes()
            tensor["parameters"] = {"binary_data_size": len(raw)}
            binaries.append(raw)
        else:
            tensor["data"] = (a.astype(np.float32) if a.dtype == ml_dtypes.bfloat16 else a).reshape(-1).tolist()
        tensors.append(tensor)
    return tensors, binaries


def metadata(name: str, exe: tp.Executable, parameters: Dict[str, Any]) -> Dict[str, Any]:
    """The model metadata response: inputs with their dynamic dims and ranges, outputs, `parameters`."""
    inputs = []
    for input_name, info in exe.input_infos.items():
        if isinstance(info, tp.DimensionInputInfo):
            raise ServeError(
                500,
                f"Input '{input_name}' is a shape value (DimensionInputInfo), which the server "
                "cannot take over the Open Inference Protocol.",
            )
        b = info.shape_bounds
        shape = [lo if lo == hi else -1 for lo, hi in zip(b.min, b.max)]
        inputs.append(
            {
                "name": input_name,
                "datatype": datatype(info.dtype),
                "shape": shape,
                "min_shape": list(b.min),
                "opt_shape": list(b.opt),
                "max_shape": list(b.max),
            }
        )
    outputs = [
        {"name": output_name, "datatype": datatype(info.dtype), "shape": list(info.shape)}
        for output_name, info in exe.output_infos.items()
    ]
    return {
        "name": name,
        "versions": ["1"],
        "platform": "tripy",
        "inputs": inputs,
        "outputs": outputs,
        "parameters": parameters,
    }


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
