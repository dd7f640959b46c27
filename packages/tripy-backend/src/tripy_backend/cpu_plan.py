"""XLA:CPU's performance rules, all in one place: which runtime compiles a program, which XLA options it gets,
which weights a program reads as stored ``[out, in]`` matrices, the layout of convolutions, and how a program of
matrix-vector products is prepared. The backend asks ``prepare`` before each compile; the frontend asks ``runtime`` and
``keeps_transposed_weight`` (through ``tp.compile``'s hoisting) from the same numbers, so the two never disagree.

**Runtimes.** jaxlib 0.6 and 0.7 have two XLA:CPU runtimes. The *classic* one (tripy's default there) compiles
one function per program and hands matrix products and convolutions to oneDNN; the *thunk* one (``jax.jit``'s)
runs one call per kernel, with Eigen products that use all cores. jaxlib 0.8 removed the classic runtime
(``No such compile option: 'xla_cpu_use_thunk_runtime'``): there every program compiles for the thunk runtime,
and the rules below that choose a runtime have nothing left to choose (``_xla.has_classic_cpu_runtime``).

Where both exist, a program goes to the thunk runtime when it has no matrix-matrix product and either
* its matrix-vector products (one operand a single row or column) read at least ``MATRIX_VECTOR_ELEMENTS``
  matrix elements: such a program streams its matrices from memory, and the thunk runtime's kernels use all
  cores. A GPT-2 small decoding step (74 such products, 500 MB of weights) took 54 ms there against 71 ms on
  the classic runtime on a loaded 2-core machine, and 38-39 ms on both when the machine was quiet; or
* its convolutions read at least ``CONVOLUTION_KERNEL_ELEMENTS`` (256K) kernel elements: the classic runtime's oneDNN
  copies each kernel into its blocked layout on every call, while the thunk runtime's Eigen convolutions read
  the ``[*kernel, C, O]`` kernels ``tp.Conv`` passes as stored. ResNet-18 at batch 1 (11M kernel elements) ran
  in 49 ms instead of 71 (interleaved in one process, 2-core VM; at batch 8 both took 318 ms).
Every other program keeps the classic runtime, whose oneDNN products and single compiled function win on
matrix-matrix work and small programs. ``TRIPY_XLA_CPU_RUNTIME=classic`` or ``=thunk`` forces one runtime.

**Options.** On the classic runtime, tripy compiles without excess precision and, at ``optimization_level``
0-3 (tp.compile's default 3, and eager evaluation's 2), with LLVM at -O2 instead of XLA's -O3: measured on GPT-2
small (2 cores), classic/-O3 compiled in 5.4 s and ran in 217 ms, classic/-O2 3.2 s and 218 ms; elementwise
programs run as fast at -O2 and compile ~2x faster. Thunk-runtime programs get XLA's defaults, but at levels 0-2
(``THUNK_LLVM_O2_LEVELS``), eager evaluation's among them, LLVM -O2 too: the eager benchmark's 10-op program
compiled ~30% faster (two runs, each alternating 6 times in one process, 2-core VM: jaxlib 0.10.2 73 -> 54 and
64 -> 45 ms, 0.12 67 -> 46 and 59 -> 43 ms) and ran as fast (23-33 µs either way). tp.compile's default keeps
-O3 there: GPT-2 small's forward pass ran slower at -O2 in 4 of 5 runs on 0.12.

**Convolutions.** On the CPU every program's convolutions run channels-last (``channels_last.rewrite``):
XLA:CPU's convolution kernels read and write ``[N, *spatial, C]``, and tripy's ``[N, C, *spatial]`` programs
made it transpose around each one (ResNet-18: 9 transposes in the optimized program instead of 2 on jaxlib 0.10,
about 5% of its time there). ``TRIPY_XLA_CPU_CHANNELS_LAST=0`` turns it off. Where XLA:CPU has YNNPACK fusions
(jaxlib 0.10; ``_xla.accepts_cpu_option``), a program with convolutions sends every one of them to YNNPACK
(``YNN_CONVOLUTIONS``). XLA's default set of YNNPACK fusions also fuses reductions, and in ResNet-18 that fusion
swallowed the 15 convolutions before the final mean, which then ran as XLA's own loops: 94 ms of CPU time per
batch-1 call instead of 50 with convolutions only (2-core VM, shared). Convolutions YNNPACK does not take
(transposed ones, with ``lhs_dilation``) stay XLA's.

**Matrix-vector products on the thunk runtime** (``isolate_matrix_vector_products``): each big one's vector
operand and result are kept out of XLA's fusions. XLA:CPU otherwise fuses the ops that make the vector (a
LayerNorm, a GELU) into the product's loop, where they are computed again for every row of the matrix, and
fuses a bias add into the product, whose kernel then copies the matrix (transposed) on every call. Isolated, a
product is a loop that reads each row of an ``[out, in]`` weight as stored. With both, a GPT-2 small decoding
step took 25-26 ms instead of ~32 on the 2-core VM.

**Weight layouts** (``keeps_transposed_weight``): ``tp.Linear`` computes ``x @ W^T``. ``tp.compile`` evaluates
``W^T`` once (``[in, out]``, see ``tripy_frontend/compiler/hoisting.py``) unless the program reads ``[out, in]``
as fast: a one-row product on the thunk runtime (isolated, above), or a product of at least ``MANY_ROWS`` rows
(oneDNN's product, and XLA's own, read the ``[out, in]`` weight at least as fast; GPT-2 small at 128 tokens: its
``768 -> 3072`` products took 6.7 ms instead of 11.4 on the classic runtime). A product of a few rows gets the
``[in, out]`` copy: XLA would otherwise copy the weight transposed on every call (8x slower for a 2-row product
of a 768x3072 weight).

On jaxlib 0.11 and later a one-row product copies an ``[out, in]`` weight transposed on every call
(``_xla.matrix_vector_reads_stored_weight``; 768x3072, jaxlib 0.12: 1.6 ms instead of 0.13 ms, and a GPT-2 small
decoding step 124 ms instead of ~30): there one-row products get the ``[in, out]`` copy too.

**Narrow weights** (``widens_weight_in_loop``): a weight stored narrower than the product's type (int8 with
per-channel scales, as ``tp.Linear(..., quant_dtype=tp.int8)`` dequantizes it; bfloat16 cast to float32) is
read as stored by a one-row product on the thunk runtime: XLA fuses the widening into the product's loop, so the
product streams 1 or 2 bytes per weight instead of 4 (24 ``[3072, 768]`` matrix-vector products, jaxlib 0.10.2,
2-core VM: float32 10.2 ms, int8 4.3 ms, bfloat16 5.6 ms). Products of several rows make the float32 weight
first, on every call (1.6x slower than float32 for 16 rows of a 768x3072 weight): there ``tp.compile``
evaluates the float32 weight once, at the memory cost of a float32 copy. Where one-row products copy their
weight (jaxlib 0.11 and later, above) they get the float32 ``[in, out]`` copy as well.
"""

