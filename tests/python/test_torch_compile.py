"""The "fuser" TorchDynamo backend (doc/torch_compile.md) without a GPU:
its registration, its options, the partitioner (which aten nodes fuse and
which stay eager) and the translation of partitions to FusionDefinitions,
on graphs traced with fake CUDA tensors (make_fx) or, for the backward, on
the meta device (the autograd engine needs a real GPU for CUDA tensors).
The GPU runs are in test_torch_compile_models.py."""

import operator
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    ShapeEnv,
    StatelessSymbolicContext,
)

import fuser
from fuser import FuserError
from fuser.dynamo import registration
from fuser.dynamo.aten_table import ATEN_TABLE, VIEW, Row
from fuser.dynamo.backend import compile_graph
from fuser.dynamo.decompositions import decomposition_table
from fuser.dynamo.fused_partition import FusedPartition
from fuser.dynamo.options import KNOWN_OPTIONS, parse_options
from fuser.dynamo.signatures import ScalarSignature, runtime_signature, tensor_signature
from fuser.dynamo.support import FuserOperatorSupport
from fuser.dynamo.translation import build_definition, fake_value

aten = torch.ops.aten
prims = torch.ops.prims


# --- helpers ---------------------------------------------------------------------
def fake_cuda(mode, *shape, dtype=torch.float32):
    with mode:
        return torch.empty(*shape, device="cuda", dtype=dtype)


def symbolic_fake_cuda(mode, shape, dynamic_dims, dtype=torch.float32):
    """A fake CUDA tensor whose dims in `dynamic_dims` are symbolic."""
    dynamic = [
        DimDynamic.DYNAMIC if d in dynamic_dims else DimDynamic.STATIC for d in range(len(shape))
    ]
    context = StatelessSymbolicContext(dynamic_sizes=dynamic)
    tensor = mode.from_tensor(torch.empty(*shape, dtype=dtype), symbolic_context=context)
    with mode:
        return tensor.to("cuda")


def trace(fn, *inputs):
    """fn's aten graph, decomposed as the backend's AOTAutograd does."""
    return make_fx(fn, decomposition_table=decomposition_table(ATEN_TABLE), tracing_mode="fake")(
        *inputs
    )


def compile_traced(fn, *inputs, options=None, name="test"):
    return compile_graph(trace(fn, *inputs), list(inputs), parse_options(options), name)


def partition_ops(compiled):
    """{partition name: the aten ops in it}."""
    return {name: set(info.aten_ops) for name, info in zip(compiled.partitions, compiled.infos)}


def eager_ops(compiled):
    """The aten ops the partitioned graph runs outside the partitions."""
    return {
        str(n.target)
        for n in compiled.graph_module.graph.nodes
        if n.op == "call_function" and n.target is not operator.getitem
    }


def only_definition(compiled):
    (partition,) = compiled.partitions.values()
    (definition,) = partition.definitions()
    return definition


def run_python(source):
    """Runs `source` in a fresh interpreter (the backend registry is
    process-wide state); returns its stdout."""
    env = dict(os.environ)
    paths = [os.path.dirname(p) for p in fuser.__path__]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


# --- registration -------------------------------------------------------------
def test_import_fuser_registers_the_backend():
    out = run_python("""
        import sys
        import fuser
        import torch._dynamo
        print("fuser" in torch._dynamo.list_backends())
    """)
    assert out.split() == ["True"], (
        "torch._dynamo.list_backends() lacks 'fuser' after `import fuser`: "
        "python/fuser/__init__.py must import fuser.dynamo (which installs the hook)"
    )


def test_importing_the_backend_package_does_not_import_dynamo():
    out = run_python("""
        import sys
        import fuser.dynamo
        print("torch._dynamo" in sys.modules)
        import torch._dynamo
        print("fuser" in torch._dynamo.list_backends())
        from torch._dynamo.backends.registry import lookup_backend
        print(lookup_backend("fuser") is fuser.dynamo.registration.fuser_backend)
    """)
    assert out.split() == ["False", "True", "True"]


