"""``nvfuser_direct.multidevice``: fuser.multidevice with nvFuser's
DeviceMesh constructor, which takes the ranks as a 1-D torch.Tensor (as
``DTensor.device_mesh.mesh`` holds them) as well as a list."""

import torch

from fuser import FuserError, _C
from fuser.multidevice import (  # noqa: F401 - re-exported as nvFuser's module has them
    ParallelType,
    rank,
    shard_tensor,
    use_process_group,
    world_size,
)


class DeviceMesh(_C.DeviceMesh):
    """fuser's DeviceMesh, made from a list of ranks or a 1-D tensor of them."""

    def __init__(self, devices):
        if isinstance(devices, torch.Tensor):
            if devices.dim() != 1 or devices.is_floating_point() or devices.is_complex():
                raise FuserError(
                    "DeviceMesh: expected the ranks as a 1-D integer tensor (fuser's meshes "
                    f"are one-dimensional); got a {devices.dim()}-D {devices.dtype} tensor."
                )
            devices = devices.tolist()
        super().__init__(list(devices))


__all__ = [
    "DeviceMesh",
    "ParallelType",
    "rank",
    "shard_tensor",
    "use_process_group",
    "world_size",
]
