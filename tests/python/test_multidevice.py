"""Multi-device fusions from Python (doc/multidevice.md): two processes with
the Gloo backend on host tensors (CI), a mesh of one device in one process,
and on a GPU the same with device tensors, two processes sharing the one
GPU through Gloo. Every run is bounded in time: a rank that fails must not
leave the others waiting."""

import os
import socket
import subprocess
import sys
import time

import pytest
import torch
import torch.multiprocessing as mp

from fuser import DataType, FuserError, FusionDefinition, ParallelType
from fuser.multidevice import DeviceMesh, shard_tensor
from helpers import assert_round_trip, requires_gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, world, port, fn):
    import torch.distributed as dist

    os.environ["FUSER_COMM_TIMEOUT_S"] = "20"
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        fn(rank, world)
    finally:
        # fuser only watches the group: destroying it needs no call to fuser.
        dist.destroy_process_group()


def run_ranks(fn, world=2, timeout=120):
    """Runs fn(rank, world) in `world` processes joined by a Gloo group; a
    failure on any rank fails the test with that rank's traceback."""
    context = mp.start_processes(
        _worker, args=(world, _free_port(), fn), nprocs=world, join=False, start_method="spawn"
    )
    deadline = time.monotonic() + timeout
    while not context.join(timeout=1):
        if time.monotonic() > deadline:
            for process in context.processes:
                process.kill()
            pytest.fail(f"the ranks did not finish within {timeout} s")


def _split(t, axis, mesh):
    t.set_device_mesh(mesh)
    t.outer_split(axis, mesh.size)
    t.axis(axis).parallelize(ParallelType.mesh_x)


def _gathers_and_sums(world, device="cpu"):
    """(fd, inputs builder, reference) of a fusion with one of each collective."""
    mesh = DeviceMesh(list(range(world)))
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1])  # split on the rows
        r = fd.define_tensor([-1, -1])  # replicated
        gathered = fd.ops.set(x)  # allgather
        column_sums = fd.ops.sum(x, [0])  # partial, then allreduce
        rows = fd.ops.sum(fd.ops.mul(x, x), [1])  # split with x
        scattered = fd.ops.add(x, r)  # r cut to each rank's rows
        moved = fd.ops.set(x)  # split on the columns: all-to-all
        partial = fd.ops.sum(fd.ops.relu(x), [0])
        reduce_scattered = fd.ops.set(partial)
        for t in (gathered, column_sums, rows, scattered, moved, reduce_scattered):
            fd.add_output(t)
        _split(x, 0, mesh)
        r.set_device_mesh(mesh)
        gathered.set_device_mesh(mesh)
        _split(moved, 1, mesh)
        _split(reduce_scattered, 0, mesh)
    torch.manual_seed(0)
    X = torch.randn(4 * world, 2 * world, device=device)
    R = torch.randn(4 * world, 2 * world, device=device)

    def reference(rank):
        return [
            X,
            X.sum(0),
            (X * X).sum(1).chunk(world)[rank],
            (X + R).chunk(world)[rank],
            X.chunk(world, 1)[rank],
            torch.relu(X).sum(0).chunk(world)[rank],
        ]

    return fd, [shard_tensor(X, x), R], reference


def _check_collectives(rank, world):
    fd, inputs, reference = _gathers_and_sums(world)
    outputs = fd.execute(inputs)
    for i, (got, expected) in enumerate(zip(outputs, reference(rank))):
        assert got.shape == expected.shape, (i, got.shape, expected.shape)
        assert torch.allclose(got, expected, atol=1e-5), (i, rank)
    kinds = sorted(c.split(" ")[0] for c in fd.last_communications())
    assert kinds == ["AllToAll", "Allgather", "Allreduce", "ReduceScatter", "Scatter"], kinds
    # A second run reuses the stages.
    outputs = fd.execute(inputs)
    assert torch.allclose(outputs[1], reference(rank)[1], atol=1e-5)


def test_collectives_between_two_processes_on_host_tensors():
    run_ranks(_check_collectives)


def _check_broadcast(rank, world):
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1])
        y = fd.ops.set(x)
        fd.add_output(y)
        x.set_device_mesh(DeviceMesh([world - 1]))  # lives on the last rank
        y.set_device_mesh(DeviceMesh(list(range(world))))
    (out,) = fd.execute([torch.full((3,), float(rank))])
    assert torch.equal(out, torch.full((3,), float(world - 1))), out
    assert [c.split(" ")[0] for c in fd.last_communications()] == ["Broadcast"]


def test_broadcast_from_one_device_between_two_processes():
    run_ranks(_check_broadcast)


def _check_wrong_shard_size(rank, world):
    mesh = DeviceMesh(list(range(world)))
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.relu(x))
        _split(x, 0, mesh)
    shard = torch.randn(4 if rank == 0 else 3, 5)
    with pytest.raises(FuserError, match="shards of different sizes: rank 0 passed \\(4, 5\\)"):
        fd.execute([shard])
    # Everything stays usable.
    (out,) = fd.execute([torch.ones(2, 5)])
    assert torch.equal(out, torch.ones(2, 5))


