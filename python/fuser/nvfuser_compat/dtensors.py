"""``execute_with_dtensors``: runs a fusion defined on global shapes on the
local shards of DTensors, and wraps its outputs as DTensors again.

An output's placement is what the definition says of it: its device mesh
and the logical axis split over the mesh, or replicated when it has a mesh
and no split axis. fuser works out the placements of the outputs a
definition leaves unplaced while it runs the fusion (sharding propagation,
doc/multidevice.md §3), on its own copy of the fusion, which the Python API
does not expose; such an output is an error here, which names the fix.
"""

import torch

from fuser import FuserError, ParallelType


def _split_axis(tensor):
    """The axis of `tensor`'s shards that a mesh_x (DIDx) loop axis splits,
    or None when none does (replicated). A DIDx axis is the outer part of an
    outer split of a logical axis (doc/multidevice.md §2), which the loop
    domain holds at that axis's place: the split axis is the number of
    non-reduction loop axes before it."""
    kept = 0
    for iter_domain in tensor.loop_domain():
        if iter_domain.parallel_type == ParallelType.mesh_x:
            return kept
        kept += not iter_domain.is_reduction()
    if any(i.parallel_type == ParallelType.mesh_x for i in tensor.allocation_domain()):
        raise FuserError(
            f"execute_with_dtensors: {tensor.name} is split over its mesh in its allocation "
            "domain only; split its loop domain (outer_split and parallelize) so that the "
            "split axis can be read."
        )
    return None


def _placement_of(fd, position, tensor):
    from torch.distributed.tensor import Replicate, Shard

    mesh = tensor.device_mesh()
    if mesh.size == 0:
        raise FuserError(
            f"execute_with_dtensors: output {position} ({tensor.name}) has no device mesh "
            "in the definition, so its placement is only known inside fuser's run, which "
            "the Python API does not report. Place it in the definition: "
            f"{tensor.name}.set_device_mesh(mesh), and for a split output also "
            f"{tensor.name}.outer_split(axis, mesh.size) and "
            f"{tensor.name}.axis(axis).parallelize(ParallelType.mesh_x)."
        )
    axis = _split_axis(tensor)
    return list(mesh.devices), Replicate() if axis is None else Shard(axis)


def execute_with_dtensors(fd, in_dtensors):
    """Runs `fd` on the local tensors of `in_dtensors` (DTensors on one
    device mesh, in input order) and returns its outputs as DTensors."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor import DTensor

    in_dtensors = list(in_dtensors)
    for i, value in enumerate(in_dtensors):
        if not isinstance(value, DTensor):
            raise FuserError(
                f"execute_with_dtensors: input {i} is a {type(value).__name__}; every "
                "input must be a DTensor."
            )
    meshes = {d.device_mesh for d in in_dtensors}
    if len(meshes) > 1:
        raise FuserError(
            "execute_with_dtensors: the inputs are on different device meshes "
            f"({', '.join(str(m) for m in meshes)}); fuser takes DTensors of one mesh."
        )
    input_mesh = in_dtensors[0].device_mesh if in_dtensors else None
    outputs = fd.execute([d.to_local() for d in in_dtensors])
    returned = [fd.outputs()[k] for k in fd._returned_outputs]
    results = []
    for position, (local, tensor) in enumerate(zip(outputs, returned)):
        devices, placement = _placement_of(fd, position, tensor)
        if input_mesh is not None and input_mesh.mesh.flatten().tolist() == devices:
            mesh = input_mesh
        else:
            mesh = DeviceMesh("cuda", torch.tensor(devices))
        results.append(DTensor.from_local(local, mesh, [placement]))
    return results
