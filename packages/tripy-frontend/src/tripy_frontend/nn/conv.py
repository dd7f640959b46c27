"""tp.Conv: convolution over 1 to 3 spatial dims."""

from __future__ import annotations

from typing import Optional, Sequence

from tripy_flatir import dtypes
from tripy_frontend.export import public_api
from tripy_frontend.nn.convolution import check_conv_args, convolution
from tripy_frontend.nn.module import Module
from tripy_frontend.nn.parameter import unset
from tripy_frontend.nn.utils import check_float_dtype
from tripy_frontend.tensor import Tensor


@public_api(document_under="modules")
class Conv(Module):
    r"""A convolution (cross-correlation, as in PyTorch) of an ``[N, in_channels, *spatial]`` input
    with 1, 2 or 3 spatial dims:

    :math:`\text{out}(N_i, C_{\text{out}_j}) = \text{bias}(C_{\text{out}_j}) + \sum_{k} \text{weight}(C_{\text{out}_j}, k) \star \text{input}(N_i, k)`

    ``weight`` has PyTorch's shape ``[out_channels, in_channels / groups, *kernel_dims]`` and ``bias``
    ``[out_channels]``, so a ``Conv1d/2d/3d`` state dict loads as is. Each output spatial dim has size
    ``floor((D + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride) + 1``.

    .. code-block:: python

        conv = tp.Conv(1, 1, (2, 2), bias=False)
        conv.load_state_dict({"weight": np.ones((1, 1, 2, 2), dtype=np.float32)})
        x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
        out = conv(tp.Tensor(x))
        assert out.tolist() == [[[[8.0, 12.0], [20.0, 24.0]]]]
    """

    in_channels: int
    """The number of input channels."""
    out_channels: int
    """The number of output channels."""
    dtype: dtypes.dtype
    """The data type of the parameters and of the computation."""
    kernel_dims: Sequence[int]
    """The spatial shape of the kernel."""
    padding: Sequence[Sequence[int]]
    """The zero padding (before, after) of each spatial dim of the input."""
    stride: Sequence[int]
    """The stride along each spatial dim."""
    groups: int
    """The number of groups: input and output channels are split into this many groups, connected pairwise."""
    dilation: Sequence[int]
    """The spacing between kernel elements along each spatial dim."""
    weight: Tensor
    """The kernel, of shape ``[out_channels, in_channels / groups, *kernel_dims]``."""
    bias: Optional[Tensor]
    """The bias, of shape ``[out_channels]``, or None."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_dims: Sequence[int],
        stride: Optional[Sequence[int]] = None,
        padding: Optional[Sequence[Sequence[int]]] = None,
        dilation: Optional[Sequence[int]] = None,
        groups: Optional[int] = None,
        bias: bool = True,
        dtype: dtypes.dtype = dtypes.float32,
    ) -> None:
        """
        The positional order is nvtripy 0.1.7's: ``(in_channels, out_channels, kernel_dims, stride, padding,
        dilation, groups, bias, dtype)`` (earlier nvtripy releases put padding before stride; pass them by
        keyword to write code that reads the same in both).

        Args:
            in_channels: The number of input channels.
            out_channels: The number of output channels.
            kernel_dims: The spatial shape of the kernel (1 to 3 dims).
            padding: One (before, after) pair of zero padding per spatial dim. Defaults to no padding.
            stride: The stride per spatial dim. Defaults to 1.
            groups: The number of groups; it must divide in_channels and out_channels. Defaults to 1.
            dilation: The spacing between kernel elements per spatial dim. Defaults to 1.
            bias: Whether to add a bias.
            dtype: The data type of the parameters (and of the input).
        """
        super().__init__()
        kernel, pads, strides, g, dilations = check_conv_args(
            "tp.Conv", in_channels, out_channels, kernel_dims, padding, stride, groups, dilation
        )
        self.dtype = check_float_dtype(dtype, "tp.Conv")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_dims, self.padding, self.stride, self.groups, self.dilation = kernel, pads, strides, g, dilations
        self.weight = unset((out_channels, in_channels // g, *kernel), dtype)
        self.bias = unset((out_channels,), dtype) if bias else None

    def forward(self, input: Tensor) -> Tensor:
        """
        Args:
            input: The input, of shape ``[N, in_channels, *spatial]``.

        Returns:
            The output, of shape ``[N, out_channels, *out_spatial]``.
        """
        return convolution(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self.groups,
            self.dilation,
            "tp.Conv",
            self.in_channels,
        )
