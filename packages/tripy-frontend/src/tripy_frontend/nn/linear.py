"""tp.Linear: y = x W^T + b, optionally with quantized weights."""

from __future__ import annotations

from typing import Any, Optional

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.nn.module import Module
from tripy_frontend.nn.parameter import unset, unset_optional
from tripy_frontend.nn.utils import check_float_dtype, check_input, check_int_arg
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.reshape import reshape
from tripy_frontend.ops.transpose import transpose
from tripy_frontend.ops.dequantize import dequantize
from tripy_frontend.ops.quantize import quantize

_QUANT_TYPES = (dtypes.int8, dtypes.float8, dtypes.int4)


@public_api(document_under="modules")
class Linear(Module):
    r"""Applies a linear transformation :math:`y = x W^T + b`.

    Parameters use PyTorch's names and shapes (``weight``: ``[out_features, in_features]``, ``bias``:
    ``[out_features]``), so a converted ``torch.nn.Linear`` state dict loads as is.

    With ``quant_dtype`` set, the weight is quantized to that type and dequantized before the product
    (weight-only quantization; also the input when ``input_scale`` is set):

    * per tensor (``weight_quant_dim=None``): ``weight_scale`` is a scalar.
    * per channel (``weight_quant_dim=0`` or ``1``): ``weight_scale`` has one entry per row (dim 0) or
      column (dim 1) of the weight.
    * ``int4`` only, block-wise (``weight_quant_dim=None`` and a 2-D ``weight_scale``, ``[out_features / block,
      in_features]``): each block of ``block`` consecutive weight rows shares one scale per column (as in
      nvtripy). int4 weights are weight-only: an ``input_scale`` is refused.

    .. code-block:: python

        linear = tp.Linear(3, 4)
        linear.load_state_dict({"weight": np.ones((4, 3), dtype=np.float32), "bias": np.arange(4, dtype=np.float32)})
        out = linear(tp.Tensor([[1.0, 2.0, 3.0]]))
        assert out.tolist() == [[6.0, 7.0, 8.0, 9.0]]
    """

    dtype: dtypes.dtype
    """The data type of the parameters and of the computation."""
    weight: Tensor
    r"""The :math:`W` matrix, of shape ``[out_features, in_features]``."""
    bias: Optional[Tensor]
    """The bias, of shape ``[out_features]``, or None."""
    quant_dtype: Optional[dtypes.dtype]
    """The data type the weight is quantized to, or None."""
    weight_quant_dim: Optional[int]
    """The weight dimension that per-channel quantization scales run along (None: per tensor / block-wise)."""
    weight_scale: Optional[Tensor]
    """The weight quantization scale (only with quant_dtype)."""
    input_scale: Optional[Tensor]
    """The input quantization scale, a scalar (optional; only with quant_dtype)."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        dtype: dtypes.dtype = dtypes.float32,
        quant_dtype: Optional[dtypes.dtype] = None,
        weight_quant_dim: Optional[int] = None,
    ) -> None:
        """
        Args:
            in_features: The size of the last dim of the input.
            out_features: The size of the last dim of the output.
            bias: Whether to add a bias.
            dtype: The data type of the parameters (and of the input).
            quant_dtype: The data type to quantize the weight to (``tp.int8``, ``tp.float8`` or ``tp.int4``).
            weight_quant_dim: The weight dim that per-channel scales run along (0 or 1).
        """
        super().__init__()
        check_int_arg(in_features, "tp.Linear: in_features")
        check_int_arg(out_features, "tp.Linear: out_features")
        self.dtype = check_float_dtype(dtype, "tp.Linear")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = unset((out_features, in_features), dtype)
        self.bias = unset((out_features,), dtype) if bias else None
        if quant_dtype is not None and quant_dtype not in _QUANT_TYPES:
            raise_error(
                f"tp.Linear: quant_dtype must be one of int8, float8, int4, but got {quant_dtype!r}.", _stack.capture()
            )
        if weight_quant_dim is not None and weight_quant_dim not in (0, 1):
            raise_error(
                f"tp.Linear: weight_quant_dim must be 0, 1 or None, but got {weight_quant_dim!r}.", _stack.capture()
            )
        self.quant_dtype = quant_dtype
        self.weight_quant_dim = weight_quant_dim
        self.weight_scale: Any = None
        self.input_scale: Any = None
        if quant_dtype is not None:
            if weight_quant_dim is not None:
                scale_shape: Optional[tuple] = ((out_features, in_features)[weight_quant_dim],)
            else:
                scale_shape = None if quant_dtype is dtypes.int4 else ()  # int4: per tensor or block-wise
            self.weight_scale = unset(scale_shape, dtype)
            self.input_scale = unset_optional((), dtype)

    def forward(self, x: Tensor) -> Tensor:
        """
        Args:
            x: The input, of shape ``[..., in_features]``.

        Returns:
            The output, of shape ``[..., out_features]``. As in nvtripy, a 1-D input gives ``[1, out_features]``
            when the layer has a bias (nvtripy adds the bias as a ``[1, out_features]`` row), and
            ``[out_features]`` when it has none.
        """

        check_input(x, self, self.dtype)
        in_shape = x.trace_tensor.shape
        if in_shape[-1] >= 0 and in_shape[-1] != self.in_features:
            raise_error(
                f"tp.Linear({self.in_features}, {self.out_features}) got an input whose last dim is "
                f"{in_shape[-1]}, not {self.in_features} (input shape {list(in_shape)}).",
                _stack.capture(),
                [],
                [x.stack_info],
            )
        weight = self.weight
        if self.quant_dtype is not None:
            weight, x = self._dequantized(weight, x)

        leading = x.shape[:-1]
        if x.rank > 2:
            # One 2-D product instead of a batched one with the weight broadcast along the batch.
            x = reshape(x, (-1, self.in_features))
        # x W^T in eager and compiled mode alike: which layout of W the product reads (as stored, or an [in, out]
        # copy tp.compile makes once) is the backend's CPU plan (tripy_backend/cpu_plan.py).
        out = x @ transpose(weight, 0, 1)
        if self.bias is not None:
            out = out + (reshape(self.bias, (1, self.out_features)) if x.rank == 1 else self.bias)
        if len(leading) > 1:
            out = reshape(out, tuple(leading) + (self.out_features,))
        return out

    def _dequantized(self, weight: Tensor, x: Tensor) -> tuple:

        assert self.quant_dtype is not None
        if isinstance(self.input_scale, Tensor):
            if self.weight_quant_dim == 1:
                raise_error(
                    "tp.Linear: weight_quant_dim=1 cannot be combined with an input_scale.",
                    _stack.capture(),
                    ["Quantize the weight per output channel (weight_quant_dim=0) instead."],
                )
            if self.quant_dtype is dtypes.int4:
                raise_error(
                    "tp.Linear: int4 quantization is weight-only; an input_scale is not supported.", _stack.capture()
                )
            x = dequantize(quantize(x, self.input_scale, self.quant_dtype), self.input_scale, self.dtype)
        qw = quantize(weight, self.weight_scale, self.quant_dtype, self.weight_quant_dim)
        return dequantize(qw, self.weight_scale, self.dtype, self.weight_quant_dim), x
