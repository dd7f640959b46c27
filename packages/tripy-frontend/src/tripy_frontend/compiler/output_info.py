"""tp.OutputInfo: the data type and shape of one output of a compiled function (``Executable.output_infos``)."""

from __future__ import annotations

from typing import NamedTuple, Tuple

from tripy_flatir import dtypes
from tripy_frontend.export import public_api


@public_api(document_under="compile")
class OutputInfo(NamedTuple):
    """One output of an :class:`tripy.Executable`: its data type and its shape, with ``-1`` for each dim whose
    size depends on the inputs' sizes (``Executable.output_infos``).

    .. code-block:: python

        exe = tp.compile(lambda x: (x + 1, tp.sum(x, dim=1)), args=[tp.InputInfo(((1, 2, 4), 3), tp.float32)])
        assert exe.output_infos == {"output_0": tp.OutputInfo(tp.float32, (-1, 3)),
                                    "output_1": tp.OutputInfo(tp.float32, (-1,))}
    """

    dtype: dtypes.dtype
    shape: Tuple[int, ...]
