"""Error reports point at the user's code from every layer: argument checks at the call, shape checks
at trace time, and MLIR verifier errors mapped back through FlatIR to the user's line."""

import re
import dataclasses
import inspect

import numpy as np
import pytest

import tripy as tp
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.tanh import TanhOp
from tripy_flatir.tensor import FlatIRTensor
from tripy_frontend.tensor import Tensor
from tripy_trace.ops.base import BaseTraceOp


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        lines = f.read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "_line_of(" not in line)


@dataclasses.dataclass(repr=False, eq=False)
class _BadBroadcast(BaseTraceOp):
    """A trace op whose lowering emits a FlatIR op that the MLIR verifier rejects."""

    def infer_shapes(self) -> None:
        self.outputs[0].shape = (2, 4)

    def to_flat_ir(self, inputs, outputs) -> None:
        wrong = FlatIRTensor.build(
            (2, 4), inputs[0].dtype, inputs[0].device, reason="to widen the operand for this test"
        )
        BroadcastOp.build(inputs, [wrong], broadcast_dim=[0, 1])  # (2, 3) -> (2, 4): invalid
        TanhOp.build([wrong], outputs)


def test_verifier_error_is_mapped_to_user_code():
    x = tp.ones((2, 3))  # MARK-input
    out = Tensor._from_op(_BadBroadcast, [x])  # MARK-bad
    with pytest.raises(tp.TripyException) as info:
        out.eval()
    text = str(info.value)
    assert f"{__file__}:{_line_of('# MARK-bad')}" in text
    assert "BroadcastOp(" in text and "broadcast_dim=[0, 1]" in text
    assert "to widen the operand for this test" in text
    assert "verification failed" in text.lower()
    assert f"{__file__}:{_line_of('# MARK-input')}" in text  # where the input came from
    assert "stablehlo" not in text.split("\n")[0]  # starts at the user's code, not an MLIR dump


def test_binary_shape_error_names_both_inputs():
    a = tp.ones((3, 4))  # MARK-lhs
    b = tp.ones((3, 3))  # MARK-rhs
    with pytest.raises(tp.TripyException) as info:
        a + b  # MARK-add
    text = str(info.value)
    assert f"{__file__}:{_line_of('# MARK-add')}" in text
    assert "Input 0 was created here" in text and f":{_line_of('# MARK-lhs')}" in text
    assert "Input 1 was created here" in text and f":{_line_of('# MARK-rhs')}" in text
    assert "[3, 4]" in text and "[3, 3]" in text
    assert "    a + b  # MARK-add\n" in text and "^^^^^" in text


def test_argument_type_errors_name_expected_type_and_user_line():
    with pytest.raises(tp.TripyException) as info:
        tp.reshape([1, 2, 3], (3,))  # MARK-type
    text = str(info.value)
    assert f"{__file__}:{_line_of('# MARK-type')}" in text
    assert "argument 'input' must be tripy.Tensor, but got list" in text
    assert "tripy.reshape(input: tripy.Tensor" in text


def test_unexpected_keyword_is_reported():
    with pytest.raises(tp.TripyException, match="unexpected keyword argument 'dimm'"):
        tp.sum(tp.ones((2,)), dimm=0)


def test_dtype_constraint_violation():
    with pytest.raises(tp.TripyException, match="tripy.exp does not support dtype int32"):
        tp.exp(tp.Tensor([1, 2]))
    with pytest.raises(tp.TripyException, match="same data type"):
        tp.Tensor([1, 2]) + tp.Tensor([1.0, 2.0])
    with pytest.raises(tp.TripyException, match="without losing precision"):
        tp.Tensor([1, 2]) * 0.5


def test_dim_out_of_range():
    with pytest.raises(tp.TripyException, match=r"dim 3 is out of range for a tensor of rank 2"):
        tp.sum(tp.ones((2, 2)), dim=3)


