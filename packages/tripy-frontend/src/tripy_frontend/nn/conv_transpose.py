"""tp.ConvTranspose: transposed (fractionally strided) convolution over 1 to 3 spatial dims."""

from __future__ import annotations

from typing import Optional, Sequence

from tripy_flatir import dtypes
from tripy_frontend.export import public_api
from tripy_frontend.nn.convolution import check_conv_args, convolution
from tripy_frontend.nn.module import Module
from tripy_frontend.nn.parameter import unset
from tripy_frontend.nn.utils import check_float_dtype
from tripy_frontend.tensor import Tensor
from tripy_frontend.ops.permute import permute
from tripy_frontend.ops.reshape import reshape


@public_api(document_under="modules")
class ConvTranspose(Module):
    r"""A transposed convolution (the gradient of :class:`Conv` with respect to its input), as in
    PyTorch's ``ConvTranspose1d/2d/3d``, over 1, 2 or 3 spatial dims.

    It runs as a convolution of the input dilated by ``stride`` (``stride - 1`` zeros between
    elements), padded by ``dilation * (kernel - 1) - padding`` on each side, with the kernel flipped.
    ``weight`` has PyTorch's shape ``[in_channels, out_channels / groups, *kernel_dims]``. Each output
    spatial dim has size ``(D - 1) * stride - pad_before - pad_after + dilation * (kernel - 1) + 1``.

    .. code-block:: python

        up = tp.ConvTranspose(1, 1, (2,), stride=(2,), bias=False)
        up.load_state_dict({"weight": np.array([[[1.0, 10.0]]], dtype=np.float32)})
        out = up(tp.Tensor([[[1.0, 2.0, 3.0]]]))
        assert out.tolist() == [[[1.0, 10.0, 2.0, 20.0, 3.0, 30.0]]]
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
    """Cropping (before, after) of each spatial dim of the output, as PyTorch's ``padding``."""
    stride: Sequence[int]
    """The stride along each spatial dim (the upsampling factor)."""
    groups: int
    """The number of groups: input and output channels are split into this many groups, connected pairwise."""
    dilation: Sequence[int]
    """The spacing between kernel elements along each spatial dim."""
    weight: Tensor
    """The kernel, of shape ``[in_channels, out_channels / groups, *kernel_dims]``."""
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
            padding: One (before, after) pair per spatial dim, cropped from the output. Defaults to none.
            stride: The stride per spatial dim (the upsampling factor). Defaults to 1.
            groups: The number of groups; it must divide in_channels and out_channels. Defaults to 1.
            dilation: The spacing between kernel elements per spatial dim. Defaults to 1.
            bias: Whether to add a bias.
            dtype: The data type of the parameters (and of the input).
        """
        super().__init__()
        kernel, pads, strides, g, dilations = check_conv_args(
            "tp.ConvTranspose", in_channels, out_channels, kernel_dims, padding, stride, groups, dilation
        )
        self.dtype = check_float_dtype(dtype, "tp.ConvTranspose")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_dims, self.padding, self.stride, self.groups, self.dilation = kernel, pads, strides, g, dilations
        self.weight = unset((in_channels, out_channels // g, *kernel), dtype)
        self.bias = unset((out_channels,), dtype) if bias else None

    def forward(self, input: Tensor) -> Tensor:
        """
        Args:
            input: The input, of shape ``[N, in_channels, *spatial]``.

        Returns:
            The output, of shape ``[N, out_channels, *out_spatial]``.
        """

        n, g = len(self.kernel_dims), self.groups
        # [in, out/g, *k] -> [out, in/g, *k]: swap the feature dims within each group.
        w = reshape(self.weight, (g, self.in_channels // g, self.out_channels // g, *self.kernel_dims))
        w = permute(w, (0, 2, 1) + tuple(range(3, 3 + n)))
        w = reshape(w, (self.out_channels, self.in_channels // g, *self.kernel_dims))
        pads = [
            (d * (k - 1) - p[0], d * (k - 1) - p[1]) for k, d, p in zip(self.kernel_dims, self.dilation, self.padding)
        ]
        return convolution(
            input,
            w,
            self.bias,
            (1,) * n,
            pads,
            g,
            self.dilation,
            "tp.ConvTranspose",
            self.in_channels,
            lhs_dilation=self.stride,
            flip_kernel=True,
        )
