"""What the Python benchmarks share: the frontends to compare (fuser, and
nVFuser when `nvfuser_direct` imports: ../shared/peer/README.md describes how
it is installed beside fuser on the GPU machine), defining an input from an
example tensor in the form both frontends accept, and timing with CUDA
events."""

import torch


def frontends():
    """[(name, module)] for fuser and, when it imports, nvFuser. Both
    modules have FusionDefinition and DataType with the same API."""
    import fuser

    found = [("fuser", fuser)]
    try:
        import nvfuser_direct

        found.append(("nvfuser", nvfuser_direct))
    except Exception as error:  # noqa: BLE001 - any failure means "absent"
        print(f"nvFuser not available ({type(error).__name__}: {error}); no nvFuser column")
    return found


def data_type(module, dtype):
    return {
        torch.float32: module.DataType.Float,
        torch.bfloat16: module.DataType.BFloat16,
        torch.float16: module.DataType.Half,
    }[dtype]


def define_input(fd, module, t):
    """An input matching `t`'s sizes, dtype and layout, written with
    define_tensor(shape, contiguity, dtype, stride_order), which both
    frontends take."""
    rank = t.dim()
    # stride_order[i] ranks axis i's stride, 0 the innermost.
    by_stride = sorted(range(rank), key=lambda i: (t.stride(i), i))
    stride_order = [0] * rank
    for rank_of_axis, axis in enumerate(by_stride):
        stride_order[axis] = rank_of_axis
    # Contiguity in allocation order (outermost first).
    allocation = list(reversed(by_stride))
    contiguity = []
    expected = 1
    for axis in reversed(allocation):
        if t.size(axis) == 1:
            contiguity.append(None)
            continue
        contiguity.append(t.stride(axis) == expected)
        expected = t.stride(axis) * t.size(axis)
    contiguity.reverse()
    shape = [1 if s == 1 else -1 for s in t.shape]
    return fd.define_tensor(
        shape=shape,
        contiguity=contiguity,
        dtype=data_type(module, t.dtype),
        stride_order=stride_order,
    )


def fusion_of(module, define, inputs):
    """A FusionDefinition of `module` built by define(fd, module, inputs)."""
    with module.FusionDefinition() as fd:
        define(fd, module, inputs)
    return fd


def median_ms(fn, input_sets):
    """Median time of fn over rotating input sets (CUDA events; L2 flushed
    between runs by triton.testing.do_bench)."""
    from triton.testing import do_bench

    state = {"i": 0}

    def call():
        args = input_sets[state["i"] % len(input_sets)]
        state["i"] += 1
        fn(*args)

    return do_bench(call, warmup=25, rep=200, return_mode="median")
