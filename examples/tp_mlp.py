"""A tensor-parallel MLP (Megatron's): column-parallel linear, GELU,
row-parallel linear, then the partial sums reduce-scattered over the rows.
The fusion is written in global shapes; each rank passes its shards.

    torchrun --nproc-per-node=2 examples/tp_mlp.py   # one process per GPU
    python3 examples/tp_mlp.py                       # a mesh of one device

The result is checked against the same fusion without sharding (on the GPU;
against torch on host tensors).
"""

import torch

from _multidevice_setup import assert_close, setup, teardown
from fuser import DataType, FusionDefinition, ParallelType
from fuser.multidevice import DeviceMesh, shard_tensor


def define_mlp(fd, dtype, mesh=None):
    """x [T, E] replicated; w1 [4E, E], b1 [4E] split on the hidden axis;
    w2 [E, 4E] split on its input axis; out [T, E] split on the rows."""
    x = fd.define_tensor([-1, -1], contiguity=True, dtype=dtype)
    w1 = fd.define_tensor([-1, -1], contiguity=True, dtype=dtype)
    b1 = fd.define_tensor([-1], contiguity=True, dtype=dtype)
    w2 = fd.define_tensor([-1, -1], contiguity=True, dtype=dtype)
    h = fd.ops.linear(x, w1, b1)
    g = fd.ops.cast(fd.ops.gelu(fd.ops.cast(h, DataType.Float)), dtype)
    y = fd.ops.linear(g, w2)
    out = fd.ops.set(y)
    fd.add_output(out)
    if mesh is not None:
        for t in (x, w1, b1, w2, out):
            t.set_device_mesh(mesh)
        for t, axis in ((w1, 0), (b1, 0), (w2, 1), (out, 0)):
            t.outer_split(axis, mesh.size)
            t.axis(axis).parallelize(ParallelType.mesh_x)
    return x, w1, b1, w2


def reference(inputs, device):
    if device.type == "cuda":
        with FusionDefinition() as fd:
            define_mlp(fd, DataType.BFloat16)
        return fd.execute(inputs)[0]
    x, w1, b1, w2 = (t.float() for t in inputs)
    g = torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1))
    return torch.nn.functional.linear(g.bfloat16().float(), w2)


def main():
    rank, world, device = setup()
    mesh = DeviceMesh(list(range(world)))
    tokens, embed = 256, 128
    torch.manual_seed(0)
    full = [
        torch.randn(tokens, embed),
        torch.randn(4 * embed, embed) / embed**0.5,
        torch.randn(4 * embed),
        torch.randn(embed, 4 * embed) / (4 * embed) ** 0.5,
    ]
    full = [t.to(device=device, dtype=torch.bfloat16) for t in full]
    with FusionDefinition() as fd:
        tensors = define_mlp(fd, DataType.BFloat16, mesh)
    shards = [shard_tensor(t, fd_t) for t, fd_t in zip(full, tensors)]
    (out,) = fd.execute(shards)
    expected = reference(full, device).chunk(world, 0)[rank]
    assert out.shape == expected.shape, (out.shape, expected.shape)
    assert_close("tp_mlp", rank, world, out, expected, atol=2e-2, rtol=2e-2)
    print(f"tp_mlp: rank {rank} ran {fd.last_scheduler_types()}; {fd.last_communications()}")
    teardown()


if __name__ == "__main__":
    main()
