"""The seed's sharded input on several devices: logical [M, N], allocation
[DIDx{D}, M/D, N] with the loop domain untouched. Each rank passes its
[M/D, N] rows; fuser propagates the split to the loops that read it, so
relu runs on each shard, and the rows are gathered for the output.

    torchrun --nproc-per-node=2 examples/sharded_input.py
    python3 examples/sharded_input.py
"""

import torch

from _multidevice_setup import assert_close, setup, teardown
from fuser import DataType, FusionDefinition, ParallelType
from fuser.multidevice import DeviceMesh, shard_tensor


def main():
    rank, world, device = setup()
    mesh = DeviceMesh(list(range(world)))
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1], contiguity=True, dtype=DataType.Float)
        y = fd.ops.relu(x)
        gathered = fd.ops.set(y)
        fd.add_output(y)
        fd.add_output(gathered)
        x.set_device_mesh(mesh)
        gathered.set_device_mesh(mesh)
        # The allocation alone is split: [DIDx{D}, M/D, N].
        did, local = fd.split(x.axis(0), mesh.size, inner_split=False)
        did.parallelize(ParallelType.mesh_x)
        x.set_allocation_domain([did, local, x.axis(1)], contiguity=True)
    torch.manual_seed(0)
    full = torch.randn(8 * world, 5, device=device)
    shard, whole = fd.execute([shard_tensor(full, x)])
    assert_close("sharded_input", rank, world, shard, torch.relu(full).chunk(world)[rank], 0, 0)
    assert_close("sharded_input (gathered)", rank, world, whole, torch.relu(full), 0, 0)
    print(f"sharded_input: {fd.last_communications()}")
    teardown()


if __name__ == "__main__":
    main()
