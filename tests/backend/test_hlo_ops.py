"""Reading XLA's optimized HLO back (tripy_backend.hlo_ops): which FlatIR ops and user line each instruction the
profiler names computes, and its FLOPs by XLA's cost analysis."""

from tripy_backend import _xla, disk_cache, pipeline
from tripy_backend.hlo_ops import HloProgram, source_lines
from tripy_flatir import locations

# As jaxlib 0.10 prints it: the user's lines in stack-frame tables; a fusion's metadata is its root op's.
HLO = """HloModule main, is_scheduled=true, entry_computation_layout={(f32[8,8]{1,0}, f32[8,8]{1,0})->f32[8,8]{1,0}}

FileNames
1 "/home/me/model.py"

%fused_computation (param_0: f32[8,8], param_1: f32[8,8]) -> f32[8,8] {
  %param_0 = f32[8,8]{1,0} parameter(0)
  %param_1 = f32[8,8]{1,0} parameter(1)
  %t2___DotOp.0 = f32[8,8]{1,0} dot(%param_0, %param_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="t2 = DotOp" stack_frame_id=1}
  ROOT %t5___AddOp.0 = f32[8,8]{1,0} add(%t2___DotOp.0, %param_0), metadata={op_name="t5 = AddOp" stack_frame_id=2}
}

ENTRY %main.1 (Arg_0.1: f32[8,8], Arg_1.1: f32[8,8]) -> f32[8,8] {
  %Arg_0.1 = f32[8,8]{1,0} parameter(0)
  %Arg_1.1 = f32[8,8]{1,0} parameter(1)
  %dot_add_fusion = f32[8,8]{1,0} fusion(%Arg_0.1, %Arg_1.1), kind=kOutput, calls=%fused_computation, metadata={op_name="t5 = AddOp" stack_frame_id=2}
  ROOT %t6___TanhOp.1 = f32[8,8]{1,0} tanh(%dot_add_fusion), metadata={op_name="t6 = TanhOp" source_file="/home/me/model.py" source_line=9}
}
"""

SOURCES = {
    name: locations.parse(f'loc("{name}"("/home/me/model.py":{line}:5 to :20))')
    for name, line in (("t2 = DotOp", 4), ("t5 = AddOp", 7))
}


def test_a_fusion_computes_its_ops_and_sits_at_its_product():
    program = HloProgram(HLO, SOURCES)
    fusion = program.ops["dot_add_fusion"]
    assert fusion.computes == ("t5 = AddOp", "t2 = DotOp")
    assert fusion.tripy_ops == ("AddOp", "DotOp") and fusion.main == "t2 = DotOp"
    assert (fusion.where.file, fusion.where.line) == ("/home/me/model.py", 4)  # (the product's line, not the add's)
    assert fusion.operands == ["Arg_0.1", "Arg_1.1"] and fusion.opcode == "fusion"
    assert program.flops("dot_add_fusion") is None  # (no compiler given: no cost analysis)


def test_xla_own_source_metadata_places_an_op_the_module_does_not_name():
    tanh = HloProgram(HLO, SOURCES).ops["t6___TanhOp.1"]
    assert tanh.computes == ("t6 = TanhOp",)
    assert (tanh.where.file, tanh.where.line) == ("/home/me/model.py", 9)


def test_a_compiled_program_is_located_through_its_stablehlo():
    module = b"""func.func @main(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>) -> tensor<32x8xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<32x16xf32>, tensor<16x8xf32>) -> tensor<32x8xf32> loc(#dot)
  %1 = stablehlo.tanh %0 : tensor<32x8xf32> loc(#tanh)
  return %1 : tensor<32x8xf32>
}
#dot = loc("t1 = DotOp"("/home/me/model.py":3:9 to :14))
#tanh = loc("t2 = TanhOp"("/home/me/model.py":4:9 to :20))
"""
    assert set(source_lines(module)) == {"t1 = DotOp", "t2 = TanhOp"}
    executable, _ = disk_cache.compile(*pipeline.for_xla(_xla.refine_shapes(module), "cpu", 3), "cpu", 0)
    program = HloProgram.of(executable, module)
    located = {op.name: op.where.line for op in program.ops.values() if op.where is not None}
    product = [name for name, op in program.ops.items() if "t1 = DotOp" in op.computes and op.opcode != "parameter"]
    assert product and all(located[name] == 3 for name in product)
    flops = [program.flops(name) for name in product if program.flops(name) is not None]
    if not _xla.has_classic_cpu_runtime():  # (jaxlib 0.6 cannot read HLO text back for the cost analysis)
        assert max(flops) >= 2 * 32 * 16 * 8