def test_registers_at_once_when_dynamo_is_already_imported():
    out = run_python("""
        import torch._dynamo
        import fuser.dynamo
        print("fuser" in torch._dynamo.list_backends())
        fuser.dynamo.install()  # again: harmless
        print("fuser" in torch._dynamo.list_backends())
    """)
    assert out.split() == ["True", "True"]


def test_entry_point_names_the_backend():
    from importlib.metadata import EntryPoint

    entry_point = EntryPoint(
        name="fuser", value="fuser.dynamo.backend:fuser_backend", group="torch_dynamo_backends"
    )
    from fuser.dynamo.backend import fuser_backend

    assert entry_point.load() is fuser_backend


def test_entry_point_and_import_do_not_register_twice():
    # As an installed fuser: the registry knows the entry point before
    # fuser is imported; the lookup loads it (importing fuser) and
    # registers it, which must not clash with the import's registration.
    out = run_python("""
        from importlib.metadata import EntryPoint
        from torch._dynamo.backends import registry
        registry._lazy_import()
        registry._BACKENDS["fuser"] = EntryPoint(
            name="fuser", value="fuser.dynamo.backend:fuser_backend",
            group="torch_dynamo_backends")
        backend = registry.lookup_backend("fuser")
        import fuser.dynamo.backend
        print(backend is fuser.dynamo.backend.fuser_backend)
    """)
    assert out.split() == ["True"]


# --- options --------------------------------------------------------------------
def test_unknown_option_lists_the_known_ones():
    with pytest.raises(FuserError) as info:
        parse_options({"fuser.dump_partition": True})
    message = str(info.value)
    assert "unknown option 'fuser.dump_partition'" in message
    for name in KNOWN_OPTIONS:
        assert repr(name) in message


def test_option_values_are_checked():
    with pytest.raises(FuserError, match="takes a list of aten op names.*Pass a list"):
        parse_options({"fuser.eager_ops": "aten.mm"})
    with pytest.raises(FuserError, match="'fuser.fuse_matmul' takes a bool"):
        parse_options({"fuser.fuse_matmul": "no"})
    with pytest.raises(FuserError, match="'fuser.dump': unknown 'kernels'.*partitions"):
        parse_options({"fuser.dump": ["kernels"]})
    with pytest.raises(FuserError, match="unknown 'no_such_scheduler'; fuser takes: .*matmul"):
        parse_options({"fuser.disable_options": ["no_such_scheduler"]})
    with pytest.raises(FuserError, match="mode='max-autotune' is not supported"):
        parse_options(None, mode="max-autotune")


def test_options_are_read():
    options = parse_options(
        {
            "fuser.eager_ops": ["aten.mm"],
            "fuser.eager_partitions": ["graph0.forward.fused_1"],
            "fuser.fuse_matmul": True,
            "fuser.dump": ["partitions", "cuda"],
            "fuser.disable_options": ["matmul_expr_eval"],
        }
    )
    assert options.keeps_op_eager("aten.mm.default", "aten.mm")
    assert not options.keeps_op_eager("aten.bmm.default", "aten.bmm")
    assert options.eager_partition_names == ("graph0.forward.fused_1",)
    assert options.fuse_matmul is True
    assert parse_options(None).fuse_matmul is False
    assert options.dumps("cuda") and not options.dumps("definitions")
    assert options.disable_options == ("matmul_expr_eval",)


def test_torch_compile_reports_an_unknown_option():
    compiled = torch.compile(lambda x: x * 2, backend="fuser", options={"fuser.nope": 1})
    with pytest.raises(Exception, match="unknown option 'fuser.nope'"):
        compiled(torch.randn(3))


