"""Multi-device fusions (doc/multidevice.md): one process per device, each
running the same FusionDefinition on its shards (SPMD), as under torchrun.

    import torch.distributed as dist
    from fuser import FusionDefinition, ParallelType
    from fuser.multidevice import DeviceMesh, shard_tensor

    dist.init_process_group("nccl")      # or "gloo"; torchrun sets the env
    mesh = DeviceMesh(list(range(dist.get_world_size())))
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1])    # global shape
        y = fd.ops.relu(x)
        fd.add_output(y)
        x.set_device_mesh(mesh)
        x.outer_split(0, mesh.size)       # rows split across the devices
        x.axis(0).parallelize(ParallelType.mesh_x)
    y_shard, = fd.execute([shard_tensor(x_full, x)])

A fusion placed on a mesh takes torch.distributed's default process group
for its collectives when it first runs; without torch.distributed a mesh of
one device runs in the one process.
"""

import torch

from . import _C
from ._C import DeviceMesh, ParallelType

_DEFAULT = object()


def use_process_group(group=_DEFAULT):
    """Hands fuser a torch.distributed process group for its collectives
    (the default group when not given; None lets go of the group fuser
    holds, e.g. before torch.distributed.destroy_process_group).
    fd.execute hands over the default group by itself when
    torch.distributed is initialized."""
    import torch.distributed as dist

    if group is _DEFAULT:
        group = dist.group.WORLD
    _C._set_process_group(group)


def _ensure_process_group():
    if _C._has_process_group():
        return
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        use_process_group()


def rank():
    """This process's rank: its device in a DeviceMesh."""
    return _C._rank()


def world_size():
    return _C._world_size()


def shard_tensor(tensor, fd_tensor):
    """This rank's shard of `tensor` (the whole, global tensor) as
    `fd_tensor` (a Tensor of a FusionDefinition) is spread over its mesh."""
    _ensure_process_group()
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"shard_tensor: expected a torch.Tensor, got {type(tensor).__name__}.")
    return _C._shard_tensor(tensor, fd_tensor._val)


__all__ = [
    "DeviceMesh",
    "ParallelType",
    "rank",
    "shard_tensor",
    "use_process_group",
    "world_size",
]
