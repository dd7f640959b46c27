"""``from_torch``: a ``torch.export`` program becomes an :class:`~tripy_importers.module.ImportedModule`.

The program is decomposed to the core ATen opset (``run_decompositions``), except for the few composite operators
that tripy runs better whole (:data:`~tripy_importers.torch.ops.registry.KEEP`). Each FX node becomes one step that
calls tripy's ops; the node's recorded result (``node.meta["val"]``) gives the dtype each step's result is cast to,
so PyTorch's type promotion holds without tripy guessing it.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tripy_flatir import dtypes
from tripy_flatir.logging import logger
from tripy_flatir.stack_info import SourceFrame, StackInfo
from tripy_frontend.compiler.input_info import InputInfo
from tripy_frontend.compiler.named_dimension import NamedDimension
from tripy_frontend.shared_data import shared_tensor
from tripy_frontend.tensor import Tensor
from tripy_importers import report
from tripy_importers.module import ImportedModule, Ref, Step, state_ref
from tripy_importers.torch.ops import registry

# The range a dynamic dim declared without an upper bound (torch.export's `Dim("b")`) gets, and its floor.
DEFAULT_MAX = 4096

_NO_OP = {
    "aten._assert_tensor_metadata.default",
    "aten._assert_scalar.default",
    "aten.sym_constrain_range_for_size.default",
    "aten._assert_async.msg",
    "aten.sym_constrain_range.default",
}


def _dtype(torch: Any, torch_dtype: Any) -> dtypes.dtype:
    table = {
        torch.float32: dtypes.float32,
        torch.float16: dtypes.float16,
        torch.bfloat16: dtypes.bfloat16,
        torch.int32: dtypes.int32,
        torch.int64: dtypes.int64,
        torch.int8: dtypes.int8,
        torch.bool: dtypes.bool,
        # tripy has no float64: PyTorch's (rare in models: constants, masks) computes in float32.
        torch.float64: dtypes.float32,
    }
    found = table.get(torch_dtype)
    if found is None:
        raise ValueError(f"dtype {torch_dtype}")
    return found


def op_name(target: Any) -> str:
    """``aten.add.Tensor`` for an ATen overload, ``operator.mul`` for Python's operators on sizes."""
    if getattr(target, "__module__", None) in ("_operator", "operator"):
        return f"operator.{target.__name__}"
    return str(target)


_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')


def _frame(node: Any, library: str) -> Optional[SourceFrame]:
    """The user's source line that made `node`: the innermost frame torch.export recorded outside PyTorch itself
    (`library`: its folder; ``nn.Linear``'s ``F.linear`` counts at the model's line that called the layer), else
    the innermost one; None where it recorded none."""
    lines = [line.strip() for line in (node.meta.get("stack_trace") or "").strip().splitlines()]
    frames = []
    for i, line in enumerate(lines):
        frame = _FRAME.match(line)
        if frame:
            code = lines[i + 1] if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]) else ""
            frames.append(SourceFrame(frame["path"], int(frame["line"]), frame["fn"], code, None))
    own = [f for f in frames if not os.path.abspath(f.file).startswith(library)]
    chosen = own or frames
    return chosen[-1] if chosen else None


def _where(frame: Optional[SourceFrame], node: Any) -> str:
    """`frame` (``_frame``) as error reports name it, or the node's name."""
    if frame is None:
        return f"node '{node.name}'"
    return f"{frame.file}:{frame.line} in {frame.function}(): {frame.code}".rstrip(": ")