# --- through torch.compile on the CPU: everything stays eager ----------------------
def test_cpu_model_compiles_and_runs_eagerly_with_gradients():
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16))
    counter = CompileCounterWithBackend("fuser")
    compiled = torch.compile(model, backend=counter, dynamic=True)
    compiles = []
    for batch in (4, 7, 11):
        x = torch.randn(batch, 8, requires_grad=True)
        out = compiled(x)
        torch.testing.assert_close(out, model(x))
        (grad,) = torch.autograd.grad(out.sum(), x)
        (expected,) = torch.autograd.grad(model(x).sum(), x)
        torch.testing.assert_close(grad, expected)
        compiles.append(counter.frame_count)
    # (Dynamo may call the backend twice for the first graph, when it
    # restarts its analysis to turn Python floats into tensors.)
    assert compiles[0] >= 1
    assert compiles[1:] == [compiles[0]] * 2  # new batch sizes reuse the dynamic graph


# --- partitioning -----------------------------------------------------------------
def test_elementwise_and_reduction_fuse_and_unsupported_ops_stay_eager():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)

    def fn(x):
        y = torch.cumsum(x, 1)  # no row: ATen
        return (torch.relu(y) * 2).sum(-1), torch.exp(y).amax(0)

    compiled = compile_traced(fn, x)
    assert partition_ops(compiled) == {
        "test.fused_0": {
            "aten.relu.default",
            "aten.mul.Tensor",
            "aten.sum.dim_IntList",
            "aten.exp.default",
            "aten.amax.default",
        }
    }
    assert eager_ops(compiled) == {"aten.cumsum.default"}
    assert isinstance(compiled.partitions["test.fused_0"], FusedPartition)


def test_a_lone_op_or_views_alone_make_no_partition():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)
    compiled = compile_traced(lambda x: torch.relu(x.view(16, 8)).t(), x)
    assert compiled.partitions == {}
    assert "aten.relu.default" in eager_ops(compiled)


def test_views_at_the_edges_of_a_partition_stay_eager():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)
    compiled = compile_traced(lambda x: (torch.relu(x.t()) + 1).unsqueeze(0), x)
    assert partition_ops(compiled) == {"test.fused_0": {"aten.relu.default", "aten.add.Tensor"}}
    assert eager_ops(compiled) == {"aten.t.default", "aten.unsqueeze.default"}


def test_cpu_tensors_and_unsupported_dtypes_stay_eager():
    mode = FakeTensorMode()
    with mode:
        cpu = torch.empty(8, 16)
        complex_cuda = torch.empty(8, 16, device="cuda", dtype=torch.complex64)
    assert compile_traced(lambda x: torch.relu(x) * 2, cpu).partitions == {}
    assert compile_traced(lambda x: (x * 2) + 1, complex_cuda).partitions == {}
    support = FuserOperatorSupport(parse_options(None))
    graph = trace(lambda x: torch.relu(x) * 2, cpu)
    relu = next(n for n in graph.graph.nodes if n.target == aten.relu.default)
    assert support.reason_unsupported(relu) == "input 0 is on cpu"


def test_matmul_fuses_with_its_epilogue_when_asked():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 32, 64, dtype=torch.bfloat16)
    w = fake_cuda(mode, 64, 16, dtype=torch.bfloat16)

    def fn(x, w):
        return F.gelu(x @ w) * 2

    compiled = compile_traced(fn, x, w, options={"fuser.fuse_matmul": True})
    assert partition_ops(compiled) == {
        "test.fused_0": {"aten.mm.default", "aten.gelu.default", "aten.mul.Tensor"}
    }
    assert "fd.ops.matmul(T0, T1)" in str(only_definition(compiled))
    # By default cuBLAS runs the product (faster than fuser's kernel on
    # every shape measured), the epilogue is the fusion.
    for options in (None, {"fuser.fuse_matmul": False}):
        compiled = compile_traced(fn, x, w, options=options)
        assert partition_ops(compiled) == {
            "test.fused_0": {"aten.gelu.default", "aten.mul.Tensor"}
        }
        assert eager_ops(compiled) == {"aten.mm.default"}


def test_eager_ops_option_keeps_an_op_out():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)

    def fn(x):
        return torch.softmax(x * 2, -1) + 1

    compiled = compile_traced(fn, x, options={"fuser.eager_ops": ["aten._softmax"]})
    assert "aten._softmax.default" in eager_ops(compiled)
    assert all("aten._softmax.default" not in ops for ops in partition_ops(compiled).values())


