"""What the multi-device examples share: the process group and the device.

Under torchrun (WORLD_SIZE set) each process joins torch.distributed's
default group: NCCL when every rank has a GPU of its own, else Gloo
(FUSER_EXAMPLE_BACKEND overrides). Run alone, the mesh has one device and no
group is needed. FUSER_EXAMPLE_DEVICE=cpu runs on host tensors (Gloo).
"""

import os

import torch
import torch.distributed as dist


def setup():
    """Returns (rank, world_size, device)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    wanted = os.environ.get("FUSER_EXAMPLE_DEVICE")
    use_cuda = torch.cuda.is_available() if wanted is None else wanted == "cuda"
    device = torch.device("cpu")
    if use_cuda:
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    if world > 1:
        own_gpus = use_cuda and torch.cuda.device_count() >= world
        backend = os.environ.get("FUSER_EXAMPLE_BACKEND", "nccl" if own_gpus else "gloo")
        dist.init_process_group(backend, rank=rank, world_size=world)
    return rank, world, device


def teardown():
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def assert_close(name, rank, world, got, expected, atol, rtol):
    if not torch.allclose(got.float(), expected.float(), atol=atol, rtol=rtol):
        error = (got.float() - expected.float()).abs().max().item()
        raise AssertionError(f"{name}: rank {rank} differs by {error}")
    print(f"{name}: rank {rank} of {world} matches the unsharded computation")
