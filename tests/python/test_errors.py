"""Errors: C++ user errors arrive as fuser.FuserError with their message,
internal errors as fuser.FuserInternalError; wrong inputs to execute() are
refused with clear messages and leave the definition usable."""

import pytest
import torch

import fuser
from fuser import DataType, FuserError, FuserInternalError, FusionDefinition

from helpers import requires_gpu


def test_error_classes():
    assert issubclass(FuserError, RuntimeError)
    assert issubclass(FuserInternalError, RuntimeError)
    assert not issubclass(FuserInternalError, FuserError)
    assert not issubclass(FuserError, FuserInternalError)


def test_cpp_user_error_keeps_its_message():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        with pytest.raises(FuserError) as info:
            fd.ops.permute(t0, [0, 0])
        # The message of FUSER_CHECK in csrc/ops/alias.cpp, whole.
        assert str(info.value) == (
            "permute of T0_g_float[iS0{i0}, iS1{i2}]: axis 0 repeated; the axes "
            "must be a permutation."
        )
        with pytest.raises(FuserError, match="the condition must be bool"):
            fd.ops.where(t0, t0, 1.0)
        with pytest.raises(FuserError, match="is out of range for rank 2"):
            fd.ops.sum(t0, [2])
        # The definition goes on after an error.
        fd.add_output(fd.ops.relu(t0))
    assert "T1 = fd.ops.relu(T0)" in str(fd)


def test_allocation_domain_errors():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        fd.add_output(fd.ops.set(t0))
        a, b = t0.logical_domain()
        with pytest.raises(FuserError, match="allocation domain"):
            t0.set_allocation_domain([a], True)  # b is not covered
        outer, inner = fd.split(a, 4)
        with pytest.raises(FuserError, match="contiguity needs one flag per axis"):
            t0.set_allocation_domain([outer, inner, b], [True, True])
        with pytest.raises(FuserError, match=r"contiguity\[0\] must be True or False"):
            t0.set_allocation_domain([outer, inner, b], [None, True, True])
        with pytest.raises(FuserError, match="the factor must be positive"):
            fd.split(b, 0)
        t0.set_allocation_domain([outer, b, inner], [False, False, True])
    assert t0.allocation_domain() == [outer, b, inner]


def test_internal_error_class_and_message():
    with pytest.raises(FuserInternalError) as info:
        fuser._C._raise_internal_error_for_tests("the invariant X broke")
    assert str(info.value).startswith("fuser internal error: the invariant X broke")
    assert "this is a bug in fuser" in str(info.value)


def define_add():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s0 = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(fd.ops.mul(fd.ops.add(t0, t1), s0))
    return fd


def test_missing_input_is_reported_before_any_device_work():
    fd = define_add()
    a = torch.randn(2, 3)
    with pytest.raises(FuserError) as info:
        fd.execute([a, a])
    message = str(info.value)
    assert message.startswith("execute(): the fusion takes 3 inputs, but 2 were given.")
    assert "0: T0: a Float tensor of shape [-1, -1] (-1: any size); given torch.Tensor" in message
    assert "2: S0: a Double scalar; MISSING" in message
    with pytest.raises(FuserError, match="unexpected extra input"):
        fd.execute([a, a, 1.0, 2.0])


def test_vector_inputs_are_checked_before_any_device_work():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=True)
        v0 = fd.define_vector(2)
        fd.add_output(fd.ops.reshape(t0, v0))
    a = torch.randn(2, 3)
    with pytest.raises(FuserError) as info:
        fd.execute([a])
    assert "1: V0: a list of 2 ints; MISSING" in str(info.value)
    with pytest.raises(
        FuserError, match=r"input 1 \(V0\) is a vector of 2 ints; got 3: \[1, 2, 3\]"
    ):
        fd.execute([a, [1, 2, 3]])
    with pytest.raises(FuserError, match=r"input 1 \(V0\) is a vector input; expected a list of 2"):
        fd.execute([a, 6])
    with pytest.raises(FuserError, match="the tensor is on cpu, but fusion kernels read CUDA"):
        fd.execute([a, (3, 2)])