def test_eager_partitions_by_name_and_by_predicate():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)

    def fn(x):
        a = torch.relu(x) * 2
        b = torch.cumsum(a, 0)  # eager, between two partitions
        return torch.exp(b) + 1

    names = ["test.fused_0", "test.fused_1"]
    compiled = compile_traced(fn, x)
    assert list(compiled.partitions) == names
    assert all(isinstance(p, FusedPartition) for p in compiled.partitions.values())

    compiled = compile_traced(fn, x, options={"fuser.eager_partitions": ["test.fused_1"]})
    assert isinstance(compiled.partitions["test.fused_0"], FusedPartition)
    assert isinstance(compiled.partitions["test.fused_1"], torch.fx.GraphModule)

    seen = []

    def keep_exp_eager(info):
        seen.append(info.name)
        return "aten.exp.default" in info.aten_ops

    compiled = compile_traced(fn, x, options={"fuser.eager_partitions": keep_exp_eager})
    assert seen == names
    assert isinstance(compiled.partitions["test.fused_0"], FusedPartition)
    assert isinstance(compiled.partitions["test.fused_1"], torch.fx.GraphModule)


def test_partitions_given_inputs_fuser_cannot_take_run_eagerly():
    # Compiled for CUDA (definitions built), called with CPU tensors: each
    # partition runs its aten ops, and the graph gives eager's results.
    from torch._dynamo.utils import counters

    mode = FakeTensorMode()
    x, w = fake_cuda(mode, 8, 16), fake_cuda(mode, 16, 4)

    def fn(x, w):
        y = torch.relu(x) * 2
        return (y @ w).sum(0) + 1, torch.exp(torch.cumsum(y, 1)).amax(1)

    compiled = compile_traced(fn, x, w)
    assert all(len(p.definitions()) == 1 for p in compiled.partitions.values())
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    before = counters["fuser"]["eager_runs"]
    args = [x, w]
    results = compiled(args)
    assert args == []  # AOTAutograd's boxed convention: the list is consumed
    for result, expected in zip(results, fn(x, w)):
        torch.testing.assert_close(result, expected)
    assert counters["fuser"]["eager_runs"] - before == len(compiled.partitions)


# --- translation ------------------------------------------------------------------
def test_pointwise_and_reduction_translation_prints_and_lowers():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16, dtype=torch.float16)
    bias = fake_cuda(mode, 16, dtype=torch.float16)
    compiled = compile_traced(lambda x, b: (torch.tanh(x + b) * 0.5).sum(-1), x, bias)
    fd = only_definition(compiled)
    text = str(fd)
    for line in [
        "T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)",
        "T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half)",
        "fd.ops.broadcast(T1, is_broadcast_dim=[True, False])",  # PyTorch's broadcasting
        "fd.ops.tanh(",
        "dtype=DataType.Float)",  # the half sum accumulates in float
        "fd.ops.sum(",
    ]:
        assert line in text, text
    assert "cast(" in fd.fusion_ir() and "tanh(" in fd.fusion_ir()
    assert "__global__" in fd.generate_cuda()


def test_results_take_the_dtype_eager_gives():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, dtype=torch.int32)
    compiled = compile_traced(lambda x: (x / 2).exp() + (x > 3), x)
    text = str(only_definition(compiled))
    # int / int is a true division in PyTorch: the operand is cast first.
    assert "fd.ops.cast(T0, dtype=DataType.Float)" in text
    assert "fd.ops.div(" in text


def test_output_layout_follows_eager_strides():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)
    compiled = compile_traced(lambda x: torch.relu(x.t()) + 1, x)
    fd = only_definition(compiled)
    # The eager result of relu(x.t()) is column-major, as its input.
    assert "fd.add_output(T" in str(fd) and "stride_order=[0, 1]" in str(fd), str(fd)


