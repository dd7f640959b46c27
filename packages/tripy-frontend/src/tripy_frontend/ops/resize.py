import numbers
from typing import Any, Optional, Sequence

from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.resize import Resize
from tripy_frontend.export import RETURN, public_api
from tripy_frontend.ops.common import ALL_TYPES, FLOAT_TYPES, shape_arg
from tripy_frontend.tensor import Tensor

_MODES = ("cubic", "linear", "nearest")


@public_api(document_under="ops_nn", dtype_constraints={"input": "T1", RETURN: "T1"}, dtype_variables={"T1": ALL_TYPES})
def resize(
    input: Tensor,
    shape_or_scales: Any = None,
    /,
    mode: str = "linear",
    align_corners: bool = False,
    *,
    output_shape: Optional[Sequence[Any]] = None,
    scales: Optional[Sequence[float]] = None,
) -> Tensor:
    r"""Resize (interpolate) a tensor to a new shape, given as `output_shape` or as `scales`.

    As in nvtripy, the second argument is the output shape when it holds ints (or DimensionSizes) and
    the scales when it holds any float: ``tp.resize(x, (1, 1, 4, 4))``, ``tp.resize(x, (1.0, 1.0, 2.0, 2.0))``,
    ``tp.resize(x, scales=(1, 1, 2, 2))``. Older nvtripy code that passes the mode second,
    ``tp.resize(x, "nearest", output_shape=...)``, works too.

    Every dim whose size changes is resampled: ``"nearest"`` takes, for output position ``i`` of a dim
    resized from ``n`` to ``m`` elements, input element ``floor(i * n / m)``; ``"linear"`` blends the
    two nearest input elements (bilinear/trilinear when several dims change) and ``"cubic"`` the four
    nearest with Keys' cubic weights (a = -0.75), as PyTorch's ``interpolate`` does with ``output_size``
    (modes ``"nearest"``, ``"bilinear"``, ``"bicubic"``).

    Args:
        input: The input tensor: any dtype with ``"nearest"``, a floating-point one otherwise.
        shape_or_scales: The output shape (ints or DimensionSizes) or the scales (any float).
        mode: ``"cubic"``, ``"linear"`` (the default) or ``"nearest"``.
        align_corners: Only for ``"linear"`` and ``"cubic"``. If True, the centers of the corner elements of
            the input and output are aligned (corner values are preserved); if False, their outer edges are
            aligned and sampling positions are pixel centers ("half pixel").
        output_shape: The output shape, one entry (int or DimensionSize) per dim.
        scales: One scale factor per dim; the output size of a dim is ``floor(size * scale)``. As in
            nvtripy, the scales only determine the output shape: sampling uses the ratio of the sizes.

    .. code-block:: python

        input = tp.reshape(tp.arange(4, dtype=tp.float32), (1, 1, 2, 2))
        out = tp.resize(input, (1, 1, 4, 4), mode="nearest")
        assert out.tolist()[0][0][0] == [0.0, 0.0, 1.0, 1.0]
        out = tp.resize(input, scales=(1, 1, 2, 2))
        assert out.tolist()[0][0][0] == [0.0, 0.25, 0.75, 1.0]
        out = tp.resize(input, (1, 1, 3, 3), align_corners=True)
        assert out.tolist()[0][0][1] == [1.0, 1.5, 2.0]
        out = tp.resize(input, (1.0, 1.0, 2.0, 2.0), mode="cubic")
        assert out.shape == (1, 1, 4, 4)
    """
    mode, output_shape, scales = _arguments(shape_or_scales, mode, output_shape, scales)
    _check_mode(input, mode, align_corners)
    rank = input.rank
    shape_tensor = None
    static: Any = ()
    if output_shape is not None:
        static, shape_tensor = shape_arg(output_shape, _WHAT)
        if len(static) != rank:
            raise_error(
                f"{_WHAT}: output_shape {list(static)} must have one entry per dim of the input, which has "
                f"shape {list(input.trace_tensor.shape)}.",
                _stack.capture(),
                [],
                [input.stack_info],
            )
        scale_t = None
    else:
        if (
            isinstance(scales, Tensor)
            or not isinstance(scales, Sequence)
            or len(scales) != rank
            or not all(isinstance(s, numbers.Real) and not isinstance(s, bool) and s > 0 for s in scales)
        ):
            raise_error(
                f"{_WHAT}: scales must be a sequence of positive numbers, one per dim of the input (rank "
                f"{rank}), but got {scales!r}.",
                _stack.capture(),
            )
        scale_t = tuple(float(s) for s in scales)
    inputs = [input] + ([shape_tensor] if shape_tensor is not None else [])
    return Tensor._from_op(
        Resize, inputs, mode=mode, shape=tuple(static), scales=scale_t, align_corners=bool(align_corners)
    )


_WHAT = "tripy.resize"


def _arguments(shape_or_scales: Any, mode: str, output_shape: Any, scales: Any) -> Any:
    """(mode, output_shape, scales) from nvtripy's ways of calling resize (see its docstring)."""
    if isinstance(shape_or_scales, str):  # older nvtripy: resize(input, mode, output_shape=..., scales=...)
        if mode != "linear":
            raise_error(f"{_WHAT}: the mode is given twice ({shape_or_scales!r} and {mode!r}).", _stack.capture())
        mode = shape_or_scales
    elif shape_or_scales is not None:
        if output_shape is not None or scales is not None:
            raise_error(
                f"{_WHAT}: give the output shape or the scales once, positionally or by keyword.", _stack.capture()
            )
        if isinstance(shape_or_scales, Sequence) and any(isinstance(v, float) for v in shape_or_scales):
            scales = shape_or_scales
        else:
            output_shape = shape_or_scales
    if (output_shape is None) == (scales is None):
        raise_error(f"{_WHAT}: give exactly one of output_shape and scales.", _stack.capture())
    return mode, output_shape, scales


def _check_mode(input: Tensor, mode: str, align_corners: bool) -> None:
    if mode not in _MODES:
        raise_error(
            f"{_WHAT}: unsupported mode {mode!r}.", _stack.capture(), [f"Supported modes: {', '.join(_MODES)}."]
        )
    if align_corners and mode == "nearest":
        raise_error(f"{_WHAT}: align_corners can only be used with mode='linear' or 'cubic'.", _stack.capture())
    if mode != "nearest" and input.dtype not in FLOAT_TYPES:
        # Not part of the declaration, which cannot depend on the value of `mode`.
        raise_error(
            f"{_WHAT} does not support dtype {input.dtype} for argument 'input' with mode={mode!r}.",
            _stack.capture(),
            [
                f"Supported dtypes with mode={mode!r}: "
                + ", ".join(d.name for d in FLOAT_TYPES)
                + ". Use tripy.cast() to convert, or mode='nearest'."
            ],
            [input.stack_info],
        )
