"""``from_onnx``: an ONNX graph becomes an :class:`~tripy_importers.module.ImportedModule`.

Initializers become the module's state (``tp.Tensor`` s named by the initializer names), except small integer ones
of rank 0 or 1 (at most :data:`SHAPE_CONSTANT_SIZE` elements): those are shape constants (``[-1, 32]`` for a
Reshape, an axis for a Gather) and stay Python ints, so shape arithmetic folds where it is static. Constant nodes
follow the same rule. Each node becomes one step; ONNX shape inference gives the dtype each step's result is cast
to, so ONNX's types hold without tripy guessing them.
"""

from __future__ import annotations

import linecache
import operator
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import tripy_frontend.ops.reshape as _reshape
from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.logging import logger
from tripy_flatir.stack_info import SourceFrame, StackInfo
from tripy_frontend.compiler.input_info import InputInfo
from tripy_frontend.compiler.named_dimension import NamedDimension
from tripy_frontend.tensor import Tensor
from tripy_importers import report
from tripy_importers.module import ImportedModule, Ref, Step, state_ref
from tripy_importers.onnx.ops import OPS, Dims
from tripy_importers.onnx.ops.registry import onnx_dtype

# The (min, opt, max) of a symbolic dim that `dims` does not declare.
DEFAULT_RANGE = (1, 64, 4096)
# The most elements an integer initializer or Constant may have to be kept as a shape constant (not state).
SHAPE_CONSTANT_SIZE = 64
# The oldest default-domain opset tripy imports.
MIN_OPSET = 17


def _is_shape_constant(array: np.ndarray) -> bool:
    return array.dtype.kind in "iu" and array.ndim <= 1 and array.size <= SHAPE_CONSTANT_SIZE


def _constant(array: np.ndarray) -> Dims:
    values = tuple(int(v) for v in array.reshape(-1))
    return Dims(values, array.ndim == 0, dtypes.int32 if array.dtype == np.int32 else dtypes.int64)


def _to_tripy(array: np.ndarray) -> Tensor:
    """An initializer's data as a tp.Tensor (float64 computes in float32, uint8 in int32, as tripy has neither)."""
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    elif array.dtype in (np.uint8, np.uint16, np.int16):
        array = array.astype(np.int32)
    return Tensor(np.ascontiguousarray(array))


def _attribute(onnx: Any, attr: Any) -> Any:
    value = onnx.helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def _constant_value(onnx: Any, node: Any) -> np.ndarray:
    """A Constant node's value, whichever attribute holds it."""
    attr = node.attribute[0]
    value = _attribute(onnx, attr)
    if attr.name in ("value_float", "value_floats"):
        return np.array(value, np.float32)
    if attr.name in ("value_int", "value_ints"):
        return np.array(value, np.int64)
    if not isinstance(value, np.ndarray):
        raise ValueError(f"a Constant's {attr.name}")
    return value


def _first(result: Any) -> Any:
    return result[0] if isinstance(result, tuple) else result


