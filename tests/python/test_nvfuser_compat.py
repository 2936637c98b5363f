"""nvFuser compatibility: the FusionDefinition features nvFuser programs
use (define_scalar(dtype), 0-dim CPU tensor inputs, outputs added more
than once, repro scripts, per-call options) and the package that installs
fuser under nvFuser's module names (fuser.nvfuser_compat, doc/thunder.md),
down to Lightning Thunder building a fuser FusionDefinition. CPU only,
except the tests marked requires_gpu.

Installing the module names changes sys.modules for the whole process, so
the tests that call enable() run in a subprocess."""

import importlib.util
import math
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import fuser
from fuser import DataType, FuserError, FusionDefinition, ParallelType
from fuser.nvfuser_compat import nvfuser as legacy
from fuser.nvfuser_compat import nvfuser_direct
from fuser.nvfuser_compat import options as compat_options
from fuser.nvfuser_compat.options import translate_run_options

from helpers import assert_round_trip, contiguous_tensor, requires_gpu


def provides_nvfuser(path):
    """Whether the folder `path` holds an nvFuser package."""
    return any(
        os.path.isfile(os.path.join(path, name, "__init__.py"))
        for name in ("nvfuser", "nvfuser_direct")
    )


def run_python(source, extra_paths=(), timeout=300):
    """Runs `source` in a fresh interpreter that imports fuser as this one
    does (plus `extra_paths` first on its path). Folders of this process's
    PYTHONPATH that hold a real nvFuser (a benchmark machine puts one
    there) are left out: the tests say which nvFuser the child sees."""
    env = dict(os.environ)
    paths = list(extra_paths) + [os.path.dirname(p) for p in fuser.__path__]
    inherited = [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and not provides_nvfuser(p)
    ]
    env["PYTHONPATH"] = os.pathsep.join(paths + inherited)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- compute_tensor_descriptor (nvFuser's rule) ---------------------------------


@pytest.mark.parametrize("module", [nvfuser_direct, legacy])
def test_tensor_descriptor_of_thunders_examples(module):
    # The two examples of Thunder's compute_contiguity docstring.
    assert module.compute_tensor_descriptor((1, 2, 3), (6, 3, 1)) == ([None, True, True], [2, 1, 0])
    assert module.compute_tensor_descriptor((2, 3, 4), (12, 1, 3)) == (
        [True, True, True],
        [2, 0, 1],
    )


@pytest.mark.parametrize(
    "sizes, strides, contiguity, stride_order",
    [
        # An expanded axis (stride 0, size > 1) keeps its index in the order.
        ((3, 2), (0, 1), [None, True], [1, 0]),
        ((2, 3), (1, 0), [True, None], [1, 0]),
        ((4, 3, 2), (1, 0, 4), [True, None, True], [0, 1, 2]),
        # A size-1 axis with a stride is ordered by it, and is a broadcast.
        ((3, 1), (1, 1), [True, None], [1, 0]),
        ((1, 4), (1, 1), [None, True], [1, 0]),
        # Permuted: a transposed matrix, and channels-last.
        ((3, 2), (1, 3), [True, True], [0, 1]),
        ((2, 3, 4, 5), (60, 1, 15, 3), [True, True, True, True], [3, 0, 2, 1]),
        # Gaps make an axis non-contiguous; equal strides keep their order.
        ((2, 3), (6, 1), [False, True], [1, 0]),
        ((2, 3), (3, 2), [False, False], [1, 0]),
        ((2, 2), (2, 2), [False, False], [1, 0]),
        ((2, 3), (1, 1), [False, True], [1, 0]),
        ((), (), [], []),
    ],
)
def test_tensor_descriptor_cases(sizes, strides, contiguity, stride_order):
    assert nvfuser_direct.compute_tensor_descriptor(sizes, strides) == (contiguity, stride_order)


def test_tensor_descriptor_rejects_negative_strides_and_mismatched_ranks():
    with pytest.raises(FuserError, match=r"negative strides are not supported: strides\[1\]=-1"):
        nvfuser_direct.compute_tensor_descriptor((2, 3), (3, -1))
    with pytest.raises(FuserError, match="same number of dimensions"):
        nvfuser_direct.compute_tensor_descriptor((2, 3), (1,))


def test_tensor_descriptor_describes_what_define_tensor_takes():
    x = torch.empty(2, 3, 4).permute(2, 0, 1)
    contiguity, stride_order = nvfuser_direct.compute_tensor_descriptor(x.shape, x.stride())
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1, -1], contiguity=contiguity, stride_order=stride_order)
        fd.add_output(fd.ops.neg(t))
    reference = FusionDefinition()
    with reference:  # the same fusion, declared from the tensor's layout
        r = reference.from_pytorch(x.to("meta"))
        reference.add_output(reference.ops.neg(r))
    assert fd.fusion_ir() == reference.fusion_ir()