class _Converter:
    """Turns one decomposed ExportedProgram's graph into steps, collecting unsupported operators on the way."""

    def __init__(self, torch: Any, program: Any) -> None:
        self.torch = torch
        self.program = program
        self.refs: Dict[str, Any] = {}
        self.steps: List[Step] = []
        self.missing: List[Tuple[str, str]] = []
        self.library = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep

    def value(self, arg: Any) -> Any:
        """An FX argument as a step argument: nodes become references, torch types plain Python values."""
        torch = self.torch
        if isinstance(arg, torch.fx.Node):
            return self.refs[arg.name]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.value(a) for a in arg)
        if isinstance(arg, dict):
            return {k: self.value(v) for k, v in arg.items()}
        if isinstance(arg, torch.dtype):
            return _dtype(torch, arg)
        if isinstance(arg, (torch.device, torch.layout, torch.memory_format)):
            return None
        return arg

    def result_dtypes(self, node: Any) -> Optional[Tuple[Optional[dtypes.dtype], ...]]:
        val = node.meta.get("val")
        vals = val if isinstance(val, (list, tuple)) else [val]
        found = tuple(_dtype(self.torch, v.dtype) if isinstance(v, self.torch.Tensor) else None for v in vals)
        return found if any(d is not None for d in found) else None

    def convert(self, node: Any) -> None:
        name = op_name(node.target)
        if name in _NO_OP:
            self.refs[node.name] = None
            return
        op = registry.OPS.get(name)
        frame = _frame(node, self.library)
        if op is None:
            self.missing.append((name, _where(frame, node)))
            self.refs[node.name] = Ref(node.name)
            return
        try:
            args, kwargs = self.value(_open_slice_end(self.torch, node)), self.value(dict(node.kwargs))
            result_dtypes = self.result_dtypes(node)
        except ValueError as e:
            self.missing.append((f"{name} with {e}", _where(frame, node)))
            self.refs[node.name] = Ref(node.name)
            return
        fn = op.fn
        if op.promote is not None:
            fn = registry.promoting(fn, op.promote, self.operand_dtype(node, op.promote))
        location = StackInfo.at(frame) if frame is not None else None
        self.steps.append(Step(node.name, name, fn, args, kwargs, result_dtypes, _where(frame, node), location))
        self.refs[node.name] = Ref(node.name)

    def operand_dtype(self, node: Any, positions: Sequence[int]) -> Optional[dtypes.dtype]:
        """The dtype PyTorch computes `node` in: `torch.result_type` of its operands (a dimensioned tensor outranks
        a 0-d one, which outranks a Python number of the same kind)."""
        torch = self.torch
        operands = []
        for i in positions:
            arg = node.args[i] if i < len(node.args) else None
            val = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else arg
            if isinstance(val, torch.Tensor):
                operands.append(torch.empty((0,) if val.dim() else (), dtype=val.dtype))
            elif isinstance(val, (bool, int, float)):
                operands.append(val)
        if not any(isinstance(v, torch.Tensor) for v in operands):
            return None
        if len(operands) == 1:
            return _dtype(torch, operands[0].dtype)
        return _dtype(torch, torch.result_type(*operands[:2]))


def _open_slice_end(torch: Any, node: Any) -> Tuple[Any, ...]:
    """A slice's arguments, its end made open (None) where it is the sliced dim's whole size, which PyTorch only knew
    symbolically (``diff`` slices ``[1 : s + 1]`` of a dim of size ``s + 1``): an open end is a slice XLA can bound,
    a computed one is not."""
    args = tuple(node.args)
    if str(node.target) != "aten.slice.Tensor" or len(args) < 4 or not isinstance(args[3], torch.fx.Node):
        return args
    source = args[0].meta.get("val")
    end = args[3].meta.get("val")
    dim = args[1] if len(args) > 1 else 0
    if isinstance(source, torch.Tensor) and isinstance(end, torch.SymInt):
        size = source.shape[dim]
        if isinstance(size, torch.SymInt) and size.node.expr == end.node.expr:
            return args[:3] + (None,) + args[4:]
    return args


def _state(torch: Any, program: Any) -> Tuple[Dict[str, Tensor], Dict[str, str], List[str]]:
    """The program's parameters, buffers and constants as tripy tensors (shared through DLPack where the dtype
    allows), the placeholder name of each, and the user inputs' placeholder names in order."""
    state: Dict[str, Tensor] = {}
    placeholders: Dict[str, str] = {}
    user_inputs: List[str] = []
    kinds = torch.export.graph_signature.InputKind
    for spec in program.graph_signature.input_specs:
        if spec.kind == kinds.USER_INPUT:
            user_inputs.append(spec.arg.name)
        elif spec.kind in (kinds.PARAMETER, kinds.BUFFER, kinds.CONSTANT_TENSOR):
            source = program.state_dict if spec.target in program.state_dict else program.constants
            state[spec.target] = to_tripy(torch, source[spec.target])
            placeholders[spec.arg.name] = spec.target
        else:
            raise NotImplementedError(f"tripy cannot import a program input of kind {spec.kind.name}")
    return state, placeholders, user_inputs


