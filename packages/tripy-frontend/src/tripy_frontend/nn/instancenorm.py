"""tp.InstanceNorm: per-sample, per-channel normalization over the spatial dims."""

from __future__ import annotations

from tripy_flatir import dtypes
from tripy_frontend.export import public_api
from tripy_frontend.nn.module import Module
from tripy_frontend.nn.parameter import unset
from tripy_frontend.nn.utils import (
    check_channels,
    check_float_dtype,
    check_input,
    check_int_arg,
    in_float32,
    normalize,
    per_channel,
)
from tripy_frontend.tensor import Tensor


@public_api(document_under="modules")
class InstanceNorm(Module):
    r"""Instance normalization of an ``[N, C, D1, ...]`` input:

    :math:`\text{InstanceNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} \gamma + \beta`

    where the mean :math:`\mu` and the (biased) variance :math:`\sigma^2` are taken per sample and per
    channel over the spatial dims ``D1, ...``. ``weight`` and ``bias`` have shape ``[C]`` (PyTorch's
    ``InstanceNorm*d(C, affine=True)``).

    .. code-block:: python

        norm = tp.InstanceNorm(2)
        norm.load_state_dict({"weight": np.ones(2, dtype=np.float32), "bias": np.zeros(2, dtype=np.float32)})
        x = np.arange(16, dtype=np.float32).reshape(1, 2, 2, 4)
        out = np.from_dlpack(norm(tp.Tensor(x)))
        mu, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
        assert np.allclose(out, (x - mu) / np.sqrt(var + 1e-5), atol=1e-5)
    """

    num_channels: int
    """The number of channels (dim 1) of the input."""
    dtype: dtypes.dtype
    """The data type of the parameters and of the computation."""
    weight: Tensor
    r"""The :math:`\gamma` parameter, of shape ``[num_channels]``."""
    bias: Tensor
    r"""The :math:`\beta` parameter, of shape ``[num_channels]``."""
    eps: float
    """Added to the variance to avoid division by zero."""

    def __init__(self, num_channels: int, dtype: dtypes.dtype = dtypes.float32, eps: float = 1e-5) -> None:
        """
        Args:
            num_channels: The number of channels (dim 1) of the input.
            dtype: The data type of the parameters (and of the input).
            eps: Added to the variance to avoid division by zero.
        """
        super().__init__()
        self.num_channels = check_int_arg(num_channels, "tp.InstanceNorm: num_channels")
        self.dtype = check_float_dtype(dtype, "tp.InstanceNorm")
        self.eps = float(eps)
        self.weight = unset((num_channels,), dtype)
        self.bias = unset((num_channels,), dtype)

    def forward(self, x: Tensor) -> Tensor:
        """
        Args:
            x: The input, of shape ``[N, num_channels, D1, ...]``.

        Returns:
            A tensor of the same shape.
        """
        check_input(x, self, self.dtype, min_rank=3)
        check_channels(x, self, self.num_channels)
        dims = tuple(range(2, x.rank))
        return in_float32(
            lambda x, w, b: normalize(x, dims, self.eps) * w + b,
            x,
            per_channel(self.weight, x.rank),
            per_channel(self.bias, x.rank),
        )