def test_legacy_compute_contiguity_reads_axes_in_logical_order():
    assert legacy.compute_contiguity((2, 3), (3, 1)) == [True, True]
    assert legacy.compute_contiguity((2, 3), (4, 1)) == [False, True]
    # Not reordered: a transposed matrix is read as its logical axes.
    assert legacy.compute_contiguity((2, 3), (1, 2)) == [False, False]
    assert legacy.compute_contiguity((2, 1, 3), (3, 3, 1)) == [True, None, True]
    assert legacy.compute_contiguity((2, 3), (0, 1)) == [None, True]


def test_versions_and_fusion_cache():
    assert nvfuser_direct.version() == "0.2.35"
    assert legacy.version() == "0.2.35"
    assert legacy.FusionCache.reset() is None


# --- define_scalar(dtype) ------------------------------------------------------------


def test_define_scalar_of_a_dtype_is_a_scalar_input():
    with FusionDefinition() as fd:
        t = contiguous_tensor(fd, 1)
        seed = fd.define_scalar(DataType.Int)
        scale = fd.define_scalar(DataType.Double)
        constant = fd.define_scalar(2, DataType.Int)
        fd.add_output(fd.ops.mul(t, scale))
    assert fd.inputs() == [t, seed, scale]
    assert seed.dtype == DataType.Int and seed.value() is None
    assert constant.value() == 2
    assert "S0 = fd.define_scalar(None, dtype=DataType.Int)" in str(fd)
    assert_round_trip(fd)


# --- 0-dim CPU tensor inputs ------------------------------------------------------------


def test_cpu_scalar_tensor_input_is_a_0_dim_tensor():
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        c = fd.define_tensor(shape=[], is_cpu=True, dtype=DataType.Half)
        h = fd.ops.cast(c, DataType.Float)
        fd.add_output(fd.ops.mul(x, fd.ops.broadcast(h, [True, True])))
    assert c.ndim == 0 and c.dtype == DataType.Half
    assert fd.inputs() == [x, c]
    assert (
        "T1 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Half, is_cpu=True)"
        in str(fd)
    )
    assert_round_trip(fd)


def test_cpu_tensor_inputs_other_than_0_dim_are_errors():
    with FusionDefinition() as fd:
        with pytest.raises(FuserError, match="is_cpu=True declares a 0-dim CPU scalar tensor"):
            fd.define_tensor(shape=[-1], contiguity=[True], is_cpu=True)
        with pytest.raises(FuserError, match="no complex scalars"):
            fd.define_tensor(shape=[], is_cpu=True, dtype=DataType.ComplexFloat)
        p = contiguous_tensor(fd, 0)
        c = fd.define_tensor(shape=[], is_cpu=True, dtype=DataType.Float)
        with pytest.raises(FuserError, match="not a CPU scalar tensor"):
            fd.add_output(fd.ops.neg(p), alias_input=c)
        fd.add_output(fd.ops.add(p, c))
    with pytest.raises(FuserError, match=r"input 1 \(T1\) is a 0-dim CPU tensor of torch.float32"):
        fd.execute([torch.empty(()), torch.ones(3)])
    with pytest.raises(FuserError, match="is a 0-dim CPU tensor"):
        fd.execute([torch.empty(()), torch.tensor(1, dtype=torch.int64)])


@requires_gpu
def test_cpu_scalar_tensor_is_passed_by_value():
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        c = fd.define_tensor(shape=[], is_cpu=True, dtype=DataType.Float)
        fd.add_output(fd.ops.mul(x, fd.ops.broadcast(c, [True, True])))
    a = torch.randn(3, 4, device="cuda")
    (out,) = fd.execute([a, torch.tensor(2.5)])
    torch.testing.assert_close(out, a * 2.5)