def test_reshape_volume_mismatch():
    with pytest.raises(tp.TripyException, match=r"cannot reshape a tensor of shape \[2, 3\]"):
        tp.reshape(tp.ones((2, 3)), (4, 2))


def test_misspelled_public_name():
    with pytest.raises(AttributeError, match="Did you mean: 'tripy.softmax'?" if hasattr(tp, "softmax") else "tripy"):
        tp.sofmax


def _first_required_params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [
        p
        for p in sig.parameters.values()
        if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]


def _public_functions():
    for name in tp.__all__:
        obj = getattr(tp, name)
        if inspect.isfunction(obj) and _first_required_params(obj):
            yield pytest.param(name, id=name)


class _Unusable:
    """A value no public op accepts."""


@pytest.mark.parametrize("name", list(_public_functions()))
def test_every_public_function_rejects_a_wrong_argument_at_the_call(name):
    fn = getattr(tp, name)
    params = _first_required_params(fn)
    args = [_Unusable() for _ in params]
    with pytest.raises(tp.TripyException) as info:
        fn(*args)  # MARK-any
    assert f"{__file__}:{_line_of('# MARK-any')}" in str(info.value)


def test_incompatible_dynamic_shapes_at_call_time_map_to_user_code():
    def add(x, y):
        return x + y  # MARK-dyn-add

    dyn = tp.InputInfo(((1, 2, 8), 3), tp.float32)
    exe = tp.compile(add, args=[dyn, dyn])
    assert exe(tp.ones((2, 3)), tp.ones((2, 3))).tolist() == [[2.0] * 3] * 2
    with pytest.raises(tp.TripyException) as info:
        exe(tp.ones((2, 3)), tp.ones((4, 3)))
    text = str(info.value)
    assert f"{__file__}:{_line_of('# MARK-dyn-add')}" in text
    # (Operands with dynamic dims are broadcast to their run-time shape, as either may be 1: incompatible sizes
    # show when that broadcast is refined for the call's shapes.)
    assert "input shapes [[2, 3], [4, 3]]" in text and "not compatible" in text


def test_a_declared_range_the_program_cannot_run_names_the_dim_its_sizes_and_the_op(capfd):
    # (SAM2's memory encoder: 1..4 objects declared, its first convolution takes 1 channel)
    conv = tp.Conv(1, 4, (3, 3))
    conv.initialize_dummy_parameters()

    def encode(x):
        return conv(x)  # MARK-range-conv

    with pytest.raises(tp.TripyException) as info:
        tp.compile(encode, args=[tp.InputInfo((1, (1, 2, 4), 8, 8), tp.float32)])
    text = str(info.value)
    assert f"{__file__}:{_line_of('# MARK-range-conv')}" in text
    assert (
        "The declared range of dim 1 of input 'x' (min 1, opt 2, max 4) holds sizes this program cannot run: "
        "2..4 (it runs for 1):"
    ) in text
    assert "expects input feature dimension (2)" in text and "FlatIR operation ConvolutionOp" in text
    assert "[4, 1, 3, 3]" not in text  # (not every input's shape)
    assert capfd.readouterr().err == ""  # MLIR's diagnostics are in the report, never printed raw
    # A range whose opt runs compiles; a size it cannot run is refused at the call, with the call's shapes only
    exe = tp.compile(encode, args=[tp.InputInfo((1, (1, 1, 4), 8, 8), tp.float32)])
    with pytest.raises(tp.TripyException) as info:
        exe(tp.ones((1, 3, 8, 8)))
    assert "cannot run on inputs of shapes [[1, 3, 8, 8]]:" in str(info.value)
    assert capfd.readouterr().err == ""


