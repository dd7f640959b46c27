"""tp.GroupNorm: normalization over groups of channels."""

from __future__ import annotations

from tripy_flatir import dtypes
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
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
from tripy_frontend.ops.reshape import reshape


@public_api(document_under="modules")
class GroupNorm(Module):
    r"""Group normalization of an ``[N, C, D1, ...]`` input:

    :math:`\text{GroupNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} \gamma + \beta`

    The ``C`` channels are split into ``num_groups`` groups; the mean :math:`\mu` and the (biased)
    variance :math:`\sigma^2` are taken per sample over each group's channels and all spatial dims.
    ``weight`` and ``bias`` have shape ``[C]``, as in PyTorch.

    .. code-block:: python

        norm = tp.GroupNorm(2, 4)
        norm.load_state_dict({"weight": np.ones(4, dtype=np.float32), "bias": np.zeros(4, dtype=np.float32)})
        x = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)
        out = np.from_dlpack(norm(tp.Tensor(x)))
        g = x.reshape(1, 2, 8)
        expected = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
        assert np.allclose(out, expected, atol=1e-5)
    """

    num_groups: int
    """The number of groups the channels are split into."""
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

    def __init__(
        self, num_groups: int, num_channels: int, dtype: dtypes.dtype = dtypes.float32, eps: float = 1e-5
    ) -> None:
        """
        Args:
            num_groups: The number of groups to split the channels into; it must divide num_channels.
            num_channels: The number of channels (dim 1) of the input.
            dtype: The data type of the parameters (and of the input).
            eps: Added to the variance to avoid division by zero.
        """
        super().__init__()
        check_int_arg(num_groups, "tp.GroupNorm: num_groups")
        check_int_arg(num_channels, "tp.GroupNorm: num_channels")
        if num_channels % num_groups:
            raise_error(
                f"tp.GroupNorm: num_groups ({num_groups}) must divide num_channels ({num_channels}) evenly.",
                _stack.capture(),
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.dtype = check_float_dtype(dtype, "tp.GroupNorm")
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
        shape = x.shape

        def group_norm(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
            # [N, G, C / G, *spatial], not [N, G, -1]: splitting the channels alone keeps the spatial dims whole,
            # so the backend can keep the activations channels-last through it (the pass tripy_backend/passes/channels_last.py).
            spatial = tuple(shape[i] for i in range(2, x.rank))
            grouped = reshape(x, (shape[0], self.num_groups, self.num_channels // self.num_groups) + spatial)
            return reshape(normalize(grouped, tuple(range(2, x.rank + 1)), self.eps), shape) * w + b

        return in_float32(group_norm, x, per_channel(self.weight, x.rank), per_channel(self.bias, x.rank))