from __future__ import annotations

import math
import os
from typing import Any, List, NamedTuple, Sequence, Tuple

from tripy_flatir.mlir_utils import bytecode, context
from tripy_backend import _xla, channels_last

# Matrix elements that matrix-vector products must read, in all, before a program is worth the thunk
# runtime (4 MiB of float32; below that the matrices stay in the CPU's caches and one thread keeps up).
MATRIX_VECTOR_ELEMENTS = 1 << 20

# Kernel elements that convolutions must read, in all, before a program is worth the thunk runtime (below
# that, the classic runtime's per-call copy of the kernels costs less than its oneDNN kernels save). The small
# U-Net of benchmarks/peers/convnet.py (0.6M, channels-last) ran in 212 ms on the thunk runtime against 417.
CONVOLUTION_KERNEL_ELEMENTS = 1 << 18

# Matrix elements of a matrix-vector product before its vector is worth isolating.
ISOLATE_ELEMENTS = 1 << 16

# Rows of a matrix product from which its transposed weight stays in the program (see the module docstring).
MANY_ROWS = 64

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
    docstring)."""
    if weight_elements < ISOLATE_ELEMENTS:
        return False
    return (rows == 1 and program_runtime == "thunk" and _xla.matrix_vector_reads_stored_weight()) or rows >= MANY_ROWS


def widens_weight_in_loop(rows: int, weight_elements: int, program_runtime: str) -> bool:
    """Whether a product with `rows` rows (-1: not static) reads a narrow stored weight (of `weight_elements`)
    and widens it in its own loop, instead of a float copy made once (see the module docstring)."""
    return (rows == 1 and program_runtime == "thunk" and weight_elements >= ISOLATE_ELEMENTS
            and _xla.matrix_vector_reads_stored_weight())


def compile_options(platform: str, optimization_level: int, program_runtime: str = "classic",
                    convolutions: bool = False) -> List[Tuple[str, Any]]:
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


def prepare(module_bytes: bytes, platform: str, optimization_level: int) -> Tuple[bytes, List[Tuple[str, Any]]]:
    """(the module to compile, its XLA options): the runtime chosen from the module's products and
    convolutions, its convolutions channels-last, and on the thunk runtime its matrix-vector products isolated."""
    if platform != "cpu":
        return module_bytes, []
    if keeps_channels_last():
        module_bytes = channels_last.rewrite(module_bytes)
    products, kernels = _products_and_kernels(module_bytes)
    program_runtime = runtime(products, kernels)
    if program_runtime == "thunk" and any(p.rows == 1 and p.matrix_elements >= ISOLATE_ELEMENTS for p in products):
        module_bytes = isolate_matrix_vector_products(module_bytes)  # (parses the module again: only when needed)
    return module_bytes, compile_options(platform, optimization_level, program_runtime, kernels > 0)


def module_runtime(module_bytes: bytes) -> str:
    """``runtime`` for a StableHLO module (bytecode or text), from its products and convolutions."""
    return runtime(*_products_and_kernels(module_bytes))


def fingerprint(platform: str, index: int, optimization_level: int = 3) -> str:
    """Everything besides the program that decides what the compiler produces: the compiler and host
    (``_xla.host_fingerprint``), tripy's options and this policy."""
    options = compile_options(platform, optimization_level)
    return f"{_xla.host_fingerprint(platform, index)};options={options};cpu_runtime={policy()}"


