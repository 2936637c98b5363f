"""Sequence parallelism around a tensor-parallel MLP (Megatron-SP): the
tokens are split across the devices for the layer norm, gathered for the
column-parallel linear, and the row-parallel linear's partial sums are
reduce-scattered back to split tokens, plus the residual.

    torchrun --nproc-per-node=2 examples/sequence_parallel_layer_norm.py
    python3 examples/sequence_parallel_layer_norm.py
"""

import torch

from _multidevice_setup import assert_close, setup, teardown
from fuser import DataType, FusionDefinition, ParallelType
from fuser.multidevice import DeviceMesh, shard_tensor


def define(fd, embed, mesh=None):
    x = fd.define_tensor([-1, -1], contiguity=True, dtype=DataType.Float)
    w1 = fd.define_tensor([-1, -1], contiguity=True, dtype=DataType.Float)
    w2 = fd.define_tensor([-1, -1], contiguity=True, dtype=DataType.Float)
    ln = fd.ops.layer_norm(x, [embed])
    gathered = fd.ops.set(ln)  # the tokens gathered for the linear
    h = fd.ops.relu(fd.ops.linear(gathered, w1))
    y = fd.ops.set(fd.ops.linear(h, w2))  # reduce-scattered over the tokens
    out = fd.ops.add(y, x)
    fd.add_output(out)
    if mesh is not None:
        for t in (x, w1, w2, gathered, y):
            t.set_device_mesh(mesh)
        for t, axis in ((x, 0), (w1, 0), (w2, 1), (y, 0)):
            t.outer_split(axis, mesh.size)
            t.axis(axis).parallelize(ParallelType.mesh_x)
    return x, w1, w2


def main():
    rank, world, device = setup()
    mesh = DeviceMesh(list(range(world)))
    torch.manual_seed(1)
    tokens, embed = 64, 32
    full = [
        torch.randn(tokens, embed),
        torch.randn(4 * embed, embed) / embed**0.5,
        torch.randn(embed, 4 * embed) / (4 * embed) ** 0.5,
    ]
    full = [t.to(device) for t in full]
    with FusionDefinition() as fd:
        tensors = define(fd, embed, mesh)
    (out,) = fd.execute([shard_tensor(t, fd_t) for t, fd_t in zip(full, tensors)])
    x, w1, w2 = full
    ln = torch.nn.functional.layer_norm(x, [embed])
    expected = torch.nn.functional.linear(torch.relu(torch.nn.functional.linear(ln, w1)), w2) + x
    assert_close(
        "sequence_parallel_layer_norm",
        rank,
        world,
        out,
        expected.chunk(world, 0)[rank],
        atol=1e-4,
        rtol=1e-4,
    )
    print(f"sequence_parallel_layer_norm: {fd.last_communications()}")
    teardown()


if __name__ == "__main__":
    main()
