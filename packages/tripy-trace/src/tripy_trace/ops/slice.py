"""Basic indexing (``t[...]``): a slice per dim (start, stop, step with Python semantics), int indices that
remove a dim, and new size-1 axes. inputs: (x, *bounds), where bounds are rank-0 integer tensors used as
run-time starts/stops (``DynamicBound(i)`` refers to ``inputs[i]``).

Static bounds on static dims lower to stablehlo.slice; negative steps reverse the dim first; anything only
known at run time lowers to stablehlo.real_dynamic_slice with the bounds computed in the program by the same
formula (``normalize_slice``) that shape inference uses.
"""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Sequence, Tuple, Union

from tripy_flatir import dtypes
from tripy_flatir.ops.real_dynamic_slice import DynamicSliceOp
from tripy_flatir.ops.reverse import ReverseOp
from tripy_flatir.ops.slice import SliceOp
from tripy_flatir.tensor import DYNAMIC, FlatIRTensor
from tripy_trace import lowering, symbolic
from tripy_trace.ops.base import BaseTraceOp
from tripy_trace.shape_arith import INT_ARITH, Arith, Value


@dataclasses.dataclass(frozen=True)
class DynamicBound:
    """A slice bound given at run time by ``inputs[input_index]`` of the Slice op."""

    input_index: int

    def __repr__(self) -> str:
        return f"inputs[{self.input_index}]"


Bound = Union[None, int, DynamicBound]


def normalize_slice(
    start: Optional[Value], stop: Optional[Value], step: int, size: Value, arith: Arith = INT_ARITH
) -> Tuple[Value, Value, Value]:
    """``slice(start, stop, step).indices(size)``'s start and stop, and the number of elements selected.

    As in Python: negative bounds count from the end, out-of-range bounds are clamped (to [0, size] for a
    positive step, [-1, size - 1] for a negative one), and None means "from the beginning/to the end" in
    the direction of `step`. Values may be ints or run-time tensors (see ``Arith``); step must be a
    non-zero int.
    """
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step > 0:
        lower, upper = 0, size
    else:
        lower, upper = -1, arith.sub(size, 1)

    def clamp(bound: Optional[Value], default: Value) -> Value:
        if bound is None:
            return default
        return arith.select_negative(bound, arith.maximum(arith.add(bound, size), lower), arith.minimum(bound, upper))

    first = clamp(start, lower if step > 0 else upper)
    last = clamp(stop, upper if step > 0 else lower)
    span = arith.sub(last, first) if step > 0 else arith.sub(first, last)
    length = arith.maximum(arith.floordiv(arith.add(span, abs(step) - 1), abs(step)), 0)
    return first, last, length