# --- outputs added more than once -------------------------------------------------------


def test_a_tensor_can_be_added_as_an_output_more_than_once():
    with FusionDefinition() as fd:
        t0 = contiguous_tensor(fd, 1)
        t1 = fd.ops.exp(t0)
        t2 = fd.ops.neg(t0)
        fd.add_output(t1)
        fd.add_output(t2)
        fd.add_output(t1)
    assert fd.outputs() == [t1, t2]
    assert fd._returned_outputs == [0, 1, 0]
    assert str(fd).count("fd.add_output(T1)") == 2
    assert_round_trip(fd)


def test_an_in_place_output_added_again_is_also_returned():
    with FusionDefinition() as fd:
        p = contiguous_tensor(fd, 1)
        g = contiguous_tensor(fd, 1)
        other = fd.ops.mul(g, 2.0)
        fd.add_output(other)
        update = fd.ops.sub(p, g)
        fd.add_output(update, alias_input=p)  # hidden: updates p only
        fd.add_output(update)  # now also returned, after `other`
    assert fd._aliases == {1: 0}
    assert fd._returned_outputs == [0, 1]
    assert_round_trip(fd)


def test_a_returned_output_can_update_an_input_too():
    with FusionDefinition() as fd:
        p = contiguous_tensor(fd, 1)
        update = fd.ops.neg(p)
        fd.add_output(update)
        fd.add_output(update, alias_input=p)
        with pytest.raises(FuserError, match="is already written into T0"):
            fd.add_output(update, alias_input=contiguous_tensor(fd, 1))
    assert fd._aliases == {0: 0} and fd._returned_outputs == [0]


def test_a_repeated_output_keeps_its_layout():
    with FusionDefinition() as fd:
        t = contiguous_tensor(fd, 2)
        u = fd.ops.relu(t)
        fd.add_output(u, stride_order=[0, 1])
        fd.add_output(u, stride_order=[0, 1])
        fd.add_output(u)
        with pytest.raises(FuserError, match="cannot be added again row-major"):
            fd.add_output(u, stride_order=[1, 0])
        with pytest.raises(FuserError, match="is laid out as that input"):
            fd.add_output(u, alias_input=t)
        v = fd.ops.neg(t)
        fd.add_output(v, alias_input=t)
        with pytest.raises(FuserError, match="give no stride_order"):
            fd.add_output(v, stride_order=[0, 1])
    assert fd._returned_outputs == [0, 0, 0]


@requires_gpu
def test_repeated_and_in_place_outputs_at_run_time():
    with FusionDefinition() as fd:
        p = contiguous_tensor(fd, 1)
        g = contiguous_tensor(fd, 1)
        doubled = fd.ops.mul(g, 2.0)
        update = fd.ops.sub(p, g)
        fd.add_output(doubled)
        fd.add_output(update, alias_input=p)
        fd.add_output(update)
        fd.add_output(doubled)
    p_in = torch.randn(8, device="cuda")
    g_in = torch.randn(8, device="cuda")
    expected_update = p_in - g_in
    first, updated, second = fd.execute([p_in, g_in])
    torch.testing.assert_close(first, g_in * 2.0)
    torch.testing.assert_close(second, g_in * 2.0)
    torch.testing.assert_close(p_in, expected_update)
    assert updated is p_in  # the input, updated in place, as nvFuser returns it


# --- repro scripts -------------------------------------------------------------------------


def define_for_repro(fd):
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], stride_order=[0, 1])
    c = fd.define_tensor(shape=[], is_cpu=True, dtype=DataType.Float)
    s = fd.define_scalar(DataType.Double)
    v = fd.define_vector(2)
    y = fd.ops.mul(fd.ops.add(x, fd.ops.broadcast(c, [True, True])), s)
    fd.add_output(fd.ops.reshape(y, v))


REPRO_INPUTS = [
    torch.empty(3, 2).t(),
    torch.tensor(1.5),
    float("-inf"),
    (3, 2),
]


