"""tp.LayerNorm: normalization over the last dims of the input."""

from __future__ import annotations

from typing import Sequence, Tuple, Union

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_frontend.export import public_api
from tripy_frontend.nn.module import Module
from tripy_frontend.nn.parameter import unset
from tripy_frontend.nn.utils import check_float_dtype, check_input, check_int_arg, in_float32, normalize
from tripy_frontend.tensor import Tensor


@public_api(document_under="modules")
class LayerNorm(Module):
    r"""Layer normalization over the last ``len(normalized_shape)`` dims:

    :math:`\text{LayerNorm}(x) = \frac{x - \bar{x}}{\sqrt{\sigma^2 + \epsilon}} \gamma + \beta`

    where the mean :math:`\bar{x}` and the (biased) variance :math:`\sigma^2` are taken over those dims.
    ``weight`` (:math:`\gamma`) and ``bias`` (:math:`\beta`) have shape ``normalized_shape``, as in PyTorch.

    .. code-block:: python

        layer_norm = tp.LayerNorm(3)
        layer_norm.load_state_dict({"weight": np.ones(3, dtype=np.float32), "bias": np.zeros(3, dtype=np.float32)})
        x = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 5.0]], dtype=np.float32)
        out = layer_norm(tp.Tensor(x))
        expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        assert np.allclose(np.from_dlpack(out), expected, atol=1e-5)
    """

    dtype: dtypes.dtype
    """The data type of the parameters and of the computation."""
    normalized_shape: Tuple[int, ...]
    """The shape of the trailing dims that are normalized."""
    weight: Tensor
    r"""The :math:`\gamma` parameter, of shape ``normalized_shape``."""
    bias: Tensor
    r"""The :math:`\beta` parameter, of shape ``normalized_shape``."""
    eps: float
    """Added to the variance to avoid division by zero."""

    def __init__(
        self, normalized_shape: Union[int, Sequence[int]], dtype: dtypes.dtype = dtypes.float32, eps: float = 1e-5
    ) -> None:
        """
        Args:
            normalized_shape: The size of the last dim, or the shape of the last dims, to normalize over.
            dtype: The data type of the parameters (and of the input).
            eps: Added to the variance to avoid division by zero.
        """
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not shape:
            raise_error("tp.LayerNorm: normalized_shape must have at least one dim.", _stack.capture())
        for d in shape:
            check_int_arg(d, "tp.LayerNorm: each dim of normalized_shape")
        self.dtype = check_float_dtype(dtype, "tp.LayerNorm")
        self.normalized_shape = shape
        self.weight = unset(shape, dtype)
        self.bias = unset(shape, dtype)
        self.eps = float(eps)

    def forward(self, x: Tensor) -> Tensor:
        """
        Args:
            x: The input, of rank >= 2 (a batch dim first); its last dims must equal ``normalized_shape``.

        Returns:
            A tensor of the same shape.
        """
        d = len(self.normalized_shape)
        if isinstance(x, Tensor) and x.rank < 2:  # as nvtripy 0.1.7 refuses it
            raise_error(
                f"tp.LayerNorm expects an input of rank >= 2, shaped (N, *) (a batch dim, then the normalized "
                f"dims), but got shape {list(x.trace_tensor.shape)}.",
                _stack.capture(),
                ["To normalize one vector, give it a batch dim: tp.unsqueeze(x, 0)."],
                [x.stack_info],
            )
        check_input(x, self, self.dtype, min_rank=d)
        trailing = x.trace_tensor.shape[-d:]
        if any(t >= 0 and t != n for t, n in zip(trailing, self.normalized_shape)):
            raise_error(
                f"tp.LayerNorm{self.normalized_shape}: the last {d} dim(s) of the input must be "
                f"{list(self.normalized_shape)}, but the input has shape {list(x.trace_tensor.shape)}.",
                _stack.capture(),
                [],
                [x.stack_info],
            )
        dims = tuple(range(x.rank - d, x.rank))
        return in_float32(lambda x, w, b: normalize(x, dims, self.eps) * w + b, x, self.weight, self.bias)