def _guarded(fn: Callable[..., Any], op: str, where: str, outputs: int) -> Callable[..., Any]:
    """`fn` with a case tripy cannot run (a ValueError from the op) reported as a tripy error naming the node."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            result = fn(*args, **kwargs)
        except ValueError as e:
            raise_error(f"tripy cannot import the ONNX {op} at {where} as used there: {e}.", _stack.capture())
        return _first(result) if outputs == 1 else result

    return call


def node_lines(graph: Any) -> str:
    """The name that stands for the source of `graph` in locations (``<onnx NAME>``), its line k describing its
    node k (``node '/fc1/MatMul' (MatMul)``): put in Python's ``linecache``, so that whatever reads a location
    back (error reports, profiles, graphs) shows the node, as it shows a line of Python."""
    file = f"<onnx {graph.name or 'graph'}>"
    lines = [f"{_node_label(node)} ({node.op_type})\n" for node in graph.node]
    linecache.cache[file] = (sum(map(len, lines)), None, lines, file)  # (no file behind it: kept, never reread)
    return file


def _node_label(node: Any) -> str:
    return f"node '{node.name}'" if node.name else f"the node making '{node.output[0]}'"


class _Converter:
    """Turns one ONNX graph into steps, collecting unsupported operators on the way."""

    def __init__(self, onnx: Any, graph: Any) -> None:
        self.onnx = onnx
        self.file = node_lines(graph)
        self.line = 0  # (the line in `file` of the node being converted: its position in the graph, from 1)
        self.refs: Dict[str, Any] = {"": None}
        self.state: Dict[str, Tensor] = {}
        self.steps: List[Step] = []
        self.missing: List[Tuple[str, str]] = []
        self.types: Dict[str, int] = {}
        self.shapes: Dict[str, List[Optional[int]]] = {}
        for info in list(graph.input) + list(graph.value_info) + list(graph.output):
            if info.type.HasField("tensor_type"):
                self.types[info.name] = info.type.tensor_type.elem_type
                dims = info.type.tensor_type.shape.dim
                self.shapes[info.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
        self.merges: Dict[str, int] = {}

    def add_value(self, name: str, array: np.ndarray) -> None:
        """An initializer or a Constant node's value: a shape constant, or a state tensor."""
        if _is_shape_constant(array):
            self.refs[name] = _constant(array)
        else:
            self.state[name] = _to_tripy(array)
            self.refs[name] = state_ref(name)

    def result_dtypes(self, names: Sequence[str]) -> Optional[Tuple[Optional[dtypes.dtype], ...]]:
        found = tuple(onnx_dtype(self.types[n]) if self.types.get(n) else None for n in names)
        return found if any(d is not None for d in found) else None

    def location(self) -> StackInfo:
        """The node being converted as the user's frame of its steps' ops: its line in ``node_lines``."""
        code = linecache.getline(self.file, self.line).rstrip("\n")
        return StackInfo.at(SourceFrame(self.file, self.line, "", code, None))

    def convert(self, node: Any) -> None:
        where = _node_label(node)
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        if node.name in self.merges:
            self.refs[node.output[0]] = Ref(node.output[0])
            self.steps.append(
                Step(
                    node.output[0],
                    "Reshape",
                    _merge_trailing,
                    (self.refs[node.input[0]],),
                    {"count": self.merges[node.name]},
                    None,
                    f"node '{node.name}'",
                    self.location(),
                )
            )
            return
        try:
            if op == "Constant":
                self.add_value(node.output[0], _constant_value(self.onnx, node))
                return
            fn = OPS.get(op)
            if fn is None:
                self.missing.append((op, where))
                return
            attrs = {a.name: _attribute(self.onnx, a) for a in node.attribute}
            outputs = [n for n in node.output]
            result_dtypes = self.result_dtypes(outputs)
        except ValueError as e:
            self.missing.append((f"{op} with {e}", where))
            return
        finally:
            for name in node.output:
                self.refs.setdefault(name, Ref(name))
        args = tuple(self.refs.get(i, Ref(i)) for i in node.input)
        call = _guarded(fn, op, where, len(outputs))
        if len(outputs) == 1:
            self.steps.append(Step(outputs[0], op, call, args, attrs, result_dtypes, where, self.location()))
            return
        whole = f"{outputs[0]}#outputs"
        self.steps.append(Step(whole, op, call, args, attrs, None, where, self.location()))
        for i, name in enumerate(outputs):
            if name:
                self.steps.append(
                    Step(
                        name,
                        op,
                        operator.getitem,
                        (Ref(whole), i),
                        {},
                        self.result_dtypes([name]),
                        where,
                        self.location(),
                    )
                )


def _merge_trailing(x: Tensor, count: int) -> Tensor:
    """`x` with its last `count` dims merged into one."""
    if count == 1:
        return x
    return _reshape.reshape(x, list(x.shape[: x.rank - count]) + [-1])


def _trailing(shape: Optional[List[Optional[int]]], size: int) -> int:
    """How many of the last dims of `shape` (static ones) multiply to `size`; 0 if none do."""
    product = 1
    for n, d in enumerate(reversed(shape or []), 1):
        if d is None:
            return 0
        product *= d
        if product == size:
            return n
    return 0