def test_repro_script_defines_the_fusion_and_inputs_and_runs_it_last():
    with FusionDefinition() as fd:
        define_for_repro(fd)
    script = fd.repro_script_for(REPRO_INPUTS)
    compile(script, "<repro script>", "exec")
    assert script.endswith("\nfd.execute(inputs)\n")
    assert str(fd) in script
    assert (
        "torch.testing.make_tensor((6,), dtype=torch.float32, device='cpu')"
        ".as_strided((2, 3), (1, 2))" in script
    )
    assert "torch.testing.make_tensor((), dtype=torch.float32, device='cpu')," in script
    assert '    float("-inf"),\n    [3, 2],\n]\n' in script
    assert not fd.repro_script_for().endswith("fd.execute(inputs)\n")
    with pytest.raises(FuserError, match="save_repro_inputs=True"):
        fd.last_repro_script()
    with pytest.raises(FuserError, match="input 0 is a str"):
        fd.repro_script_for(["x"])


def test_repro_script_of_the_compat_definition_runs_under_nvfusers_names():
    with nvfuser_direct.FusionDefinition() as fd:
        define_for_repro(fd)
    script = fd.repro_script_for(REPRO_INPUTS)
    assert "from nvfuser_direct import DataType, FusionDefinition, ParallelType" in script
    assert "def nvfuser_fusion(fd: FusionDefinition) -> None:" in script
    # Run all but the execute line (no GPU needed) in a fresh process: the
    # script installs the module names itself.
    body = script[: -len("fd.execute(inputs)\n")]
    result = run_python(body + textwrap.dedent("""
            import nvfuser_direct
            assert type(fd) is nvfuser_direct.FusionDefinition
            assert [tuple(t.stride()) for t in inputs[:2]] == [(1, 2), ()]
            print(repr(str(fd)))
            """))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == repr(str(fd))


@requires_gpu
def test_saved_repro_inputs_make_the_last_repro_script():
    with FusionDefinition() as fd:
        x = contiguous_tensor(fd, 2)
        fd.add_output(fd.ops.mul(x, fd.define_scalar(DataType.Double)))
    a = torch.randn(4, 3, device="cuda")
    fd.execute([a, 2.0], save_repro_inputs=True)
    assert [type(v).__name__ for v in fd.fake_inputs] == ["FakeTensor", "float"]
    script = fd.last_repro_script()
    assert "torch.testing.make_tensor((4, 3), dtype=torch.float32, device='cuda:0')" in script
    result = run_python(script + "print(fd.execute(inputs)[0].shape)\n")
    assert result.returncode == 0, result.stderr
    assert "torch.Size([4, 3])" in result.stdout


# --- per-call options ----------------------------------------------------------------------


def test_execute_rejects_unknown_option_names_listing_fusers():
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.neg(contiguous_tensor(fd, 1)))
    with pytest.raises(FuserError, match="unknown option 'fuse_matmul'.*outer_persistent"):
        fd.execute([torch.empty(2)], _enable_options=["fuse_matmul"])
    with pytest.raises(FuserError, match="FUSER_DISABLE takes are: inner_outer_persistent"):
        fd.execute([torch.empty(2)], _disable_options=["kernel_reuse"])
    with pytest.raises(TypeError, match="list of option names"):
        fd.execute([torch.empty(2)], _enable_options="outer_persistent")


def test_nvfuser_option_names_in_fusers_terms(monkeypatch):
    monkeypatch.setattr(compat_options, "_warned", set())
    # Thunder's test_enable_disable_options passes these three: fuser's
    # matmul scheduler is on already, matmul_expr_eval is fuser's option
    # too, and kernel_reuse does not change results.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        options = translate_run_options(["fuse_matmul"], ["matmul_expr_eval", "kernel_reuse"])
        again = translate_run_options(["outer_persistent"], ["kernel_reuse"])
    assert options == ([], ["matmul_expr_eval"])
    assert again == (["outer_persistent"], [])
    assert [str(w.message) for w in caught] == [
        "nvFuser's disable option 'kernel_reuse' is ignored: it changes nvFuser's reuse "
        "of a kernel for new input sizes, which fuser does not have; results are unchanged."
    ]
    with pytest.raises(FuserError, match="enable option 'no_such_option' is neither fuser's"):
        translate_run_options(["no_such_option"], None)


# --- fd.fusion and multidevice ----------------------------------------------------------------