def _public_classes():
    for name in tp.__all__:
        obj = getattr(tp, name)
        # (Bounds is a plain record of three tuples, as nvtripy's dataclass is; OutputInfo a record an executable
        # gives, of a dtype and a shape.)
        if (
            not inspect.isclass(obj)
            or isinstance(obj, tp.dtype)
            or name in ("TripyException", "TripyWarning", "dtype", "Module", "DimensionSize", "Bounds", "OutputInfo")
        ):
            continue
        params = [
            p
            for p in inspect.signature(obj).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
        yield pytest.param(name, len(params), id=name)


@pytest.mark.parametrize("name,count", list(_public_classes()))
def test_every_public_class_and_module_rejects_a_wrong_argument_at_the_call(name, count):
    with pytest.raises(tp.TripyException) as info:
        getattr(tp, name)(*[_Unusable() for _ in range(max(count, 1))])  # MARK-class
    assert f"{__file__}:{_line_of('# MARK-class')}" in str(info.value)


def test_plugin_without_tensorrt_names_the_plugin_package(monkeypatch):
    from tripy_frontend.ops import plugin as plugin_module

    monkeypatch.setattr(plugin_module, "gpu_backend", lambda: None)
    with pytest.raises(tp.TripyException) as info:
        tp.plugin("CustomGeluPluginDynamic", [tp.iota((2, 4))], output_info=[(2, tp.float32)])
    text = str(info.value)
    # The install hint names the PJRT plugin itself, never "tripy" (on PyPI an unrelated project).
    assert "pip install 'mlir-tensorrt-jax>=0.4'" in text and "tripy[" not in text


def test_uncaught_errors_print_as_tripy_exception():
    """Python prints an uncaught exception as ``module.qualname``: users know it as tripy.TripyException.
    It is still caught by ``except tp.TripyException`` and survives pickling (by its defining module's name,
    so only tripy-flatir is needed to unpickle it)."""
    import pickle
    import subprocess
    import sys

    code = "import tripy as tp\ntp.ones((2, 3)) + tp.ones((4, 5))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    last = [line for line in done.stderr.splitlines() if "TripyException" in line][-1]
    assert last.startswith("tripy.TripyException: ") and "tripy_flatir" not in done.stderr.splitlines()[-1]
    with pytest.raises(tp.TripyException) as info:
        tp.ones((2, 3)) + tp.ones((4, 5))
    assert type(info.value).__module__ == "tripy" and tp.TripyException.__qualname__ == "TripyException"
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is tp.TripyException and copy.args == info.value.args
    assert b"tripy_flatir.exceptions" in pickle.dumps(info.value)


def test_missing_tensor_methods_point_at_the_public_way():
    """A Tensor is not a module, and the hint is a public spelling (never a private helper such as _numpy)."""
    t = tp.ones((2,))
    with pytest.raises(AttributeError) as info:
        t.numpy()
    text = str(info.value)
    assert text.startswith("'tripy.Tensor' object has no attribute 'numpy'.") and "np.from_dlpack(t)" in text
    assert "Module" not in text and "_numpy" not in text
    np.testing.assert_array_equal(np.from_dlpack(t), np.ones((2,), np.float32))  # (what the hint says works)
    with pytest.raises(AttributeError, match=r"float\(t\), int\(t\)"):
        t.item()
    with pytest.raises(AttributeError, match=r"Did you mean: 'shape'\?"):
        t.shpe
    with pytest.raises(AttributeError) as info:
        t.nump  # close to a private name only: no suggestion
    assert "Did you mean" not in str(info.value)


@pytest.mark.parametrize(
    "apply, spelling",
    [
        (lambda t, o: t // o, "//"),
        (lambda t, o: t**o, "**"),
        (lambda t, o: t / o, "/"),
        (lambda t, o: tp.maximum(t, o), "tripy.maximum"),
        (lambda t, o: tp.minimum(o, t), "tripy.minimum"),
        (lambda t, o: t >= o, ">="),
    ],
)
def test_unsupported_operand_names_the_operator_as_written(apply, spelling):
    with pytest.raises(tp.TripyException, match=f"Unsupported operand type for {re.escape(spelling)}: 'object'"):
        apply(tp.ones((2,)), object())