def test_layer_norm_softmax_and_gelu_translate_whole():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 4, 8, 32, dtype=torch.bfloat16)
    weight = fake_cuda(mode, 32, dtype=torch.bfloat16)
    bias = fake_cuda(mode, 32, dtype=torch.bfloat16)

    def fn(x, w, b):
        return torch.softmax(F.gelu(F.layer_norm(x, (32,), w, b)), -1)

    compiled = compile_traced(fn, x, weight, bias)
    assert partition_ops(compiled) == {
        "test.fused_0": {
            "aten.native_layer_norm.default",
            "aten.gelu.default",
            "aten._softmax.default",
        }
    }
    text = str(only_definition(compiled))
    assert "fd.ops.var_mean(" in text and "correction=0, keepdim=True" in text
    assert "fd.ops.rsqrt(" in text and "fd.ops.gelu(" in text and "fd.ops.softmax(" in text


def test_symbolic_sizes_become_minus_one_and_scalar_inputs():
    mode = FakeTensorMode(shape_env=ShapeEnv())
    x = symbolic_fake_cuda(mode, (3, 5, 8), dynamic_dims={0, 1})

    def fn(x):
        b, t, c = x.shape
        return (torch.relu(x) * 2).view(b, t, 2, c // 2).sum(-1) + 1

    compiled = compile_traced(fn, x)
    (name,) = compiled.partitions
    text = str(only_definition(compiled))
    assert "T0 = fd.define_tensor(shape=[-1, -1, -1]" in text
    assert text.count("fd.define_scalar(None, dtype=DataType.Int)") == 2, text
    assert "fd.ops.reshape(T" in text and "new_shape=[S0, S1, 2, 4]" in text, text
    # The sizes are computed outside the partition and passed in.
    assert "aten.sym_size.int" in eager_ops(compiled)


def test_one_definition_serves_every_batch_size():
    one = tensor_signature([4, 8], [8, 1], torch.float32, "cuda")
    assert tensor_signature([6, 8], [8, 1], torch.float32, "cuda") == one
    assert tensor_signature([6, 3], [3, 1], torch.float32, "cuda") == one
    # A size-1 axis is a broadcast axis, a transposed layout another order.
    assert tensor_signature([1, 8], [8, 1], torch.float32, "cuda") != one
    assert tensor_signature([4, 8], [1, 4], torch.float32, "cuda") != one
    assert tensor_signature([4, 8], [8, 1], torch.float16, "cuda") != one
    # fuser takes 0-dim CPU tensors by value, no other CPU tensor.
    assert tensor_signature([], [], torch.float32, "cpu").is_cpu_scalar
    assert tensor_signature([4], [1], torch.float32, "cpu") is None
    assert runtime_signature([torch.randn(4), 3]) is None
    assert runtime_signature([torch.tensor(2.0), 3, 0.5, True]) == (
        tensor_signature([], [], torch.float32, "cpu"),
        ScalarSignature(fuser.DataType.Int),
        ScalarSignature(fuser.DataType.Double),
        ScalarSignature(fuser.DataType.Bool),
    )


def test_a_length_one_slice_broadcasts_as_in_pytorch():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)
    # A length-1 slice in the middle of a partition, then broadcast.
    compiled = compile_traced(lambda x: (torch.relu(x) * 2)[:, 3:4] * x + 1, x)
    text = str(only_definition(compiled))
    assert "fd.ops.slice(" in text
    assert "fd.ops.squeeze(" in text and "is_broadcast_dim=[False, True]" in text, text


def plain_slice(ctx, x, dim=0, start=None, end=None, step=1):
    """fd.ops.slice alone, without the broadcast axis the table's row makes."""
    return ctx.fd.ops.slice(x, [0, start], [ctx.size(x, 0), end], [1, step])


def test_an_untranslatable_partition_stays_eager_with_a_warning():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)
    graph = trace(lambda x: (torch.relu(x) * 2)[:, 3:4] * x + 1, x)
    # With a slice translated plainly, the length-1 axis is no broadcast
    # axis: the translation must refuse rather than compute wrong numbers.
    table = dict(ATEN_TABLE)
    table[aten.slice.Tensor] = Row(plain_slice, kind=VIEW)
    options = parse_options(None)
    support = FuserOperatorSupport(options, table=table)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = compile_graph(graph, [x], options, "test", support=support)
    (partition,) = compiled.partitions.values()
    assert partition.definitions() == []
    (warning,) = [w for w in caught if "fuser backend" in str(w.message)]
    assert "partition test.fused_0 runs with eager ATen" in str(warning.message)
    assert "not a broadcast axis in fuser" in str(warning.message)


