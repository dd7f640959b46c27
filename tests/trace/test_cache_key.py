"""The structural key eager mode caches compiled programs under (tripy_trace.trace.signature).

Equal keys must mean the same program: graphs that differ in op kind, attributes, wiring, input
shapes/dtypes/devices or constant values get different keys. Graphs that differ only in which
tensors (which data) they are built from get the same key.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np
import pytest

from tripy_flatir import dtypes
from tripy_flatir.device import CPU, device
from tripy_trace.ops import base
from tripy_trace.ops.base import intern_key
from tripy_trace.ops.binary_elementwise import BinaryElementwise, Kind as BinaryKind
from tripy_trace.ops.constant import Constant
from tripy_trace.ops.matmul import MatrixMultiply
from tripy_trace.ops.reduce import Reduce
from tripy_trace.ops.storage import Storage
from tripy_trace.ops.topk import TopK
from tripy_flatir.ops.exp import ExpOp
from tripy_flatir.ops.tanh import TanhOp
from tripy_trace.ops.unary_elementwise import UnaryElementwise
from tripy_trace.tensor import TraceTensor
from tripy_trace.trace import Trace, signature, topological_order


def _input(shape: Tuple[int, ...] = (4, 4), dtype: dtypes.dtype = dtypes.float32, dev: device = CPU) -> TraceTensor:
    return Storage.build([], None, data=object(), shape=shape, dtype=dtype, device=dev).outputs[0]


def _bin(kind: BinaryKind, a: TraceTensor, b: TraceTensor) -> TraceTensor:
    return BinaryElementwise.build([a, b], None, kind=kind).outputs[0]


def _un(flat_op: type, a: TraceTensor) -> TraceTensor:
    return UnaryElementwise.build([a], None, flat_op=flat_op, spelling=flat_op.__name__).outputs[0]


def _const(value: float, dtype: dtypes.dtype = dtypes.float32) -> TraceTensor:
    return Constant.build([], None, value=np.asarray(value, dtype=dtype.numpy_dtype), dtype=dtype, device=CPU).outputs[
        0
    ]


def _scalar(value: float, dtype: dtypes.dtype = dtypes.float32) -> TraceTensor:
    return Constant.scalar(value, dtype, CPU)


def key(*outputs: TraceTensor) -> tuple:
    return signature(list(outputs))[0]


def expression(x: TraceTensor, y: TraceTensor) -> TraceTensor:
    """The shape of the benchmark's expression: a matmul and elementwise ops with scalars."""
    z = MatrixMultiply.build([x, y], None).outputs[0]
    z = _bin(BinaryKind.SUM, z, x)
    z = _bin(BinaryKind.MUL, z, _scalar(0.5))
    z = _un(TanhOp, z)
    return _bin(BinaryKind.MUL, z, y)


def test_same_structure_same_key():
    a, b = expression(_input(), _input()), expression(_input(), _input())
    assert key(a) == key(b)
    assert hash(key(a)) == hash(key(b))
    assert key(a) == Trace([a]).cache_key()[: len(key(a))]


def test_key_is_hashable_and_flat():
    k = key(expression(_input(), _input()))
    assert all(isinstance(p, int) for p in k)


@pytest.mark.parametrize(
    "variant",
    [
        "op kind",
        "attribute",
        "wiring",
        "constant",
        "shape",
        "dtype",
        "device",
        "operand order",
        "shared input",
        "extra op",
    ],
)
def test_different_graphs_get_different_keys(variant):
    x, y = _input(), _input()
    reference = _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, x, y), x)
    u, v = _input(), _input()
    other = {
        "op kind": lambda: _bin(BinaryKind.SUB, _bin(BinaryKind.MUL, u, v), u),
        "attribute": lambda: _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, u, v), u),  # (replaced below)
        "wiring": lambda: _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, u, v), v),  # same ops, other wiring
        "constant": lambda: _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, u, v), _scalar(2.0)),
        "shape": lambda: _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, _input((4, 5)), _input((4, 5))), _input((4, 5))),
        "dtype": lambda: _bin(
            BinaryKind.SUM,
            _bin(BinaryKind.MUL, _input(dtype=dtypes.float16), _input(dtype=dtypes.float16)),
            _input(dtype=dtypes.float16),
        ),
        "device": lambda: _bin(
            BinaryKind.SUM,
            _bin(BinaryKind.MUL, _input(dev=device("gpu:1")), _input(dev=device("gpu:1"))),
            _input(dev=device("gpu:1")),
        ),
        "operand order": lambda: _bin(BinaryKind.SUM, u, _bin(BinaryKind.MUL, u, v)),
        "shared input": lambda: _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, u, u), u),  # one input, not two
        "extra op": lambda: _un(ExpOp, _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, u, v), u)),
    }[variant]()
    if variant == "attribute":
        reference = Reduce.build([x], None, kind="sum", dims=(0,), keepdim=False).outputs[0]
        other = Reduce.build([u], None, kind="sum", dims=(1,), keepdim=False).outputs[0]
    assert key(reference) != key(other)


def test_same_ops_different_wiring():
    """(x * y) + x and (x * y) + y: the same ops in the same order, and equally shaped inputs."""
    x, y = _input(), _input()
    s = _bin(BinaryKind.MUL, x, y)
    sx, sy = _bin(BinaryKind.SUM, s, x), _bin(BinaryKind.SUM, s, y)
    assert key(sx) != key(sy)