def test_fusion_inputs_take_nvfusers_scheduling_calls():
    def define(fd):
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.define_vector(2)
        fd.add_output(fd.ops.relu(x))
        return x

    mesh = nvfuser_direct.multidevice.DeviceMesh(torch.tensor([0]))
    assert mesh.size == 1 and mesh.devices == [0]
    with nvfuser_direct.FusionDefinition() as fd:
        define(fd)
        inputs = fd.fusion.inputs()
        assert len(inputs) == 3  # the tensor and the vector's two entries
        tv = inputs[0]
        tv.set_device_mesh(mesh)
        with pytest.raises(FuserError, match="pass inner_split=False"):
            tv.split(0, mesh.size)
        tv.split(0, mesh.size, inner_split=False)
        tv.axis(0).parallelize(ParallelType.mesh_x)
        tv.set_allocation_domain(tv.get_loop_domain(), new_contiguity=True)
    with FusionDefinition() as reference:
        x = define(reference)
        x.set_device_mesh(fuser.multidevice.DeviceMesh([0]))
        x.outer_split(0, 1)
        x.axis(0).parallelize(ParallelType.mesh_x)
        x.set_allocation_domain(x.loop_domain(), contiguity=True)
    assert str(fd).replace("nvfuser_direct", "fuser").replace("nvfuser_fusion", "fuser_fusion") == (
        str(reference)
    )
    assert fd.fusion_ir() == reference.fusion_ir()
    assert fd.fusion.outputs()[0].ndim == 2


def test_device_mesh_takes_a_tensor_of_ranks():
    mesh = nvfuser_direct.multidevice.DeviceMesh(torch.tensor([1, 0]))
    assert mesh.devices == [1, 0] and isinstance(mesh, fuser.multidevice.DeviceMesh)
    with pytest.raises(FuserError, match="1-D integer tensor"):
        nvfuser_direct.multidevice.DeviceMesh(torch.tensor([[0, 1]]))


# --- enable(): installing the module names ------------------------------------------------------


