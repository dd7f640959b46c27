import numpy as np

from tripy_backend import memory
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_trace.ops.sharded_storage import ShardedStorage
from tripy_trace.ops.sharding_constraint import ShardingConstraint
from tripy_trace.ops.storage import Storage
from tripy_trace.tensor import TraceTensor
from tripy_frontend.export import RETURN, dtype_rules, public_api
from tripy_frontend.ops.common import ALL_TYPES
from tripy_frontend.ops.getitem import _depends_on_runtime_inputs
from tripy_frontend.sharding import Sharding
from tripy_frontend.tensor import Tensor


@public_api(document_under="sharding")
@dtype_rules({"input": "T1", RETURN: "T1"}, {"T1": ALL_TYPES})
def shard(input: Tensor, sharding: Sharding) -> Tensor:
    """A copy of `input` split across the devices of a mesh as `sharding` says: each device holds its piece.
    A function compiled with :func:`tripy.compile` that uses the result (a weight, say) becomes one program
    for the whole mesh, each device computing with its piece (see the *Sharding across devices* guide).
    ``np.from_dlpack`` and ``tolist()`` gather the pieces; eager ops refuse a tensor split over several devices.
    On a mesh of one device the result is an ordinary tensor.

    Inside a function being compiled, on a tensor computed from its inputs, it constrains the program instead:
    that intermediate tensor is split so (XLA's partitioner moves data to make it so), e.g. to keep attention's
    heads on the devices that hold their weights.

    Args:
        input: The tensor (evaluated now, unless it is computed from a compiled function's inputs).
        sharding: How to split it: a mesh axis (or None) for each dim.

    .. code-block:: python

        mesh = tp.Mesh((1,), ("model",))
        w = tp.shard(tp.ones((4, 6)), tp.Sharding(mesh, (None, "model")))
        assert np.from_dlpack(w).shape == (4, 6)
    """
    where = _stack.capture()
    shape = tuple(input.trace_tensor.shape)
    if _depends_on_runtime_inputs(input):  # inside a function being compiled: a constraint on the program
        if -1 in shape:
            raise_error(
                f"tripy.shard: a tensor of a sharded program needs a static shape, but this one's is {list(shape)}.",
                where,
                ["Sharded programs are compiled for one shape."],
                [input.stack_info],
            )
        layout = sharding._layout(shape, "tripy.shard", where)
        return Tensor._from_op(ShardingConstraint, [input], layout=layout)  # type: ignore[no-any-return]
    if -1 in shape:
        shape = tuple(input._buffer().shape)
    layout = sharding._layout(shape, "tripy.shard", where)
    data = np.array(memory.to_numpy(input._buffer()), copy=True)
    device = input.trace_tensor.device
    if layout.num_devices == 1:
        op = Storage.build(
            [], where, data=memory.to_device(data, device), shape=shape, dtype=input.dtype, device=device
        )
        return Tensor._from_trace_tensor(op.outputs[0])
    out = TraceTensor(None, where, shape, input.dtype, device)
    out.producer = ShardedStorage(out, memory.to_devices(data, layout, device), shape, input.dtype, device, layout)
    return Tensor._from_trace_tensor(out)