@dataclasses.dataclass(repr=False, eq=False)
class Slice(BaseTraceOp):
    index: Tuple[Tuple[Bound, Bound, int], ...]  # (start, stop, step) for each input dim
    squeeze: Tuple[int, ...]  # input dims indexed by an int: they must select one element and are removed
    new_axes: Tuple[int, ...]  # output positions of new size-1 dims (None in the index)
    display_name = "tripy.Tensor.__getitem__"

    def infer_dtypes(self) -> None:
        self.outputs[0].dtype = self.inputs[0].dtype

    def infer_devices(self) -> None:
        self.outputs[0].device = self.inputs[0].device

    def infer_shapes(self) -> None:
        x = self.inputs[0]
        assert len(self.index) == x.rank, "the frontend gives one (start, stop, step) per dim"
        shape: List[int] = []
        for d, (start, stop, step) in enumerate(self.index):
            n = x.shape[d]
            if d in self.squeeze:
                if isinstance(start, int) and n != DYNAMIC and not -n <= start < n:
                    self.raise_error(
                        f"Index {start} is out of range for dim {d} of a tensor of shape {list(x.shape)}.",
                        [f"Valid indices for this dim are {-n} to {n - 1}." if n else "This dim is empty."],
                    )
                continue
            if n == DYNAMIC or isinstance(start, DynamicBound) or isinstance(stop, DynamicBound):
                shape.append(DYNAMIC)
            else:
                shape.append(int(normalize_slice(start, stop, step, n)[2]))  # type: ignore[arg-type]
        for pos in self.new_axes:
            shape.insert(pos, 1)
        self.outputs[0].shape = tuple(shape)

    def sym_dims(self, index: int, dims: List[tuple], values: List[Optional[tuple]]) -> Optional[Sequence[Any]]:
        """A dim taken whole (``x[:, 0]``'s first) keeps its size; other run-time lengths are sizes of their own."""
        out: List[Any] = [
            size if start is None and stop is None and step == 1 else symbolic.symbol()
            for d, (size, (start, stop, step)) in enumerate(zip(dims[0], self.index))
            if d not in self.squeeze
        ]
        for pos in self.new_axes:
            out.insert(pos, 1)
        return out

    def to_flat_ir(self, inputs: List[FlatIRTensor], outputs: List[FlatIRTensor]) -> None:
        x, out = inputs[0], outputs[0]
        arith = Arith(x.device)
        firsts, limits, strides, lengths, reverse_dims = self._dim_slices(inputs, arith)
        sliced_shape = tuple(DYNAMIC if isinstance(n, FlatIRTensor) else int(n) for n in lengths)
        needs_reshape = bool(self.squeeze or self.new_axes)
        steps_left = [bool(reverse_dims), not self._is_identity(x, firsts, limits, strides), needs_reshape]

        def result(shape: Tuple[int, ...], step_index: int) -> FlatIRTensor:
            if not any(steps_left[step_index + 1 :]):
                return out
            return FlatIRTensor.build(shape, x.dtype, x.device)

        current = x
        if steps_left[0]:
            reversed_x = result(x.shape, 0)
            ReverseOp.build([current], [reversed_x], dims=reverse_dims)
            current = reversed_x
        if steps_left[1]:
            sliced = result(sliced_shape, 1)
            if all(arith.is_static(v) for v in firsts + limits):
                SliceOp.build(
                    [current],
                    [sliced],
                    start_indices=[int(v) for v in firsts],  # type: ignore[arg-type]
                    limit_indices=[int(v) for v in limits],  # type: ignore[arg-type]
                    strides=strides,
                )
            else:
                DynamicSliceOp.build(
                    [current, arith.concat(firsts), arith.concat(limits), arith.concat(strides)], [sliced]
                )
            current = sliced
        if needs_reshape:
            dims: List[Value] = [n for d, n in enumerate(lengths) if d not in self.squeeze]
            for pos in self.new_axes:
                dims.insert(pos, 1)
            shape_tensor = None if out.is_static else arith.concat(dims)
            lowering.reshape(current, out.shape, shape_tensor, out=out)
        elif current is x:
            # Nothing to do (e.g. t[:]): bind the output with a reshape to the same shape.
            lowering.reshape(x, out.shape, None if out.is_static else lowering.shape_of(x), out=out)

    def _dim_slices(
        self, inputs: List[FlatIRTensor], arith: Arith
    ) -> Tuple[List[Value], List[Value], List[int], List[Value], List[int]]:
        """For each dim of the input: (first index, limit, stride, length), and the dims to reverse."""
        x = inputs[0]

        def bound(b: Bound) -> Optional[Value]:
            if not isinstance(b, DynamicBound):
                return b
            t = lowering.convert(inputs[b.input_index], dtypes.int32)
            return lowering.reshape(t, (1,))

        firsts: List[Value] = []
        limits: List[Value] = []
        strides: List[int] = []
        lengths: List[Value] = []
        reverse_dims: List[int] = []
        for d, (start, stop, step) in enumerate(self.index):
            size: Value = x.shape[d] if x.shape[d] != DYNAMIC else lowering.dim_size(x, d)
            if start is None and stop is None and step == 1:  # the whole dim
                firsts.append(0)
                limits.append(size)
                strides.append(1)
                lengths.append(size)
                continue
            first, _, length = normalize_slice(bound(start), bound(stop), step, size, arith)
            stride = abs(step)
            if step < 0 and not (arith.is_static(length) and int(length) <= 1):  # type: ignore[arg-type]
                # Take the elements in reverse order: slice the reversed dim with a positive stride.
                reverse_dims.append(d)
                first = arith.sub(arith.sub(size, 1), first)
            elif step < 0:
                stride = 1  # at most one element: no need to reverse
                if int(length) == 0:  # type: ignore[arg-type]
                    first = 0  # (Python's start is -1 here, e.g. x[::-1] of an empty dim: not a valid index)
            if stride == 1:
                limit = arith.add(first, length)
            else:  # first + (length - 1) * stride + 1, or first when length == 0
                limit = arith.add(first, arith.maximum(arith.sub(arith.mul(length, stride), stride - 1), 0))
            firsts.append(first)
            limits.append(limit)
            strides.append(stride)
            lengths.append(length)

        return firsts, limits, strides, lengths, reverse_dims

    def _is_identity(self, x: FlatIRTensor, firsts: List[Value], limits: List[Value], strides: List[int]) -> bool:
        return all(
            index == (None, None, 1) or (isinstance(f, int) and f == 0 and isinstance(lim, int) and lim == n and s == 1)
            for index, f, lim, s, n in zip(self.index, firsts, limits, strides, x.shape)
        )