def test_enable_installs_both_modules_and_may_be_called_twice():
    result = run_python("""
        import sys
        import fuser.nvfuser_compat as compat
        assert not compat.is_enabled()
        compat.enable()
        compat.enable()
        import nvfuser, nvfuser_direct
        from nvfuser_direct import (
            DataType, FusionDefinition, ParallelType, execute_with_dtensors, multidevice,
        )
        from nvfuser_direct.multidevice import DeviceMesh
        from nvfuser import compute_tensor_descriptor, FusionCache
        assert nvfuser_direct is compat.nvfuser_direct and nvfuser is compat.nvfuser
        assert DeviceMesh is compat.multidevice.DeviceMesh
        print(nvfuser_direct.version(), compat.is_enabled())
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0.2.35", "True"]


@pytest.fixture
def fake_nvfuser(tmp_path):
    """A folder holding a package named nvfuser_direct, as an nvFuser
    installation would provide."""
    package = tmp_path / "nvfuser_direct"
    package.mkdir()
    (package / "__init__.py").write_text("REAL = True\n")
    return str(tmp_path)


def test_enable_refuses_to_hide_an_installed_nvfuser(fake_nvfuser):
    result = run_python(
        """
        import fuser
        import fuser.nvfuser_compat as compat
        try:
            compat.enable()
        except fuser.FuserError as error:
            print(error)
        import nvfuser_direct
        print("real" if getattr(nvfuser_direct, "REAL", False) else "fuser")
        """,
        extra_paths=[fake_nvfuser],
    )
    assert result.returncode == 0, result.stderr
    assert "an nvFuser installation provides nvfuser_direct" in result.stdout
    assert os.path.join(fake_nvfuser, "nvfuser_direct") in result.stdout
    assert "enable(replace=True)" in result.stdout
    assert result.stdout.strip().endswith("real")


def test_enable_replace_puts_fuser_in_the_installations_place(fake_nvfuser):
    result = run_python(
        """
        import fuser.nvfuser_compat as compat
        compat.enable(replace=True)
        compat.enable()  # again, without replace: already installed
        import nvfuser_direct
        print(nvfuser_direct is compat.nvfuser_direct)
        with nvfuser_direct.FusionDefinition() as fd:
            pass
        print("enable(replace=True)" in fd.repro_script_for([]))
        """,
        extra_paths=[fake_nvfuser],
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]


def test_enable_refuses_once_a_real_nvfuser_is_imported(fake_nvfuser):
    result = run_python(
        """
        import nvfuser_direct
        import fuser
        import fuser.nvfuser_compat as compat
        try:
            compat.enable(replace=True)
        except fuser.FuserError as error:
            print(error)
        """,
        extra_paths=[fake_nvfuser],
    )
    assert result.returncode == 0, result.stderr
    assert "nvfuser_direct is already imported" in result.stdout
    assert "before `import thunder`" in result.stdout


def test_pytest_plugin_installs_the_module_names(tmp_path):
    test_file = tmp_path / "test_uses_nvfuser.py"
    test_file.write_text(
        "import nvfuser_direct\n\n\n"
        "def test_module():\n"
        "    assert nvfuser_direct.version() == '0.2.35'\n"
        "    assert type(nvfuser_direct.FusionDefinition()).__module__.startswith('fuser.')\n"
    )
    result = run_python(f"""
        import sys
        import pytest
        sys.exit(pytest.main(
            ["-q", "-p", "fuser.nvfuser_compat.pytest_plugin", "-p", "no:cacheprovider",
             {str(test_file)!r}]
        ))
        """)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


# --- Lightning Thunder -----------------------------------------------------------------------

requires_thunder = pytest.mark.skipif(
    importlib.util.find_spec("thunder") is None, reason="Lightning Thunder is not installed"
)

# Thunder registers its nvFuser executor only when CUDA is available, and
# asks the device's compute capability for its fp8 checks: both are
# answered as on an H100, so that a machine without a GPU gets as far as
# building FusionDefinitions (not running them).
THUNDER_PROLOGUE = """
import torch
torch.cuda.is_available = lambda: True
torch.cuda.get_device_capability = lambda *args, **kwargs: (9, 0)
import fuser.nvfuser_compat
fuser.nvfuser_compat.enable()
import thunder
from thunder.extend import get_executor
"""


@requires_thunder
def test_thunder_registers_fuser_as_its_nvfuser_executor():
    result = run_python(THUNDER_PROLOGUE + """
executor = get_executor("nvfuser")
print(type(executor).__name__, executor.version)
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["nvFuserExecutor", "0.2.35"]


@requires_thunder
def test_thunder_builds_a_fuser_fusion_definition():
    # A trace of CUDA tensor proxies (no data): add, multiply by a number
    # input, exp, and a copy_ into the first input whose result is also
    # returned (the in-place output added twice). Thunder's fusion pass
    # makes the region, and its wrapper's get_fd builds the definition for
    # the layouts Thunder describes through nvfuser.compute_tensor_descriptor.
    result = run_python(THUNDER_PROLOGUE + """
import thunder.executors.nvfuserex_impl as impl
from thunder.core import devices, dtypes, prims
from thunder.core.proxies import FloatProxy, TensorProxy
from thunder.core.trace import TraceCtx, tracectx

trace = TraceCtx()
with tracectx(trace):
    cuda = devices.Device("cuda:0")
    a = TensorProxy("a", shape=(4, 3), device=cuda, dtype=dtypes.float32)
    b = TensorProxy("b", shape=(4, 3), device=cuda, dtype=dtypes.float32)
    s = FloatProxy("s", value=2.0)
    trace.args = (a, b, s)
    for proxy in (a, b, s):
        prims.unpack_trivial(proxy, name=proxy.name)
    result = prims.copy_(prims.exp(prims.mul(prims.add(a, b), s)), a, grad_enabled=False)
    prims.python_return(result)

fused = get_executor("nvfuser").fusion_pass(trace)
(region,) = [bsym for bsym in fused.bound_symbols if bsym.sym.name.startswith("nvFusion")]
wrapper = region._call_ctx[region.sym.name]
layouts = [torch.empty(4, 3, device="meta"), torch.empty(3, 4, device="meta").t(), 2.0]
fd = wrapper.get_fd(impl.to_runtime_descriptors(layouts))
print(type(fd).__module__, type(fd).__name__)
print(fd._returned_outputs, fd._aliases)
print(str(fd))
""")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "fuser.nvfuser_compat.fusion_definition FusionDefinition"
    assert lines[1] == "[0] {0: 0}"
    text = "\n".join(lines[2:])
    for expected in [
        "from nvfuser_direct import DataType, FusionDefinition, ParallelType",
        "T0 = fd.define_tensor(shape=[4, 3], contiguity=[True, True], dtype=DataType.Float)",
        "T1 = fd.define_tensor(shape=[4, 3], contiguity=[True, True], dtype=DataType.Float, "
        "stride_order=[0, 1])",
        "S0 = fd.define_scalar(None, dtype=DataType.Double)",
        "fd.ops.exp(",
        "fd.add_output(T5, alias_input=T0)\n    fd.add_output(T5)",
    ]:
        assert expected in text, text


@requires_thunder
@requires_gpu
def test_thunder_jit_runs_through_fuser():
    result = run_python("""
import torch
import fuser.nvfuser_compat
fuser.nvfuser_compat.enable()
import thunder

def f(a, b, c):
    return (a + b).exp() * c

jitted = thunder.jit(f)
a, b = torch.randn(4, 3, device="cuda"), torch.randn(3, 4, device="cuda").t()
torch.testing.assert_close(jitted(a, b, 2.0), f(a, b, 2.0))
trace = thunder.last_traces(jitted)[-1]
(region,) = [bsym for bsym in trace.bound_symbols if bsym.sym.name.startswith("nvFusion")]
print(type(region._call_ctx[region.sym.name].last_used).__module__)
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "fuser.nvfuser_compat.fusion_definition"


@requires_gpu
def test_execute_with_dtensors_on_a_one_rank_mesh():
    # One process, one GPU: Thunder's placement of the input, an output
    # placed the same way, and an output left unplaced (an error).
    result = run_python("""
import os
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor

import fuser
import fuser.multidevice
import fuser.nvfuser_compat
fuser.nvfuser_compat.enable()
from nvfuser_direct import FusionDefinition, ParallelType, execute_with_dtensors, multidevice

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
torch.cuda.set_device(0)
dist.init_process_group("nccl", rank=0, world_size=1)
mesh = init_device_mesh("cuda", (1,))
x = distribute_tensor(torch.randn(4, 3, device="cuda"), mesh, [Shard(0)])


def define(place_output):
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.relu(t))
        nv_mesh = multidevice.DeviceMesh(mesh.mesh)
        placed = fd.fusion.inputs() + (fd.fusion.outputs() if place_output else [])
        for tv in placed:
            tv.set_device_mesh(nv_mesh)
            tv.split(0, nv_mesh.size, inner_split=False)
            tv.axis(0).parallelize(ParallelType.mesh_x)
    return fd


(out,) = execute_with_dtensors(define(True), [x])
assert out.placements == (Shard(0),) and out.device_mesh == mesh
torch.testing.assert_close(out.full_tensor(), x.full_tensor().relu())
try:
    execute_with_dtensors(define(False), [x])
except fuser.FuserError as error:
    print(error)
fuser.multidevice.use_process_group(None)
dist.destroy_process_group()
""")
    assert result.returncode == 0, result.stderr
    assert "output 0 (T1) has no device mesh" in result.stdout


# --- fd.ops with nvFuser's meanings (nvfuser_compat/ops.py) ---------------------


def test_compat_div_of_integers_truncates_and_indices_may_be_floats():
    from fuser.nvfuser_compat.fusion_definition import FusionDefinition as CompatDefinition

    with CompatDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int32)
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        w = fd.define_tensor(shape=[-1, 1], contiguity=[True, None])  # float index
        q = fd.ops.div(a, a)
        t = fd.ops.div(x, 2.0)
        g = fd.ops.take_along_axis(x, w, 1)
        fd.add_output(q)
        fd.add_output(t)
        fd.add_output(g)
    assert q.dtype == DataType.Int32  # nvFuser's integer division
    assert t.dtype == DataType.Float
    text = str(fd)
    assert "fd.ops.trunc_div(T0, T0)" in text
    assert "fd.ops.cast(T2, dtype=DataType.Int)" in text
    # fuser's own fd.ops.div is torch.div: true division.
    with FusionDefinition() as plain:
        b = plain.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int32)
        assert plain.ops.div(b, b).dtype == DataType.Float
