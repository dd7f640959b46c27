"""tp.BatchNorm: normalization with precomputed (inference) statistics."""

from __future__ import annotations

from tripy_flatir import dtypes
from tripy_frontend.export import public_api
from tripy_frontend.nn.convolution import scaled_convolution
from tripy_frontend.nn.module import Module
from tripy_frontend.nn.parameter import unset
from tripy_frontend.nn.utils import check_channels, check_float_dtype, check_input, check_int_arg, per_channel
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.rsqrt import rsqrt


@public_api(document_under="modules")
class BatchNorm(Module):
    r"""Batch normalization of an ``[N, C, ...]`` input with precomputed statistics (inference):

    :math:`y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} \gamma + \beta`

    where :math:`\mu` is ``running_mean`` and :math:`\sigma^2` is ``running_var``. All four parameters
    have shape ``[C]`` and PyTorch's names, so a ``BatchNorm1d/2d/3d`` state dict loads as is (drop its
    ``num_batches_tracked`` entry, or load with ``strict=False``).

    .. code-block:: python

        bn = tp.BatchNorm(2)
        bn.load_state_dict({"weight": np.array([1.0, 2.0], np.float32), "bias": np.array([0.0, 1.0], np.float32),
                            "running_mean": np.array([1.0, 1.0], np.float32),
                            "running_var": np.array([4.0, 1.0], np.float32)})
        out = bn(tp.ones((1, 2, 1, 1)) * 3.0)
        assert np.allclose(np.from_dlpack(out).reshape(-1), [2.0 / np.sqrt(4 + 1e-5), 1 + 4.0 / np.sqrt(1 + 1e-5)])
    """

    num_features: int
    """The number of channels (dim 1) of the input."""
    dtype: dtypes.dtype
    """The data type of the parameters and of the computation."""
    eps: float
    """Added to the variance to avoid division by zero."""
    weight: Tensor
    r"""The :math:`\gamma` parameter, of shape ``[num_features]``."""
    bias: Tensor
    r"""The :math:`\beta` parameter, of shape ``[num_features]``."""
    running_mean: Tensor
    r"""The precomputed mean :math:`\mu`, of shape ``[num_features]``."""
    running_var: Tensor
    r"""The precomputed variance :math:`\sigma^2`, of shape ``[num_features]``."""

    def __init__(self, num_features: int, dtype: dtypes.dtype = dtypes.float32, eps: float = 1e-5) -> None:
        """
        Args:
            num_features: The number of channels (dim 1) of the input.
            dtype: The data type of the parameters (and of the input).
            eps: Added to the variance to avoid division by zero.
        """
        super().__init__()
        self.num_features = check_int_arg(num_features, "tp.BatchNorm: num_features")
        self.dtype = check_float_dtype(dtype, "tp.BatchNorm")
        self.eps = float(eps)
        self.weight = unset((num_features,), dtype)
        self.bias = unset((num_features,), dtype)
        self.running_mean = unset((num_features,), dtype)
        self.running_var = unset((num_features,), dtype)

    def forward(self, x: Tensor) -> Tensor:
        """
        Args:
            x: The input, of shape ``[N, num_features, ...]``.

        Returns:
            A tensor of the same shape.
        """

        check_input(x, self, self.dtype, min_rank=2)
        check_channels(x, self, self.num_features, "features")
        rank = x.rank
        # Fold the statistics and the affine parameters into one scale and one shift per channel, and in
        # tp.compile the scale into the kernel of the convolution before, where both are baked in.
        scale = self.weight * rsqrt(self.running_var + self.eps)
        shift = self.bias - self.running_mean * scale
        scaled = scaled_convolution(x, scale)
        return (x * per_channel(scale, rank) if scaled is None else scaled) + per_channel(shift, rank)
