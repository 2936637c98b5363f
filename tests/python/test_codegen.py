"""Inspection without a GPU: fusion_ir() and generate_cuda(), which lowers
the fusion as defined (serial, inlined) on the CPU."""

import re

import pytest

from fuser import DataType, FuserError, FusionDefinition


def test_fusion_ir_is_the_cpp_printout():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.relu(t0)
        fd.add_output(t1)
    ir = fd.fusion_ir()
    assert "Inputs:\n  T0_g_float[iS0{i0}, iS1{4}], float" in ir
    assert "Outputs:\n  T1_g_float[iS2{i0}, iS3{4}], float" in ir
    assert "= relu(T0_g_float[iS0{i0}, iS1{4}])" in ir
    assert "logical domain : [iS0{i0}, iS1{4}]" in ir


def test_generate_cuda_pointwise():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.mul(fd.ops.add(t0, t1), 3.0)
        fd.add_output(fd.ops.cast(fd.ops.relu(t2), DataType.Half))
    code = fd.generate_cuda()
    kernel = code[code.index("__global__") :]
    assert kernel.startswith(
        "__global__ void fuser_kernel(Tensor<float, 2, 2> T0, "
        "Tensor<float, 2, 2> T1, Tensor<__half, 2, 2> T5)"
    )
    assert "relu(" in kernel
    assert "castTo<__half>(" in kernel
    assert "* 3.0f)" in kernel
    # Serial: no thread or block indices.
    assert "threadIdx" not in kernel and "blockIdx" not in kernel
    # The runtime headers come first.
    assert code.index("struct Tensor") < code.index("__global__")
    # The definition is unchanged by lowering.
    assert fd.generate_cuda() == code


def test_generate_cuda_reduction():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        fd.add_output(fd.ops.sum(t0, [1]))
    kernel = fd.generate_cuda()
    kernel = kernel[kernel.index("__global__") :]
    assert "Tensor<__half, 2, 2> T0" in kernel
    assert "float" in kernel  # Half accumulates in float


def test_last_cuda_code_before_execute_says_so():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.neg(t0))
    for method in (fd.last_cuda_code, fd.last_scheduled_fusion_ir):
        with pytest.raises(FuserError) as info:
            method()
        message = str(info.value)
        assert "has not been executed yet" in message
        assert "fd.generate_cuda()" in message


def test_seed_allocation_indexes_as_one_term():
    # The seed: logical [6], allocation [6/2, 2] (contiguous), loop [6]. The
    # contiguous split folds, so the input is read at the plain loop index.
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[6], contiguity=[True], dtype=DataType.Float)
        t1 = fd.ops.set(t0)
        fd.add_output(t1)
        outer, inner = fd.split(t0.axis(0), 2)
        t0.set_allocation_domain([outer, inner], [True, True])
    code = fd.generate_cuda()
    kernel = code[code.index("__global__") :]
    assert "Tensor<float, 1, 2> T0" in kernel  # 1 logical axis, 2 allocation axes
    assert re.search(r"T1\[(\w+)\] = T0\[\1\];", kernel), kernel


def test_launch_variables_enter_index_math_signed():
    # Regression: CUDA's threadIdx and blockIdx are unsigned int; a left
    # pad's bound test (i % 32 - 16) >= 0 computed from them held for every
    # i, and the kernel read the row before the pad's input
    # (doc/design.md §5). Each one enters the kernel cast to the index type.
    import torch

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[256, 16], contiguity=[True, True], dtype=DataType.Float)
        y = fd.define_tensor(shape=[256, 16], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(fd.ops.pad(x, [16, 0]), fd.ops.pad(y, [0, 16])))
    inputs = [torch.randn(256, 16), torch.randn(256, 16)]
    (scheduler, code, error), = fd._compile_off_device(inputs)
    assert not error and scheduler == "PointWise"
    kernel = code[code.index("__global__") :]
    launch = re.compile(r"(threadIdx|blockIdx|blockDim|gridDim)\.[xyz]")
    uses = [m.start() for m in launch.finditer(kernel)]
    assert uses, kernel
    for at in uses:
        assert kernel[: at].endswith("((nvfuser_index_t)"), kernel[at - 40 : at + 20]
    # The left pad's test, on a signed index.
    assert re.search(r"- 16\) >= 0\)", kernel), kernel