def test_same_wiring_different_constants():
    x = _input()
    keys = {key(_bin(BinaryKind.SUM, x, _const(v))) for v in (1.0, 2.0, 0.0, -0.0)}
    assert len(keys) == 4  # -0.0 is not 0.0
    # A constant's dtype is part of its key, and so is a constant array's shape.
    assert key(_const(1.0, dtypes.float32)) != key(_const(1.0, dtypes.float16))
    assert key(_const([1.0, 2.0])) != key(_const([[1.0, 2.0]]))
    assert key(_const(float("nan"))) == key(_const(float("nan")))  # same bytes: the same program


def test_different_dtype_same_values():
    assert key(_un(TanhOp, _input(dtype=dtypes.float32))) != key(_un(TanhOp, _input(dtype=dtypes.float16)))


def test_which_output_of_a_multi_output_op():
    x = _input((4, 4))
    values, indices = TopK.build([x], None, num_outputs=2, k=2, dim=1).outputs
    x2 = _input((4, 4))
    values2, indices2 = TopK.build([x2], None, num_outputs=2, k=2, dim=1).outputs
    assert key(values) == key(values2)
    assert key(values) != key(indices2)
    assert key(values, indices) == key(values2, indices2)
    assert key(values, indices) != key(indices2, values2)


def test_outputs_are_part_of_the_key():
    x, y = _input(), _input()
    a, b = _un(TanhOp, x), _un(ExpOp, y)
    assert key(a, b) != key(b, a)
    assert key(a, a) != key(a)


def test_program_inputs_follow_the_key():
    """The inputs come in the order the key implies, whatever order the tensors were made in, and a
    Trace given them in that order is the graph the key describes."""
    y, x = _input(), _input()  # made in the other order
    out = _bin(BinaryKind.SUB, x, _un(ExpOp, y))
    k, inputs = signature([out])
    assert inputs == [x, y]
    trace = Trace([out], inputs)
    assert trace.inputs == [x, y]
    assert trace.cache_key()[: len(k)] == k
    assert Trace([out], [y, x]).cache_key() != trace.cache_key()  # the input order is part of a Trace's key


def test_topological_order_is_build_order():
    x, y = _input(), _input()
    a = _un(TanhOp, x)
    b = _un(ExpOp, y)
    c = _bin(BinaryKind.SUM, b, a)
    ops = topological_order([c])
    assert ops == [x.producer, y.producer, a.producer, b.producer, c.producer]
    assert Trace([c]).inputs == [x, y]


def test_interned_ids_are_never_reused(monkeypatch):
    """Clearing the intern table (to bound it) must not give an old id to a new description."""
    monkeypatch.setattr(base, "_KEY_IDS", {})  # (a table of its own, restored afterwards)
    monkeypatch.setattr(base, "MAX_INTERNED_KEYS", 8)
    seen = {}
    for i in range(40):
        kid = intern_key(("test_interned_ids_are_never_reused", i))
        assert kid not in seen.values()
        seen[i] = kid
    assert intern_key(("test_interned_ids_are_never_reused", 39)) == seen[39]


def test_scalar_constants_are_read_only_leaves_of_their_own():
    a, b = _scalar(3.0), _scalar(3.0)
    assert a is not b and a.stack_info is None  # one leaf per use...
    assert a.producer.value is b.producer.value  # ...sharing the number's array (made once)
    with pytest.raises(ValueError):
        a.producer.value[...] = 4.0  # its value cannot be changed
    assert a.shape == () and a.dtype is dtypes.float32 and a.device == CPU
    assert key(a) == key(_scalar(4.0)) != key(_const(3.0))  # a number is an argument, a constant a literal
    assert _scalar(0.0).producer.value is not _scalar(0.0).producer.value  # (0.0 == -0.0: never shared)
    # A graph that uses the same number twice (x * 0.5 + 0.5) is wired as one with two different numbers,
    # so a loop whose numbers are sometimes equal still runs one program.
    x = _input()
    twice = _bin(BinaryKind.SUM, _bin(BinaryKind.MUL, x, _scalar(0.5)), _scalar(0.5))
    assert key(twice) == key(_bin(BinaryKind.SUM, _bin(BinaryKind.MUL, x, _scalar(0.5)), _scalar(0.25)))


def test_numbers_are_eager_program_inputs_keyed_by_dtype_not_value():
    """A Python number next to a tensor is an input of the eager program (its value is data), so graphs that
    differ only in the numbers' values share a key; their dtypes and devices still tell programs apart."""
    x = _input()
    keys = {key(_bin(BinaryKind.SUM, x, _scalar(v))) for v in (1.0, 2.0, 0.0, -0.0, float("nan"))}
    assert len(keys) == 1
    assert key(_scalar(1.0, dtypes.float32)) != key(_scalar(1.0, dtypes.float16))
    assert key(_scalar(1.0)) != key(Constant.scalar(1.0, dtypes.float32, device("gpu:0")))
    y = _bin(BinaryKind.MUL, x, _scalar(0.75))
    k, inputs = signature([y])
    assert [t.producer for t in inputs] == [x.producer, y.producer.inputs[1].producer]
    # Lowered with those inputs, the number is an argument of the function; without them (tripy.compile's
    # trace), a literal.
    as_argument = Trace([y], inputs).to_flat_ir()
    as_literal = Trace([y]).to_flat_ir()
    assert len(as_argument.inputs) == 2 and len(as_literal.inputs) == 1
    assert "0.75" in str(as_literal) and "0.75" not in str(as_argument)
