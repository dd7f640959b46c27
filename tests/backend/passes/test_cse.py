"""Pass ``cse``: repeated size arithmetic merged on a bounded program; effects and results kept."""

from tripy_backend.passes import Job, cse

# A real size sliced out of its shape vector twice (as lower-markers does where it sets it twice), set twice, and
# a custom call with effects written twice.
REPEATED = """func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<2xi32>) -> (tensor<8x4xf32>, tensor<i32>, tensor<i32>) {
  %0 = stablehlo.slice %arg1 [0:1] : (tensor<2xi32>) -> tensor<1xi32>
  %1 = stablehlo.reshape %0 : (tensor<1xi32>) -> tensor<i32>
  %2 = stablehlo.set_dimension_size %arg0, %1, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  %3 = stablehlo.convert %2 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<8x4xf32>
  %4 = stablehlo.slice %arg1 [0:1] : (tensor<2xi32>) -> tensor<1xi32>
  %5 = stablehlo.reshape %4 : (tensor<1xi32>) -> tensor<i32>
  %6 = stablehlo.set_dimension_size %arg0, %5, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  %7 = stablehlo.convert %6 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<8x4xf32>
  %8 = stablehlo.add %3, %7 : tensor<8x4xf32>
  %9 = stablehlo.custom_call @effect(%1) {has_side_effect = true} : (tensor<i32>) -> tensor<i32>
  %10 = stablehlo.custom_call @effect(%5) {has_side_effect = true} : (tensor<i32>) -> tensor<i32>
  return %8, %9, %10 : tensor<8x4xf32>, tensor<i32>, tensor<i32>
}"""

MERGED = """func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<2xi32>) -> (tensor<8x4xf32>, tensor<i32>, tensor<i32>) {
  %0 = stablehlo.slice %arg1 [0:1] : (tensor<2xi32>) -> tensor<1xi32>
  %1 = stablehlo.reshape %0 : (tensor<1xi32>) -> tensor<i32>
  %2 = stablehlo.set_dimension_size %arg0, %1, dim = 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  %3 = stablehlo.convert %2 : (tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<8x4xf32>
  %4 = stablehlo.add %3, %3 : tensor<8x4xf32>
  %5 = stablehlo.custom_call @effect(%1) {has_side_effect = true} : (tensor<i32>) -> tensor<i32>
  %6 = stablehlo.custom_call @effect(%1) {has_side_effect = true} : (tensor<i32>) -> tensor<i32>
  return %4, %5, %6 : tensor<8x4xf32>, tensor<i32>, tensor<i32>
}"""


def test_repeated_size_arithmetic_is_merged_and_effects_are_kept(same_module):
    same_module(cse.run(REPEATED.encode(), Job("test", shapes=[(8, 4), (2,)], dynamic_dims=[(0, 0)])), MERGED)


def test_only_bounded_programs_get_it():
    assert cse.PASS.applies(Job("bucket", shapes=[(8, 4)], dynamic_dims=[(0, 0)]))
    assert not cse.PASS.applies(Job("one shape", shapes=[(8, 4)]))