def to_tripy(torch: Any, value: Any) -> Tensor:
    """A torch tensor as a tp.Tensor: through DLPack without a copy where tripy has the dtype, else converted."""
    value = value.detach()
    if value.dtype == torch.float64:
        value = value.to(torch.float32)
    if value.dtype == torch.uint8:
        value = value.to(torch.int32)
    if not value.is_contiguous():
        value = value.contiguous()
    return shared_tensor(value)


def _input_infos(
    torch: Any,
    program: Any,
    names: List[str],
    example_sizes: Optional[List[Sequence[int]]],
    dim_names: Dict[Tuple[int, int], str],
) -> List[InputInfo]:
    """One InputInfo per user input: each symbol of the export a tp.NamedDimension with its declared bounds, named
    as the user named its torch.export.Dim where known (`dim_names`: (input, dim) -> name), else `input.dim`."""
    nodes = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    named: Dict[str, NamedDimension] = {}
    infos = []
    for i, name in enumerate(names):
        val = nodes[name].meta["val"]
        shape: List[Any] = []
        for d, size in enumerate(val.shape):
            if isinstance(size, int):
                shape.append(size)
                continue
            symbol = size.node.expr
            key = str(symbol)
            if key not in named:
                hint = example_sizes[i][d] if example_sizes else size.node.hint
                named[key] = _named_dim(program, symbol, dim_names.get((i, d), f"{name}.{d}"), hint)
            shape.append(named[key])
        infos.append(InputInfo(tuple(shape), _dtype(torch, val.dtype)))
    return infos


def _finite(value: Any) -> Optional[int]:
    """A range end as an int, or None where torch says it is unbounded (its int_oo)."""
    if "oo" in str(value):  # (int() of torch's int_oo fails inside sympy)
        return None
    number = int(value)
    return number if abs(number) < 2**62 else None


def _named_dim(program: Any, symbol: Any, key: str, hint: Any) -> NamedDimension:
    """The NamedDimension `key` for `symbol`: torch's declared range, else [1, DEFAULT_MAX] (said in the log)."""
    bounds = program.range_constraints.get(symbol)
    lo = _finite(bounds.lower) if bounds is not None else None
    lo = 1 if lo is None else max(lo, 1)  # (torch allows 0 where no min is given; a program needs a size)
    upper = _finite(bounds.upper) if bounds is not None else None
    hi_finite = upper is not None
    hi = upper if upper is not None else max(DEFAULT_MAX, lo)
    if not hi_finite:
        logger.info(
            f"tp.from_torch: dynamic dim '{key}' has no upper bound; it gets the range [{lo}, {hi}]. "
            "Give its torch.export.Dim a max=... to change it."
        )
    opt = int(hint) if isinstance(hint, int) or (hint is not None and str(hint).isdigit()) else lo
    return NamedDimension(key, lo, min(max(opt, lo), hi), hi)


def convert(
    torch: Any, program: Any, example_sizes: Optional[List[Sequence[int]]], dim_names: Dict[Tuple[int, int], str]
) -> ImportedModule:
    """The decomposed `program` as an ImportedModule."""
    state, placeholders, user_inputs = _state(torch, program)
    converter = _Converter(torch, program)
    for placeholder, target in placeholders.items():
        converter.refs[placeholder] = state_ref(target)
    for name in user_inputs:
        converter.refs[name] = Ref(name)
    outputs: List[Any] = []
    for node in program.graph.nodes:
        if node.op == "call_function":
            converter.convert(node)
        elif node.op == "output":
            outputs = _user_outputs(torch, program, converter.value(node.args[0]))
    if converter.missing:
        report.unsupported("PyTorch", converter.missing, len(registry.OPS))
    infos = _input_infos(torch, program, user_inputs, example_sizes, dim_names)
    return ImportedModule("PyTorch", user_inputs, infos, state, converter.steps, outputs)


def _user_outputs(torch: Any, program: Any, values: Sequence[Any]) -> List[Any]:
    kinds = torch.export.graph_signature.OutputKind
    specs = program.graph_signature.output_specs
    return [v for v, spec in zip(values, specs) if spec.kind == kinds.USER_OUTPUT]
