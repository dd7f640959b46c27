"""Resize (interpolate) a tensor to a new shape, one dim at a time.

inputs: (x) or (x, output shape: 1-D int32) when some output sizes are only known at run time. With
`scales`, each output size is floor(input size * scale), in integer arithmetic with the scale as a small
exact fraction; sampling then depends only on the input and output sizes (as in nvtripy, where scales
only determine the output shape).

For output position i of a dim resized from `n` to `m` elements:
  * nearest: source index floor(i * n / m) (exact integer arithmetic);
  * linear, align_corners=False: source coordinate max((i + 0.5) * (n / m) - 0.5, 0) ("half pixel");
  * linear, align_corners=True: source coordinate i * (n - 1) / (m - 1) (0 when m == 1);
  linear blends the two neighbouring elements (the upper one clamped to n - 1) by the fractional part.
  * cubic: the source coordinate as for linear but not clamped at 0; the four elements around it
    (indices clamped to [0, n - 1]) are blended with Keys' cubic convolution weights, a = -0.75.
This matches PyTorch's ``interpolate(mode="nearest" | "linear"/"bilinear"/"trilinear" | "bicubic")`` with
``output_size``. Resizing several dims applies the 1-D rule along each (multilinear interpolation).
The indices and weights are computed in the program (iota arithmetic) and applied with gathers.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, List, Optional, Tuple

from tripy_flatir import dtypes
from tripy_flatir.ops.add import AddOp
from tripy_flatir.ops.broadcast import BroadcastOp
from tripy_flatir.ops.convert import ConvertOp
from tripy_flatir.ops.divide import DivideOp
from tripy_flatir.ops.dynamic_broadcast import DynamicBroadcastOp
from tripy_flatir.ops.dynamic_iota import DynamicIotaOp
from tripy_flatir.ops.floor import FloorOp
from tripy_flatir.ops.iota import IotaOp
from tripy_flatir.ops.maximum import MaxOp
from tripy_flatir.ops.minimum import MinOp
from tripy_flatir.ops.multiply import MultiplyOp
from tripy_flatir.ops.slice import SliceOp
from tripy_flatir.ops.subtract import SubtractOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering
from tripy_trace.ops.base import BaseTraceOp
from tripy_trace.ops.gather import take
from tripy_trace.shape_arith import Arith, Value


def scale_fraction(scale: float) -> Fraction:
    """The scale as a small exact fraction, so that output sizes are integer arithmetic (which the
    compiler can fold when sizes are only known at run time)."""
    return Fraction(scale).limit_denominator(1 << 12)


def scaled_size(size: int, scale: float) -> int:
    """The output size for `scale`: floor(size * scale)."""
    f = scale_fraction(scale)
    return size * f.numerator // f.denominator


@dataclasses.dataclass(repr=False, eq=False)
class Resize(BaseTraceOp):
    mode: str  # "nearest" | "linear" | "cubic"
    shape: Tuple[int, ...]  # the output shape when given (DYNAMIC where in the shape tensor); ignored with scales
    scales: Optional[Tuple[float, ...]]
    align_corners: bool
    display_name = "tripy.resize"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.inputs[0].dtype

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        if self.scales is not None:
            shape = tuple(DYNAMIC if n == DYNAMIC else scaled_size(n, s) for n, s in zip(x.shape, self.scales))
        else:
            shape = tuple(self.shape)
        for d, (n, m) in enumerate(zip(x.shape, shape)):
            if n == 0 and m not in (0, DYNAMIC):
                self.raise_error(
                    f"tripy.resize: cannot resize the empty dim {d} of a tensor of shape {list(x.shape)} to size {m}."
                )
        self.outputs[0].shape = shape

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, out = inputs[0], outputs[0]
        arith = Arith(x.device)
        in_sizes: List[Value] = [n if n != DYNAMIC else lowering.dim_size(x, d) for d, n in enumerate(x.shape)]
        out_sizes = [self._out_size(inputs, d, in_sizes[d], arith) for d in range(x.rank)]
        # (a dim of scale 1 keeps its size, dynamic or not: no resampling of a dynamic batch)
        dims = [
            d
            for d in range(x.rank)
            if not (
                out_sizes[d] is in_sizes[d]
                or (arith.is_static(in_sizes[d]) and arith.is_static(out_sizes[d]) and in_sizes[d] == out_sizes[d])
            )
        ]
        if not dims:
            lowering.reshape(x, out.shape, None if out.is_static else lowering.shape_of(x), out=out)
            return
        current = x
        for i, d in enumerate(dims):
            target = out if i == len(dims) - 1 else None
            shape = tuple(out.shape[k] if k in dims[: i + 1] else current.shape[k] for k in range(x.rank))
            resizer = _Resizer(current, d, in_sizes[d], out_sizes[d], arith, shape)
            if self.mode == "nearest":
                current = resizer.nearest(target)
            elif self.mode == "cubic":
                current = resizer.cubic(self.align_corners, target)
            else:
                current = resizer.linear(self.align_corners, target)

    def _out_size(self, inputs: List[FlatIRTensor], d: int, in_size: Value, arith: Arith) -> Value:
        x = inputs[0]
        if self.scales is not None:
            f = scale_fraction(self.scales[d])
            if f == 1:
                return in_size
            return arith.floordiv(arith.mul(in_size, f.numerator), f.denominator)
        if self.shape[d] != DYNAMIC:
            return self.shape[d]
        entry = FlatIRTensor.build((1,), dtypes.int32, x.device)
        SliceOp.build([inputs[1]], [entry], start_indices=[d], limit_indices=[d + 1], strides=[1])
        return entry


class _Resizer:
    """Builds the FlatIR that resizes dim `dim` of `x` from `n` to `m` elements."""

    def __init__(self, x: FlatIRTensor, dim: int, n: Value, m: Value, arith: Arith, out_shape: Tuple[int, ...]) -> None:
        self.x, self.dim, self.n, self.m, self.arith = x, dim, n, m, arith
        self.out_shape = out_shape
        self.device = x.device
        self.vec_shape = (out_shape[dim],)  # one entry per output position along `dim`
        shape_tensor = None if out_shape[dim] != DYNAMIC else arith.concat([m])
        self.positions = FlatIRTensor.build(
            self.vec_shape, dtypes.int32, self.device, reason="to number the output positions of the resized dim"
        )
        if shape_tensor is None:
            IotaOp.build([], [self.positions], dim=0)
        else:
            DynamicIotaOp.build([shape_tensor], [self.positions], dim=0)

    # ---- elementwise helpers on per-position vectors ------------------------------------------------
    def splat(self, value: Any, dtype: Any) -> FlatIRTensor:
        """A scalar (a Python number or a 1-element int32 tensor) as a vector like the positions."""
        if isinstance(value, FlatIRTensor):
            scalar = lowering.reshape(lowering.convert(value, dtype), ())
        else:
            scalar = lowering.constant(value, dtype, self.device)
        return lowering.broadcast_to(scalar, self.vec_shape, lambda: lowering.shape_of(self.positions))

    def binary(self, op: Any, a: FlatIRTensor, b: FlatIRTensor, out: Optional[FlatIRTensor] = None) -> FlatIRTensor:
        out = out or FlatIRTensor.build(a.shape, a.dtype, self.device)
        op.build([a, b], [out])
        return out

    def along_dim(self, weights: FlatIRTensor, like: FlatIRTensor) -> FlatIRTensor:
        """Broadcast a per-position vector along `dim` of a tensor shaped like `like`."""
        out = FlatIRTensor.build(
            like.shape, weights.dtype, self.device, reason="to apply the interpolation weights along the resized dim"
        )
        if like.is_static:
            BroadcastOp.build([weights], [out], broadcast_dim=[self.dim])
        else:
            DynamicBroadcastOp.build([weights, lowering.shape_of(like)], [out], broadcast_dim=[self.dim])
        return out

    # ---- modes ------------------------------------------------------------------------------------
    def nearest(self, out: Optional[FlatIRTensor]) -> FlatIRTensor:
        scaled = self.binary(MultiplyOp, self.positions, self.splat(self.n, dtypes.int32))
        source = self.binary(DivideOp, scaled, self.splat(self.m, dtypes.int32))  # floor: both non-negative
        return take(self.x, source, self.dim, out or FlatIRTensor.build(self.out_shape, self.x.dtype, self.device))

    def source_coords(self, align_corners: bool, clamp: bool) -> FlatIRTensor:
        """The (float32) source coordinate of each output position."""
        f32, arith = dtypes.float32, self.arith
        coords = lowering.convert(self.positions, f32)
        if align_corners:
            ratio = self.binary(
                DivideOp, self.splat(arith.sub(self.n, 1), f32), self.splat(arith.maximum(arith.sub(self.m, 1), 1), f32)
            )
            return self.binary(MultiplyOp, coords, ratio)
        ratio = self.binary(DivideOp, self.splat(self.n, f32), self.splat(self.m, f32))
        centers = self.binary(AddOp, coords, self.splat(0.5, f32))
        shifted = self.binary(SubtractOp, self.binary(MultiplyOp, centers, ratio), self.splat(0.5, f32))
        return self.binary(MaxOp, shifted, self.splat(0.0, f32)) if clamp else shifted

    def blend(
        self, indices: List[FlatIRTensor], weights: List[FlatIRTensor], out: Optional[FlatIRTensor]
    ) -> FlatIRTensor:
        """sum_k weights[k] * x[indices[k]] along the dim, accumulated in float32."""
        f32, i32 = dtypes.float32, dtypes.int32
        last = self.splat(self.arith.sub(self.n, 1), i32)
        zero = self.splat(0, i32)
        terms = []
        for idx, w in zip(indices, weights):
            idx = self.binary(MinOp, self.binary(MaxOp, idx, zero), last)
            v = lowering.convert(
                take(self.x, idx, self.dim, FlatIRTensor.build(self.out_shape, self.x.dtype, self.device)), f32
            )
            terms.append(self.binary(MultiplyOp, v, self.along_dim(w, v)))
        total = terms[0]
        for i, term in enumerate(terms[1:], 1):
            into = out if i == len(terms) - 1 and self.x.dtype is f32 else None
            total = self.binary(AddOp, total, term, into)
        if self.x.dtype is f32:
            return total
        result = out or FlatIRTensor.build(self.out_shape, self.x.dtype, self.device)
        ConvertOp.build([total], [result])
        return result

    def linear(self, align_corners: bool, out: Optional[FlatIRTensor]) -> FlatIRTensor:
        f32, i32 = dtypes.float32, dtypes.int32
        source = self.source_coords(align_corners, clamp=True)
        lower = lowering.convert(source, i32)  # source >= 0: truncation is floor
        upper = self.binary(AddOp, lower, self.splat(1, i32))
        upper_weight = self.binary(SubtractOp, source, lowering.convert(lower, f32))
        lower_weight = self.binary(SubtractOp, self.splat(1.0, f32), upper_weight)
        return self.blend([lower, upper], [lower_weight, upper_weight], out)

    def cubic(self, align_corners: bool, out: Optional[FlatIRTensor]) -> FlatIRTensor:
        f32, i32 = dtypes.float32, dtypes.int32
        source = self.source_coords(align_corners, clamp=False)
        floor = FlatIRTensor.build(self.vec_shape, f32, self.device)
        FloorOp.build([source], [floor])
        t = self.binary(SubtractOp, source, floor)
        base = lowering.convert(floor, i32)
        indices = [self.binary(AddOp, base, self.splat(k, i32)) for k in (-1, 0, 1, 2)]
        one = self.splat(1.0, f32)
        distances = [
            self.binary(AddOp, t, one),
            t,
            self.binary(SubtractOp, one, t),
            self.binary(SubtractOp, self.splat(2.0, f32), t),
        ]
        weights = [self.keys_weight(d, near=k in (1, 2)) for k, d in enumerate(distances)]
        return self.blend(indices, weights, out)

    def keys_weight(self, d: FlatIRTensor, near: bool) -> FlatIRTensor:
        """Keys' cubic convolution weight (a = -0.75) of a sample at distance d: d <= 1 if `near`, else 1 < d < 2."""
        a, f32 = -0.75, dtypes.float32

        def poly(coeffs: List[float]) -> FlatIRTensor:  # Horner: ((c0 * d + c1) * d + c2) * d + c3
            acc = self.splat(coeffs[0], f32)
            for c in coeffs[1:]:
                acc = self.binary(AddOp, self.binary(MultiplyOp, acc, d), self.splat(c, f32))
            return acc

        if near:
            return poly([a + 2, -(a + 3), 0.0, 1.0])
        return poly([a, -5 * a, 8 * a, -4 * a])