def test_shards_of_different_sizes_fail_on_every_rank():
    run_ranks(_check_wrong_shard_size)


def _check_disagreeing_fusions(rank, world):
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1])
        fd.add_output(fd.ops.relu(x) if rank == 0 else fd.ops.neg(x))
        x.set_device_mesh(DeviceMesh(list(range(world))))
    with pytest.raises(FuserError, match="The ranks disagree on the fusion: rank\\(s\\) 1"):
        fd.execute([torch.randn(3)])


def test_ranks_disagreeing_on_the_fusion_fail_on_every_rank():
    run_ranks(_check_disagreeing_fusions)


def _check_absent_rank_times_out(rank, world):
    if rank != 0:
        time.sleep(8)  # runs no fusion: rank 0's collectives find no partner
        return
    os.environ["FUSER_COMM_TIMEOUT_S"] = "2"
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1])
        fd.add_output(fd.ops.relu(x))
        x.set_device_mesh(DeviceMesh(list(range(world))))
    start = time.monotonic()
    with pytest.raises(FuserError, match="did not complete within 2 s|collective .* failed"):
        fd.execute([torch.randn(3)])
    assert time.monotonic() - start < 6


def test_a_rank_that_runs_nothing_is_an_error_after_the_timeout():
    run_ranks(_check_absent_rank_times_out)


def _check_mesh_too_large(rank, world):
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1])
        fd.add_output(fd.ops.relu(x))
        _split(x, 0, DeviceMesh(list(range(world + 1))))
    with pytest.raises(FuserError, match=f"the process group has {world} rank\\(s\\)"):
        fd.execute([torch.randn(3)])


def test_mesh_larger_than_the_world_fails_on_every_rank():
    run_ranks(_check_mesh_too_large)


def run_example(name, nproc, device):
    import fuser

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(p) for p in fuser.__path__] + [env.get("PYTHONPATH", "")]
    )
    env["FUSER_EXAMPLE_DEVICE"] = device
    env["FUSER_EXAMPLE_BACKEND"] = "gloo"
    env["FUSER_COMM_TIMEOUT_S"] = "60"
    command = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}"]
    command += [f"--master-port={_free_port()}", os.path.join(ROOT, "examples", name)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.parametrize(
    "example,kinds",
    [
        ("tp_mlp.py", ["ReduceScatter"]),
        ("sequence_parallel_layer_norm.py", ["Allgather", "ReduceScatter"]),
        ("sharded_input.py", ["Allgather"]),
    ],
)
def test_examples_on_two_processes_match_the_unsharded_computation(example, kinds):
    out = run_example(example, 2, "cpu")
    name = example[:-3]
    for rank in range(2):
        assert f"{name}: rank {rank} of 2 matches the unsharded computation" in out, out
    for kind in kinds:
        assert f"{kind} on DeviceMesh{{0 1}}" in out, out


def test_one_device_mesh_needs_no_process_group():
    fd, inputs, reference = _gathers_and_sums(1)
    outputs = fd.execute(inputs)
    for got, expected in zip(outputs, reference(0)):
        assert torch.allclose(got, expected, atol=1e-5)
    assert len(fd.last_communications()) == 5


def test_sharding_calls_print_and_round_trip():
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.relu(x))
        _split(x, 1, DeviceMesh([0]))
    text = str(fd)
    assert "from fuser.multidevice import DeviceMesh" in text
    assert "T0.set_device_mesh(DeviceMesh([0]))" in text
    assert "T0.outer_split(1, 1)" in text
    assert_round_trip(fd)


def test_bad_sharding_calls_are_clear_errors():
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1])
        fd.add_output(fd.ops.relu(x))
        with pytest.raises(TypeError, match="expected a fuser.multidevice.DeviceMesh"):
            x.set_device_mesh([0, 1])
        with pytest.raises(FuserError, match="axis 2 is out of range"):
            x.outer_split(2, 2)
    with pytest.raises(FuserError, match="lists device 1 twice"):
        DeviceMesh([1, 1])


@requires_gpu
def test_one_device_mesh_on_the_gpu_runs_every_fusion():
    fd, inputs, reference = _gathers_and_sums(1, device="cuda")
    outputs = fd.execute(inputs)
    for got, expected in zip(outputs, reference(0)):
        assert got.is_cuda
        assert torch.allclose(got, expected, atol=1e-4)
    assert "Communication" in fd.last_scheduler_types()
    for example in ("tp_mlp.py", "sequence_parallel_layer_norm.py", "sharded_input.py"):
        out = run_example(example, 1, "cuda")
        assert "rank 0 of 1 matches the unsharded computation" in out, out
    assert "Matmul" in run_example("tp_mlp.py", 1, "cuda")


@requires_gpu
def test_two_processes_on_one_gpu_through_gloo():
    out = run_example("tp_mlp.py", 2, "cuda")
    for rank in range(2):
        assert f"tp_mlp: rank {rank} of 2 matches the unsharded computation" in out, out
    out = run_example("sequence_parallel_layer_norm.py", 2, "cuda")
    assert "rank 1 of 2 matches" in out, out