def test_dropout_keeps_its_mask_for_the_backward():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)
    compiled = compile_traced(lambda x: torch.native_dropout(torch.relu(x), 0.25, True), x)
    text = str(only_definition(compiled))
    # Numbers from torch's generator at each run (no fixed seed), a mask
    # kept with probability 0.75 and returned, the output scaled by 1/0.75.
    assert "fd.ops.uniform(" in text and "rng_seed=None, rng_offset=None" in text
    assert "fd.ops.lt(" in text and "0.75" in text and "1.3333333333333333" in text
    (partition,) = compiled.partitions.values()
    (output_node,) = [n for n in partition.graph_module.graph.nodes if n.op == "output"]
    result_dtypes = [fake_value(r).dtype for r in output_node.args[0]]
    assert result_dtypes == [torch.float32, torch.bool]


def aot_on_meta(fn, shapes, dtype=torch.float32, options=None):
    """AOTAutograd's forward and backward graphs of fn, traced on the meta
    device and compiled as on CUDA: {"forward": CompiledGraph, "backward": ...}."""
    from functorch.compile import aot_function, min_cut_rematerialization_partition

    options = parse_options(options)
    support = FuserOperatorSupport(options, device_types=("meta",))
    compiled = {}

    def compiler(kind):
        def compile_(graph, inputs):
            compiled[kind] = compile_graph(graph, inputs, options, kind, support=support)
            return compiled[kind]

        return compile_

    with FakeTensorMode():
        args = [torch.randn(*s, device="meta", dtype=dtype, requires_grad=True) for s in shapes]
        function = aot_function(
            fn,
            fw_compiler=compiler("forward"),
            bw_compiler=compiler("backward"),
            decompositions=decomposition_table(ATEN_TABLE),
            partition_fn=min_cut_rematerialization_partition,
        )
        function(*args).backward()
    return compiled


def definitions_as_on_cuda(compiled_graph):
    """The definitions of a graph's partitions for CUDA inputs like the
    meta ones it was traced with."""
    definitions = []
    for info in compiled_graph.infos:
        placeholders = [n for n in info.graph_module.graph.nodes if n.op == "placeholder"]
        signatures = [
            tensor_signature(v.shape, v.stride(), v.dtype, "cuda")
            for v in map(fake_value, placeholders)
        ]
        definitions.append(build_definition(info.graph_module, signatures, ATEN_TABLE))
    return definitions


def test_forward_and_backward_graphs_partition_and_translate():
    # A small transformer MLP, as AOTAutograd splits it.
    def fn(x, ln_weight, ln_bias, weight, bias):
        y = F.layer_norm(x, (16,), ln_weight, ln_bias)
        y = torch.native_dropout(F.gelu(F.linear(y, weight, bias)), 0.1, True)[0]
        return torch.softmax(y.view(-1, 8, 4), -1).sum()

    compiled = aot_on_meta(
        fn, [(4, 16), (16,), (16,), (32, 16), (32,)], options={"fuser.fuse_matmul": True}
    )
    forward_ops = set().union(*partition_ops(compiled["forward"]).values())
    assert {
        "aten.native_layer_norm.default",
        "aten.addmm.default",
        "aten.gelu.default",
        "aten.native_dropout.default",
        "aten._softmax.default",
    } <= forward_ops
    backward_ops = set().union(*partition_ops(compiled["backward"]).values())
    assert "aten._softmax_backward_data.default" in backward_ops
    assert "aten.mm.default" in backward_ops
    # The dropout mask is a forward result that the backward reads.
    backward_inputs = [
        fake_value(n)
        for n in compiled["backward"].graph_module.graph.nodes
        if n.op == "placeholder"
    ]
    assert torch.bool in [v.dtype for v in backward_inputs if isinstance(v, torch.Tensor)]
    for graph in compiled.values():
        for info, fd in zip(graph.infos, definitions_as_on_cuda(graph)):
            placeholders = [n for n in info.graph_module.graph.nodes if n.op == "placeholder"]
            assert len(fd.inputs()) == len(placeholders)


