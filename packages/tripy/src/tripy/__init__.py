"""tripy: a debuggable, Pythonic, functional tensor library for inference.

    import tripy as tp
    out = tp.tanh(tp.full((2, 3), value=0.5))
    print(out)

This package re-exports the public API that ``tripy_frontend`` registers (``@public_api``), name by name, so
that editors and type checkers see each name's own type (``tp.relu(x)`` is a ``Tensor``) and report a
misspelled one. ``tests/frontend/test_public_api_types.py`` checks that this list and the registry agree.
"""

import difflib as _difflib
import importlib.metadata as _metadata
import typing as _typing

from tripy_flatir.dtypes import (
    bfloat16 as bfloat16,
    bool as bool,
    dtype as dtype,
    float16 as float16,
    float32 as float32,
    float8 as float8,
    floating as floating,
    int32 as int32,
    int4 as int4,
    int64 as int64,
    int8 as int8,
    integer as integer,
)
from tripy_flatir.exceptions import TripyException as TripyException, TripyWarning as TripyWarning
from tripy_flatir.logging import logger as logger
from tripy_frontend import config as config, types as types
from tripy_frontend.compiler.compile import compile as compile
from tripy_frontend.compiler.dimension_input_info import DimensionInputInfo as DimensionInputInfo
from tripy_frontend.compiler.executable import Executable as Executable
from tripy_frontend.compiler.input_info import Bounds as Bounds, InputInfo as InputInfo
from tripy_frontend.compiler.named_dimension import NamedDimension as NamedDimension
from tripy_frontend.compiler.output_info import OutputInfo as OutputInfo
from tripy_frontend.compiler.stream import Stream as Stream, default_stream as default_stream
from tripy_frontend.device import device as device
from tripy_frontend.tensor import DimensionSize as DimensionSize
from tripy_frontend.distributed import initialize_distributed as initialize_distributed
from tripy_frontend.nn.batchnorm import BatchNorm as BatchNorm
from tripy_frontend.nn.conv import Conv as Conv
from tripy_frontend.nn.conv_transpose import ConvTranspose as ConvTranspose
from tripy_frontend.nn.embedding import Embedding as Embedding
from tripy_frontend.nn.groupnorm import GroupNorm as GroupNorm
from tripy_frontend.nn.instancenorm import InstanceNorm as InstanceNorm
from tripy_frontend.nn.layernorm import LayerNorm as LayerNorm
from tripy_frontend.nn.linear import Linear as Linear
from tripy_frontend.nn.module import Module as Module
from tripy_frontend.nn.sequential import Sequential as Sequential
from tripy_frontend.ops.abs import abs as abs
from tripy_frontend.ops.all import all as all
from tripy_frontend.ops.allclose import allclose as allclose
from tripy_frontend.ops.any import any as any
from tripy_frontend.ops.arange import arange as arange
from tripy_frontend.ops.argmax import argmax as argmax
from tripy_frontend.ops.argmin import argmin as argmin
from tripy_frontend.ops.avgpool import avgpool as avgpool
from tripy_frontend.ops.cast import cast as cast
from tripy_frontend.ops.concatenate import concatenate as concatenate
from tripy_frontend.ops.copy import copy as copy
from tripy_frontend.ops.cos import cos as cos
from tripy_frontend.ops.cumsum import cumsum as cumsum
from tripy_frontend.ops.dequantize import dequantize as dequantize
from tripy_frontend.ops.equal import equal as equal
from tripy_frontend.ops.exp import exp as exp
from tripy_frontend.ops.expand import expand as expand
from tripy_frontend.ops.flatten import flatten as flatten
from tripy_frontend.ops.flip import flip as flip
from tripy_frontend.ops.full import full as full, full_like as full_like
from tripy_frontend.ops.gather import gather as gather
from tripy_frontend.ops.gelu import gelu as gelu
from tripy_frontend.ops.iota import iota as iota, iota_like as iota_like
from tripy_frontend.ops.log import log as log
from tripy_frontend.ops.masked_fill import masked_fill as masked_fill
from tripy_frontend.ops.max import max as max
from tripy_frontend.ops.maximum import maximum as maximum
from tripy_frontend.ops.maxpool import maxpool as maxpool
from tripy_frontend.ops.mean import mean as mean
from tripy_frontend.ops.min import min as min
from tripy_frontend.ops.minimum import minimum as minimum
from tripy_frontend.ops.ones import ones as ones, ones_like as ones_like
from tripy_frontend.ops.outer import outer as outer
from tripy_frontend.ops.pad import pad as pad
from tripy_frontend.ops.permute import permute as permute
from tripy_frontend.ops.plugin import plugin as plugin
from tripy_frontend.ops.prod import prod as prod
from tripy_frontend.ops.quantize import quantize as quantize
from tripy_frontend.ops.relu import relu as relu
from tripy_frontend.ops.repeat import repeat as repeat
from tripy_frontend.ops.reshape import reshape as reshape
from tripy_frontend.ops.resize import resize as resize
from tripy_frontend.ops.rsqrt import rsqrt as rsqrt
from tripy_frontend.ops.shard import shard as shard
from tripy_frontend.ops.sigmoid import sigmoid as sigmoid
from tripy_frontend.ops.silu import silu as silu
from tripy_frontend.ops.sin import sin as sin
from tripy_frontend.ops.softmax import softmax as softmax
from tripy_frontend.ops.split import split as split
from tripy_frontend.ops.sqrt import sqrt as sqrt
from tripy_frontend.ops.squeeze import squeeze as squeeze
from tripy_frontend.ops.stack import stack as stack
from tripy_frontend.ops.sum import sum as sum
from tripy_frontend.ops.tanh import tanh as tanh
from tripy_frontend.ops.topk import topk as topk
from tripy_frontend.ops.transpose import transpose as transpose
from tripy_frontend.ops.tril import tril as tril
from tripy_frontend.ops.triu import triu as triu
from tripy_frontend.ops.unsqueeze import unsqueeze as unsqueeze
from tripy_frontend.ops.var import var as var
from tripy_frontend.ops.where import where as where
from tripy_frontend.ops.zeros import zeros as zeros, zeros_like as zeros_like
from tripy_frontend.profile import profile as profile
from tripy_frontend.sharding import Mesh as Mesh, Sharding as Sharding
from tripy_frontend.tensor import Tensor as Tensor
from tripy_frontend.visualize import visualize as visualize
from tripy_frontend import PUBLIC_API as _PUBLIC_API
from tripy_frontend.public_names import OTHER_LIBRARY_NAMES as _OTHER_LIBRARY_NAMES
from tripy_importers import ImportedModule as ImportedModule, from_onnx as from_onnx, from_torch as from_torch

__all__ = sorted(_PUBLIC_API)  # (the importers' entry points register themselves in it too)
# The version is the distribution's (its pyproject.toml), read back at run time: one source.
__version__ = _metadata.version("tripy-inference")

if not _typing.TYPE_CHECKING:  # (hidden from type checkers, which would otherwise accept any name as tripy's)

    def __getattr__(name: str) -> _typing.Any:
        close = _difflib.get_close_matches(name, __all__, n=1)
        hint = f" Did you mean: 'tripy.{close[0]}'?" if close else ""
        if name in _OTHER_LIBRARY_NAMES:  # (another library's spelling: what to write in tripy, not a look-alike)
            hint = f" {_OTHER_LIBRARY_NAMES[name]}"
        raise AttributeError(f"Module: 'tripy' does not have attribute: '{name}'.{hint}")


def __dir__() -> list:
    return __all__