def _flattened_gemms(converter: _Converter, nodes: Sequence[Any]) -> Dict[str, int]:
    """The Reshapes to ``[-1, K]`` that only feed Gemms whose results are only reshaped again: the exporter's
    way to write a linear layer on a [batch, seq, ..., K] tensor. They become a reshape of only the last dims
    (a Gemm with transA=0 multiplies the batched tensor just as well), which keeps the dynamic dims apart: XLA
    gives a reshape that merges two run-time sizes a sort in a bounded program, which it cannot save compiled.
    Returns the number of last dims each such Reshape merges, by node name."""
    consumers: Dict[str, List[Any]] = {}
    for node in nodes:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    found = {}
    for node in nodes:
        if node.op_type != "Reshape" or not node.name or len(node.input) < 2:
            continue
        shape = converter.refs.get(node.input[1])
        if not isinstance(shape, Dims) or shape.values[:1] != (-1,) or len(shape.values) != 2:
            continue
        count = _trailing(converter.shapes.get(node.input[0]), shape.values[1])
        gemms = consumers.get(node.output[0], [])
        if (
            count
            and gemms
            and all(
                g.op_type == "Gemm"
                and g.input[0] == node.output[0]
                and not any(a.name == "transA" and a.i for a in g.attribute)
                and all(c.op_type == "Reshape" for c in consumers.get(g.output[0], [None]))
                for g in gemms
            )
        ):
            found[node.name] = count
    return found


def _symbols(inputs: Sequence[Any]) -> List[str]:
    """The symbolic dim names of the graph's inputs, in order (an unnamed one as ``<input>.<dim>``)."""
    found: List[str] = []
    for value in inputs:
        for d, dim in enumerate(value.type.tensor_type.shape.dim):
            if not dim.HasField("dim_value"):
                key = dim.dim_param or f"{value.name}.{d}"
                if key not in found:
                    found.append(key)
    return found


def _named_dims(inputs: Sequence[Any], dims: Mapping[str, Any]) -> Dict[str, NamedDimension]:
    """One tp.NamedDimension per symbol (dims sharing a symbol stay equal), with the range `dims` declares or the
    default one (logged)."""
    symbols = _symbols(inputs)
    unknown = [name for name in dims if name not in symbols]
    if unknown:
        raise_error(
            f"tp.from_onnx: dims names {unknown}, which the model's inputs do not use.",
            _stack.capture(),
            [f"The model's symbolic dims are: {symbols or 'none (every input is static)'}."],
        )
    named = {}
    for key in symbols:
        bounds = dims.get(key)
        if bounds is None:
            bounds = DEFAULT_RANGE
            logger.info(
                f"tp.from_onnx: symbolic dim '{key}' has no range in `dims`; it gets (min, opt, max) = "
                f"{bounds}. Pass dims={{'{key}': (min, opt, max)}} to change it."
            )
        elif not isinstance(bounds, (tuple, list)) or len(bounds) != 3:
            raise_error(f"tp.from_onnx: dims['{key}'] must be (min, opt, max), but got {bounds!r}.", _stack.capture())
        named[key] = NamedDimension(key, *bounds)
    return named


def _input_infos(inputs: Sequence[Any], dims: Mapping[str, Any]) -> List[InputInfo]:
    named = _named_dims(inputs, dims)
    infos = []
    for value in inputs:
        shape: List[Any] = []
        for d, dim in enumerate(value.type.tensor_type.shape.dim):
            shape.append(dim.dim_value if dim.HasField("dim_value") else named[dim.dim_param or f"{value.name}.{d}"])
        infos.append(InputInfo(tuple(shape), onnx_dtype(value.type.tensor_type.elem_type)))
    return infos


def convert(onnx: Any, model: Any, dims: Mapping[str, Any]) -> ImportedModule:
    """The ONNX `model` (opset >= 17) as an ImportedModule."""
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    if opset < MIN_OPSET:
        raise_error(
            f"tp.from_onnx imports ONNX opset {MIN_OPSET} and newer, but this model uses opset {opset}.",
            _stack.capture(),
            ["Convert it first: onnx.version_converter.convert_version(model, 17)."],
        )
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception as e:  # (an operator it does not know: the dtypes the model records are used as they are)
        logger.info(
            f"tp.from_onnx: ONNX shape inference failed ({str(e).strip().splitlines()[0]}); using the "
            "types the model records."
        )
    graph = model.graph
    converter = _Converter(onnx, graph)
    for init in graph.initializer:
        converter.add_value(init.name, onnx.numpy_helper.to_array(init))
    inputs = [v for v in graph.input if v.name not in converter.refs]
    for value in inputs:
        converter.refs[value.name] = Ref(value.name)
    converter.merges = _flattened_gemms(converter, graph.node)
    for line, node in enumerate(graph.node, 1):
        converter.line = line
        converter.convert(node)
    if converter.missing:
        report.unsupported("ONNX", converter.missing, len(OPS))
    infos = _input_infos(inputs, dims)
    outputs = [converter.refs[v.name] for v in graph.output]
    return ImportedModule("ONNX", [v.name for v in inputs], infos, converter.state, converter.steps, outputs)