def _products_and_kernels(module_bytes: bytes) -> Tuple[List[Product], int]:
    """The module's matrix products, and the elements of its convolution kernels in all."""
    if b"dot_general" not in module_bytes and b"convolution" not in module_bytes:  # (op names are text in bytecode too)
        return [], 0
    from jax.extend.mlir import ir

    products, kernel = [], 0
    with context():
        for op in _walk(ir.Module.parse(module_bytes).operation):
            if op.name == "stablehlo.dot_general":
                products.append(_product(op))
            elif op.name == "stablehlo.convolution":
                shape = ir.RankedTensorType(op.operands[1].type).shape
                kernel += math.prod(shape) if all(d >= 0 for d in shape) else 0
    return products, kernel


def _product(op: Any) -> Product:
    from jax.extend.mlir import ir

    shapes = [ir.RankedTensorType(v.type).shape for v in op.operands]
    if any(d < 0 for shape in shapes for d in shape):
        return Product(-1, 0)
    free = [_free_elements(op, 0), _free_elements(op, 1)]
    larger = 0 if free[0] >= free[1] else 1
    return Product(min(free), math.prod(shapes[larger]))


def isolate_matrix_vector_products(module_bytes: bytes) -> bytes:
    """The module with the vector operand and the result of each matrix-vector product (unbatched, floating
    point, a matrix of at least ``ISOLATE_ELEMENTS`` elements) passed through an exact identity XLA:CPU does not
    fuse through: a sum over a new axis of size two, the value and a zero. (XLA drops optimization barriers
    before fusing.) The sums run over a few thousand elements, next to a product that reads millions."""
    from jax.extend.mlir import ir

    with context():
        module = ir.Module.parse(module_bytes)
        products = [op for op in _walk(module.operation) if op.name == "stablehlo.dot_general" and _isolable(op)]
        for product in products:
            vector = 0 if _free_elements(product, 0) == 1 else 1
            with ir.InsertionPoint(product), product.location:
                product.operands[vector] = _unfusable_identity(product.operands[vector])[-1].result
                _, grown, padded, total = _unfusable_identity(product.result)
            grown.operation.move_after(product)  # (made before the product, whose result they read)
            padded.operation.move_after(grown.operation)
            total.operation.move_after(padded.operation)
            product.result.replace_all_uses_except(total.result, grown.operation)
        return bytecode(module) if products else module_bytes


def _unfusable_identity(value: object) -> list:
    """Ops computing ``sum([value, 0], axis=0)``: a zero, a reshape adding the axis, a pad, a reduce (in order)."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    vtype = ir.RankedTensorType(value.type)  # type: ignore[attr-defined]
    scalar = ir.RankedTensorType.get([], vtype.element_type)
    rank = len(vtype.shape)
    zero = stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(vtype.element_type, 0.0)))
    grown = stablehlo.ReshapeOp(ir.RankedTensorType.get([1, *vtype.shape], vtype.element_type), value)
    padded = stablehlo.PadOp(grown, zero, [0] * (rank + 1), [1] + [0] * rank, [0] * (rank + 1))
    total = stablehlo.ReduceOp([vtype], [padded.result], [zero.result], [0])
    body = total.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(body):
        stablehlo.ReturnOp([stablehlo.AddOp(*body.arguments).result])
    return [zero, grown, padded, total]


def _isolable(op: object) -> bool:
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    product = _product(op)
    if product.rows != 1 or product.matrix_elements < ISOLATE_ELEMENTS:
        return False
    dims = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])  # type: ignore[attr-defined]
    element = ir.RankedTensorType(op.result.type).element_type  # type: ignore[attr-defined]
    return not dims.lhs_batching_dimensions and isinstance(element, ir.FloatType)


def _free_elements(op: object, operand: int) -> int:
    """The elements of `op`'s operand `operand` outside its batch and contracting dims."""
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import stablehlo

    dims = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])  # type: ignore[attr-defined]
    shape = ir.RankedTensorType(op.operands[operand].type).shape  # type: ignore[attr-defined]
    skip = ((dims.lhs_batching_dimensions, dims.lhs_contracting_dimensions) if operand == 0 else
            (dims.rhs_batching_dimensions, dims.rhs_contracting_dimensions))
    return math.prod(d for i, d in enumerate(shape) if i not in (*skip[0], *skip[1]))


def _walk(operation: object):  # type: ignore[no-untyped-def]
    for region in operation.regions:  # type: ignore[attr-defined]
        for block in region.blocks:
            for op in block.operations:
                yield op.operation
                yield from _walk(op.operation)