def test_flash_attention_forward_and_backward_translate_with_their_random_state():
    aten_flash = torch.ops.aten._scaled_dot_product_flash_attention

    def fn(q, k, v):
        out = aten_flash(q * 2, k, v, 0.1, True, scale=0.125)[0]
        return (torch.relu(out) + 1).sum()

    compiled = aot_on_meta(fn, [(2, 4, 64, 32)] * 3, dtype=torch.bfloat16)
    (forward,) = definitions_as_on_cuda(compiled["forward"])
    (backward,) = definitions_as_on_cuda(compiled["backward"])
    assert "= fd.ops.sdpfa_fwd(" in str(forward)
    assert "= fd.ops.sdpfa_bwd(" in str(backward)
    # The seed and offset flow from the forward's results to the backward.
    assert "shape=[-1], contiguity=[True], dtype=DataType.UInt64)" in str(backward)
    assert "shape=[], contiguity=[], dtype=DataType.UInt64)" in str(backward)


def test_batch_norm_and_relu_fuse_while_the_convolution_stays_eager():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 2, 8, 16, 16)
    weight = fake_cuda(mode, 8, 8, 3, 3)
    scale, shift = fake_cuda(mode, 8), fake_cuda(mode, 8)
    running_mean, running_var = fake_cuda(mode, 8), fake_cuda(mode, 8)

    def block(x, w, scale, shift, mean, var):
        y = F.conv2d(x, w, padding=1)
        y = F.batch_norm(y, mean, var, scale, shift, training=True)
        return torch.relu(y + x)

    compiled = compile_traced(block, x, weight, scale, shift, running_mean, running_var)
    assert "aten.convolution.default" in eager_ops(compiled)
    fused = set().union(*partition_ops(compiled).values())
    assert {"aten.var_mean.correction", "aten.relu.default", "aten.add.Tensor"} <= fused


def test_dump_writes_partitions_and_definitions(tmp_path):
    mode = FakeTensorMode()
    x = fake_cuda(mode, 8, 16)
    compile_traced(
        lambda x: (torch.relu(torch.cumsum(x, 0)) * 2).sum(0),
        x,
        options={"fuser.dump": ["partitions", "definitions"], "fuser.dump_dir": str(tmp_path)},
        name="graph9.forward",
    )
    partitions = (tmp_path / "graph9.forward.txt").read_text()
    assert "# graph9.forward.fused_0: runs on fuser" in partitions
    assert "cumsum: aten.cumsum.default has no translation to fuser" in partitions
    definition = (tmp_path / "graph9.forward.fused_0.0.py").read_text()
    assert "fd.ops.relu(" in definition and "with FusionDefinition() as fd:" in definition


def test_split_and_arange_translate():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 4, 12)

    def fn(x):
        a, b, c = torch.relu(x).split([4, 4, 4], dim=-1)
        positions = torch.arange(0, 4, device=x.device)
        return a * b + c + positions

    compiled = compile_traced(fn, x)
    assert partition_ops(compiled) == {
        "test.fused_0": {
            "aten.relu.default",
            "aten.split_with_sizes.default",
            "aten.arange.start_step",
            "aten.mul.Tensor",
            "aten.add.Tensor",
        }
    }
    text = str(only_definition(compiled))
    assert text.count("fd.ops.slice(") == 3 and "fd.ops.iota(" in text, text


