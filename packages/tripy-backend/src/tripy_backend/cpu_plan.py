"""XLA:CPU's performance rules, in one place: which runtime compiles a program, which XLA options it gets, and
which weights a program reads as stored ``[out, in]`` matrices. The pipeline asks it before each compile (the
runtime of a module, its options; whether the ``channels-last`` and ``matrix-vector-isolation`` passes apply);
``tp.compile`` asks it through ``tripy_backend.plan`` which transposed or narrow weights to evaluate once; both read
the same numbers, so the two never disagree.

* **Runtimes** (jaxlib 0.6 and 0.7 have two; 0.8 removed the classic one): the *classic* runtime (one function per
  program, oneDNN products and convolutions) by default; the *thunk* runtime (one call per kernel, Eigen products
  on all cores) for a program without matrix-matrix products whose matrix-vector products read at least
  ``MATRIX_VECTOR_ELEMENTS`` or whose convolution kernels hold at least ``CONVOLUTION_KERNEL_ELEMENTS`` elements.
  ``TRIPY_XLA_CPU_RUNTIME=classic|thunk`` forces one.
* **Options**: no excess precision on the classic runtime; LLVM -O2 instead of -O3 at optimization levels 0-3 on
  the classic runtime and 0-2 (eager evaluation's level) on the thunk one; YNNPACK for every convolution where XLA
  has it (jaxlib 0.10).
* **Weights** (``keeps_transposed_weight``, ``widens_weight_in_loop``): ``x @ W^T`` reads the ``[out, in]`` weight
  as stored where that is as fast (products of ``MANY_ROWS`` rows or more on the classic runtime, of
  ``THUNK_MANY_ROWS`` on the thunk one; one-row products on the thunk runtime of a jaxlib whose products read it as
  stored), else ``tp.compile`` evaluates an ``[in, out]`` copy once. Where the rows are not static (a range), the
  transpose stays in the program and each bucket of the range asks again for its rows (``passes.transposed_weights``:
  the small buckets read copies, made in the background).

Why each rule and threshold, with the measurements: docs/guides/performance.rst, "XLA:CPU options".
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, List, NamedTuple, Sequence, Tuple

from tripy_flatir.mlir_utils import context
from tripy_backend import _xla, kernels

# Matrix elements that matrix-vector products must read, in all, before a program is worth the thunk
# runtime (4 MiB of float32; below that the matrices stay in the CPU's caches and one thread keeps up).
MATRIX_VECTOR_ELEMENTS = 1 << 20

# Kernel elements that convolutions must read, in all, before a program is worth the thunk runtime (below
# that, the classic runtime's per-call copy of the kernels costs less than its oneDNN kernels save). The small
# U-Net of benchmarks/peers/convnet.py (0.6M, channels-last) ran in 212 ms on the thunk runtime against 417.
CONVOLUTION_KERNEL_ELEMENTS = 1 << 18

# Matrix elements of a matrix-vector product before its vector is worth isolating.
ISOLATE_ELEMENTS = 1 << 16

# Rows of a matrix product from which its transposed weight stays in the program (see the module docstring): on the
# classic runtime, oneDNN's products fold the transpose in from MANY_ROWS; on the thunk runtime, XLA's read the
# [out, in] weight as fast as an [in, out] copy from THUNK_MANY_ROWS (faster: 0.62-0.88x the time at 32 rows).
MANY_ROWS = 64
THUNK_MANY_ROWS = 32

# The thunk runtime's option that sends every convolution to YNNPACK (see the module docstring).
YNN_CONVOLUTIONS = ("xla_cpu_experimental_ynn_fusion_type", "LIBRARY_FUSION_TYPE_INDIVIDUAL_CONVOLUTION")

# LLVM at -O2 instead of XLA's -O3, and the optimization levels that get it on the thunk runtime (see the module
# docstring; on the classic runtime levels 0-3 do).
LLVM_O2 = ("xla_backend_optimization_level", 2)
THUNK_LLVM_O2_LEVELS = 2


class Product(NamedTuple):
    """A matrix product as the rules see it: ``rows``, the free elements of its smaller side (1 for a
    matrix-vector product; -1 if not static), and ``matrix_elements``, those of its larger operand."""

    rows: int
    matrix_elements: int


def requested() -> str:
    """``TRIPY_XLA_CPU_RUNTIME``: ``auto`` (the default: the choice of ``runtime``), ``classic`` or ``thunk``."""
    return os.environ.get("TRIPY_XLA_CPU_RUNTIME", "auto")


def keeps_channels_last() -> bool:
    """Whether convolutions run channels-last (``channels_last.rewrite``): yes unless
    ``TRIPY_XLA_CPU_CHANNELS_LAST=0`` (to measure the layout tripy's programs are written in)."""
    return os.environ.get("TRIPY_XLA_CPU_CHANNELS_LAST", "1") != "0"


def policy() -> str:
    """What decides the runtime and the layout, for the compiler fingerprint (a new policy must not load old
    cache entries)."""
    return f"{requested()}:matvec-conv-thunk-v5:channels-last={int(keeps_channels_last())}"


def runtime(products: Sequence[Product], convolution_kernel_elements: int = 0) -> str:
    """``"classic"`` or ``"thunk"``: the XLA:CPU runtime for a program with these matrix products and
    convolution kernels (see the module docstring)."""
    forced = requested()
    if not _xla.has_classic_cpu_runtime() or forced == "thunk":
        return "thunk"
    if forced == "classic" or any(p.rows != 1 for p in products):
        return "classic"
    matrix = sum(p.matrix_elements for p in products)
    thunk = matrix >= MATRIX_VECTOR_ELEMENTS or convolution_kernel_elements >= CONVOLUTION_KERNEL_ELEMENTS
    return "thunk" if thunk else "classic"


def keeps_transposed_weight(rows: int, weight_elements: int, program_runtime: str) -> bool:
    """Whether ``x @ W^T``, with `rows` rows of ``x`` (-1: not static), reads its ``[out, in]`` weight (of
    `weight_elements`) as stored in the program, instead of an ``[in, out]`` copy made once (see the module
    docstring; rows not static: kept, for each bucket of a range to decide, see ``passes.transposed_weights``)."""
    if weight_elements < ISOLATE_ELEMENTS:
        return False
    if rows == -1:
        return True
    if program_runtime == "thunk":
        return (rows == 1 and _xla.matrix_vector_reads_stored_weight()) or rows >= THUNK_MANY_ROWS
    return rows >= MANY_ROWS


def widens_weight_in_loop(rows: int, weight_elements: int, program_runtime: str) -> bool:
    """Whether a product with `rows` rows (-1: not static) reads a narrow stored weight (of `weight_elements`)
    and widens it in its own loop, instead of a float copy made once (see the module docstring)."""
    return (
        rows == 1
        and program_runtime == "thunk"
        and weight_elements >= ISOLATE_ELEMENTS
        and _xla.matrix_vector_reads_stored_weight()
    )


def compile_options(
    platform: str, optimization_level: int, program_runtime: str = "classic", convolutions: bool = False
) -> List[Tuple[str, Any]]:
    """The XLA options tripy sets per compilation (not process-wide, unlike ``XLA_FLAGS``)."""
    if platform != "cpu":
        return []
    if program_runtime == "thunk" or not _xla.has_classic_cpu_runtime():
        thunk: List[Tuple[str, Any]] = [LLVM_O2] if optimization_level <= THUNK_LLVM_O2_LEVELS else []
        if convolutions and _xla.accepts_cpu_option(*YNN_CONVOLUTIONS):
            thunk.append(YNN_CONVOLUTIONS)
        return thunk
    options: List[Tuple[str, Any]] = [("xla_cpu_use_thunk_runtime", False), ("xla_allow_excess_precision", False)]
    if optimization_level <= 3:
        options.append(LLVM_O2)
    return options


def module_runtime(module_bytes: bytes) -> str:
    """``runtime`` for a StableHLO module (bytecode or text), from its products and convolutions."""
    return runtime(*products_and_kernels(module_bytes))


def fingerprint(platform: str, index: int, optimization_level: int = 3) -> str:
    """Everything besides the program that decides what the compiler produces: the compiler and host
    (``_xla.host_fingerprint``), tripy's options, this policy and the native kernels the code may call (last, and
    only where there are some, so that code compiled without them keeps its fingerprint; ``saved_kernels`` reads
    them back)."""
    options = compile_options(platform, optimization_level)
    tag = kernels.tag()
    used = f";kernels={tag}" if tag != kernels.NONE else ""
    return f"{_xla.host_fingerprint(platform, index)};options={options};cpu_runtime={policy()}{used}"


def saved_kernels(fingerprint: str) -> str:
    """The native kernels (``kernels.tag()``) that code of `fingerprint` may call (``kernels.NONE``: none)."""
    _, found, tag = fingerprint.rpartition(";kernels=")
    return tag if found else kernels.NONE


def products_and_kernels(module_bytes: bytes) -> Tuple[List[Product], int]:
    """The module's matrix products, and the elements of its convolution kernels in all."""
    if b"dot_general" not in module_bytes and b"convolution" not in module_bytes:  # (op names are text in bytecode too)
        return [], 0
    from jax.extend.mlir import ir

    with context():
        return products_and_kernels_of(ir.Module.parse(module_bytes).operation)


def products_and_kernels_of(operation: Any) -> Tuple[List[Product], int]:
    """`products_and_kernels` of a parsed module (its operation; in its context)."""
    from jax.extend.mlir import ir

    products, kernel = [], 0
    for op in walk(operation):
        if op.name == "stablehlo.dot_general":
            products.append(product(op))
        elif op.name == "stablehlo.convolution":
            shape = ir.RankedTensorType(op.operands[1].type).shape
            kernel += math.prod(shape) if all(d >= 0 for d in shape) else 0
    return products, kernel


def product(op: Any) -> Product:
    from jax.extend.mlir import ir

    shapes = [ir.RankedTensorType(v.type).shape for v in op.operands]
    if any(d < 0 for shape in shapes for d in shape):
        return Product(-1, 0)
    free = [free_elements(op, 0), free_elements(op, 1)]
    larger = 0 if free[0] >= free[1] else 1
    return Product(min(free), math.prod(shapes[larger]))


def free_elements(op: object, operand: int) -> int:
    """The elements of `op`'s operand `operand` outside its batch and contracting dims."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    dims = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])  # type: ignore[attr-defined]
    shape = ir.RankedTensorType(op.operands[operand].type).shape  # type: ignore[attr-defined]
    skip = (
        (dims.lhs_batching_dimensions, dims.lhs_contracting_dimensions)
        if operand == 0
        else (dims.rhs_batching_dimensions, dims.rhs_contracting_dimensions)
    )
    return math.prod(d for i, d in enumerate(shape) if i not in (*skip[0], *skip[1]))


# Ops whose operands XLA:CPU computes and stores before they run: it fuses no elementwise producer into them (a oneDNN
# convolution is a custom call)
UNFUSED = ("stablehlo.convolution", "stablehlo.custom_call", "stablehlo.dot_general")


def sum_op(x: Any, zero: Any, dims: List[int]) -> Any:
    """A ``stablehlo.reduce`` adding `x` over `dims` from `zero` (a scalar), made at the current insertion point."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    xtype = ir.RankedTensorType(x.type)
    kept = [n for d, n in enumerate(xtype.shape) if d not in dims]
    scalar = ir.RankedTensorType.get([], xtype.element_type)
    total = stablehlo.ReduceOp([ir.RankedTensorType.get(kept, xtype.element_type)], [x], [zero], dims)
    body = total.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(body):
        stablehlo.ReturnOp([stablehlo.AddOp(*body.arguments).result])
    return total


def is_sum(op: Any) -> bool:
    """Whether `op` (a one-operand ``stablehlo.reduce``) adds, starting from a constant zero."""
    return combines_with(op, "stablehlo.add") and splat(op.operands[1]) == 0.0


def combines_with(op: Any, name: str) -> bool:
    """Whether the body of `op` (a one-operand reduce or reduce_window) is the op `name` of its two arguments."""
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if len(body) != 2 or body[0].name != name or body[1].name != "stablehlo.return":
        return False
    args = list(block.arguments)
    return list(body[0].operands) in (args, args[::-1]) and body[1].operands[0] == body[0].result


def ints(attributes: Any, name: str, n: int, default: int) -> List[int]:
    """An array attribute (``array<i64: ...>``, ``array<i1: ...>`` or dense elements) as ints; `n` times `default`
    where the op does not have it."""
    return [int(v) for v in attributes[name]] if name in attributes else [default] * n


def splat(value: Any) -> Any:
    """The float that `value` holds everywhere (a float constant with one value, broadcast or not), else None."""
    from jax.extend.mlir import ir

    op = value.owner
    while isinstance(op, (ir.Operation, ir.OpView)) and op.name == "stablehlo.broadcast_in_dim":
        op = op.operands[0].owner
    if not isinstance(op, (ir.Operation, ir.OpView)) or op.name != "stablehlo.constant":
        return None
    dense = ir.DenseElementsAttr(op.attributes["value"])
    if not dense.is_splat:
        return None
    try:
        return ir.FloatAttr(dense.get_splat_value()).value
    except ValueError:  # (an integer constant)
        return None


def per_channel(value: Any, feature: int) -> Any:
    """The vector that `value` broadcasts along dim `feature` (a ``broadcast_in_dim`` of a tensor whose only dim of
    more than one element becomes `feature`); None if it is not one."""
    from jax.extend.mlir import ir

    op = value.owner
    if not isinstance(op, (ir.Operation, ir.OpView)) or op.name != "stablehlo.broadcast_in_dim":
        return None
    source = op.operands[0]
    shape = list(ir.RankedTensorType(source.type).shape)
    dims = [int(d) for d in op.attributes["broadcast_dimensions"]]
    size = ir.RankedTensorType(value.type).shape[feature]
    if math.prod(shape) != size or any(n != 1 and d != feature for n, d in zip(shape, dims)):
        return None
    return source


def channel_vector(vector: Any) -> Any:
    """`vector` (one dim of C elements, the rest 1) as a ``[C]`` tensor: the ``[C]`` tensor it was reshaped from, or
    a reshape of it made at the insertion point."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    t = ir.RankedTensorType(vector.type)
    if t.rank == 1:
        return vector
    op = vector.owner
    if isinstance(op, (ir.Operation, ir.OpView)) and op.name == "stablehlo.reshape":
        if ir.RankedTensorType(op.operands[0].type).rank == 1:
            return op.operands[0]
    return stablehlo.ReshapeOp(ir.RankedTensorType.get([math.prod(t.shape)], t.element_type), vector).result


def kernel_call(target: str, result_type: Any, operands: Sequence[Any], config: Dict[str, Any]) -> Any:
    """A ``stablehlo.custom_call`` to the native kernels' typed FFI handler `target` (``api_version = 4``), made at
    the insertion point: its attributes `config` (ints as i64, lists of ints as ``array<i64: ...>``) in its
    ``backend_config``."""
    from jax.extend.mlir import ir

    i64 = ir.IntegerType.get_signless(64)
    attributes = {
        k: ir.DenseI64ArrayAttr.get([int(n) for n in v]) if isinstance(v, list) else ir.IntegerAttr.get(i64, int(v))
        for k, v in config.items()
    }
    return ir.Operation.create(
        "stablehlo.custom_call",
        results=[result_type],
        operands=list(operands),
        attributes={
            "call_target_name": ir.StringAttr.get(target),
            "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
            "backend_config": ir.DictAttr.get(attributes),
        },
    )


def walk(operation: object):  # type: ignore[no-untyped-def]
    for region in operation.regions:  # type: ignore[attr-defined]
        for block in region.blocks:
            for op in block.operations:
                yield op.operation
                yield from walk(op.operation)
