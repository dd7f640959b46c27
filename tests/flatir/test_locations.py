"""MLIR locations: each op names its FlatIR tensor and op, the user's file:line:col and, for ops a
lowering introduced, why; ``locations.parse`` reads them back from the text MLIR and compilers print."""

import sys

from tripy_flatir import FlatIRFunction, FlatIRTensor, device, float32, locations, stack_info
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.tanh import TanhOp


def _program():
    here = stack_info.capture()  # this line
    line = sys._getframe().f_lineno - 1
    func = FlatIRFunction()
    x = func.add_input(FlatIRTensor("x", (3,), float32, device("cpu")))
    wide = FlatIRTensor.build((2, 3), float32, device("cpu"), reason="to broadcast 'x' for the test")
    out = FlatIRTensor("out", (2, 3), float32, device("cpu"))
    wide.stack_info = out.stack_info = here
    BroadcastOp.build([x], [wide], broadcast_dim=[1])
    TanhOp.build([wide], [out])
    func.integrate_subgraph([x], [out], [x], [out])
    func.outputs = [out]
    return func, line


def _op_locations(func):
    """The location of each op of the function's MLIR, as MLIR prints it in a diagnostic."""
    module = func.to_mlir()
    main = module.body.operations[0]
    return {op.operation.name: str(op.location) for op in main.regions[0].blocks[0].operations}


def test_each_op_carries_its_tensor_and_the_users_line():
    func, line = _program()
    parsed = locations.parse(_op_locations(func)["stablehlo.tanh"])
    assert (parsed.tensor, parsed.op, parsed.reason) == ("out", "TanhOp", None)
    assert (parsed.frame.file, parsed.frame.line) == (__file__, line)
    assert "here = stack_info.capture()" in parsed.frame.code


def test_reason_and_escapes_survive_the_text_form():
    func, line = _program()
    broadcast = _op_locations(func)["stablehlo.broadcast_in_dim"]
    parsed = locations.parse(broadcast)
    assert parsed.op == "BroadcastOp" and parsed.reason == "to broadcast 'x' for the test"
    report = locations.report("The program failed", [f"error at {broadcast}"])
    assert report.startswith(f"--> {__file__}:{line}\n")
    assert "Note: tripy introduced this operation to broadcast 'x' for the test." in report


def test_text_without_locations_gives_a_plain_report():
    assert locations.parse("no location here") is None
    assert locations.report("Failed", ["boom"]) == "Failed:\n    boom"