def test_slice_scatter_translates_as_a_placed_pad():
    """The backward of a slice (AOTAutograd writes slice_scatter into
    zeros) fuses as where(in range, pad(src), base); ATen's evaluation of
    the definition on the CPU equals eager, for bounds given from the
    start, from the end and past it."""
    mode = FakeTensorMode()
    x = fake_cuda(mode, 2, 4, 8, 16)

    def fn(x):
        grad = torch.relu(x) * 2
        first = aten.slice_scatter(torch.zeros_like(x), grad[..., 8:], 3, 0, 8)
        second = aten.slice_scatter(x, -grad[..., :8], 3, -8, 2**63 - 1)
        return first + second

    compiled = compile_traced(fn, x)
    assert "aten.slice_scatter.default" in partition_ops(compiled)["test.fused_0"]
    assert "aten.slice_scatter.default" not in eager_ops(compiled)
    definition = only_definition(compiled)
    assert "fd.ops.pad(" in str(definition) and "fd.ops.where(" in str(definition)
    cpu = torch.randn(2, 4, 8, 16)
    (got,) = definition._evaluate_with_aten([cpu])
    assert torch.equal(got, fn(cpu))


def test_slice_scatter_with_a_step_stays_eager():
    mode = FakeTensorMode()
    x = fake_cuda(mode, 4, 16)
    compiled = compile_traced(
        lambda x: aten.slice_scatter(torch.relu(x), x[:, ::2] * 2, 1, 0, 16, 2) + 1, x
    )
    assert "aten.slice_scatter.default" in eager_ops(compiled)


def on_fake_cuda(mode, model, inputs):
    """Fake CUDA copies of a CPU model's parameters, buffers and inputs."""

    def fake(tensor):
        copy = mode.from_tensor(tensor)
        with mode:
            return copy.to("cuda")

    state = {k: fake(v) for k, v in [*model.named_parameters(), *model.named_buffers()]}
    return state, [fake(i) for i in inputs]


@pytest.mark.parametrize("maker", ["make_nanogpt", "make_llama_block", "make_resnet_block"])
def test_every_partition_of_the_models_translates(maker):
    import torch_compile_models

    if maker == "make_nanogpt" and not torch_compile_models.have_nanogpt():
        pytest.skip("nanoGPT comes with lightning-thunder, which is not installed")
    dtype = torch.float32 if maker != "make_llama_block" else torch.bfloat16
    model, inputs, _ = getattr(torch_compile_models, maker)(device="cpu", dtype=dtype)
    mode = FakeTensorMode()
    state, inputs = on_fake_cuda(mode, model, inputs)

    def forward(state, *inputs):
        return torch.func.functional_call(model, state, tuple(inputs))

    with torch.no_grad():
        graph = trace(forward, state, *inputs)
    examples = [fake_value(n) for n in graph.graph.nodes if n.op == "placeholder"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = compile_graph(graph, examples, parse_options(None), maker)
    assert not [str(w.message) for w in caught if "fuser backend" in str(w.message)]
    assert compiled.partitions
    for partition in compiled.partitions.values():
        assert len(partition.definitions()) == 1


# --- the table -------------------------------------------------------------------
def test_the_table_has_the_ops_of_the_brief_and_decompositions_spare_them():
    required = [
        aten.add.Tensor, aten.mul.Tensor, aten.relu.default, aten.gelu.default,
        aten.tanh.default, aten.exp.default, aten.sum.dim_IntList, aten.amax.default,
        aten.var_mean.correction, aten.native_layer_norm.default, aten._softmax.default,
        aten.where.self, aten.view.default, aten._unsafe_view.default, aten.reshape.default,
        aten.permute.default, aten.expand.default, aten.t.default, aten.transpose.int,
        aten.squeeze.dim, aten.unsqueeze.default, prims.convert_element_type.default,
        aten._to_copy.default, aten.mm.default, aten.bmm.default, aten.addmm.default,
        aten.native_dropout.default, aten.embedding.default,
        aten._scaled_dot_product_flash_attention.default,
        aten._scaled_dot_product_flash_attention_backward.default,
    ]  # fmt: skip
    missing = [str(op) for op in required if op not in ATEN_TABLE]
    assert not missing
    decompositions = decomposition_table(ATEN_TABLE)
    assert not [str(op) for op in ATEN_TABLE if op in decompositions]
    # What the table leaves to decomposition: into ops it has.
    assert aten.native_layer_norm_backward.default in decompositions
    assert aten._native_batch_norm_legit_functional.default in decompositions