def test_wrong_inputs_on_cpu_tensors():
    # Everything but the device is checked first, so this runs without a GPU.
    fd = define_add()
    a = torch.randn(2, 3)
    with pytest.raises(FuserError) as info:
        fd.execute([a, a.double(), 2.0])
    assert "Input 1 (T1_g_float" in str(info.value)
    assert "Problem: the tensor's dtype is Double but the input is declared float." in str(
        info.value
    )
    with pytest.raises(FuserError) as info:
        fd.execute([a, torch.randn(3, 2).t(), 2.0])
    assert "is marked contiguous, so its stride must be" in str(info.value)
    assert "Fix: call .contiguous() on it." in str(info.value)
    with pytest.raises(FuserError, match="the tensor has rank 1 but the fusion input has rank 2"):
        fd.execute([a, a[0], 2.0])
    with pytest.raises(FuserError, match="is a scalar of type double, but a Tensor"):
        fd.execute([a, a, torch.randn(2)])
    with pytest.raises(FuserError, match="inputs must be torch.Tensor, bool, int or float"):
        fd.execute([a, a, "2.0"])
    # The definition is intact: a right input gets as far as the device check.
    assert "fd.add_output(T3)" in str(fd)
    assert "__global__" in fd.generate_cuda()
    with pytest.raises(FuserError, match="the tensor is on cpu, but fusion kernels read CUDA"):
        fd.execute([a, a, 2.0])


def test_execute_needs_a_closed_definition():
    fd = FusionDefinition()
    with pytest.raises(FuserError, match="not defined"):
        fd.execute([])
    with fd:
        t0 = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.abs(t0))
        with pytest.raises(FuserError, match="still open"):
            fd.execute([torch.randn(3)])


def test_definition_after_an_exception_in_its_with_block():
    with pytest.raises(ValueError, match="a bug in the user's code"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1])
            fd.add_output(fd.ops.relu(t0))
            raise ValueError("a bug in the user's code")
    # Not defined: execute says so, and why, instead of running half of it.
    with pytest.raises(FuserError, match="an exception in that block leaves it undefined"):
        fd.execute([torch.randn(3)])
    with pytest.raises(FuserError, match="not defined"):
        fd.generate_cuda()


@requires_gpu
def test_execute_from_two_threads_at_once():
    import threading

    fd = define_add()
    errors = []

    def work(seed):
        try:
            gen = torch.Generator(device="cuda").manual_seed(seed)
            for rows in (8, 64, 8, 300, 64) * 4:
                a = torch.randn(rows, 16, device="cuda", generator=gen)
                b = torch.randn(rows, 16, device="cuda", generator=gen)
                (out,) = fd.execute([a, b, 3.0])
                torch.testing.assert_close(out, (a + b) * 3.0)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a thread did not finish"
    assert not errors, errors
    assert fd._executor.num_runtimes() == 3


@requires_gpu
def test_wrong_inputs_leave_the_definition_usable_on_gpu():
    fd = define_add()
    a = torch.randn(8, 16, device="cuda")
    b = torch.randn(8, 16, device="cuda")
    with pytest.raises(FuserError, match="MISSING"):
        fd.execute([a, b])
    with pytest.raises(FuserError, match="dtype is Half but the input is declared float"):
        fd.execute([a, b.half(), 3.0])
    with pytest.raises(FuserError, match="is marked contiguous"):
        fd.execute([a, torch.randn(16, 8, device="cuda").t(), 3.0])
    with pytest.raises(FuserError, match="is on cpu"):
        fd.execute([a, b.cpu(), 3.0])
    with pytest.raises(FuserError, match="has not been executed yet"):
        fd.last_cuda_code()
    (out,) = fd.execute([a, b, 3.0])
    torch.testing.assert_close(out, (a + b) * 3.0)
    # And again after a failure that happened once a kernel existed.
    with pytest.raises(FuserError, match="dtype"):
        fd.execute([a.double(), b, 3.0])
    (out,) = fd.execute([b, a, -1.0])
    torch.testing.assert_close(out, -(a + b))
