"""FusionDefinition: the Python way to build, inspect and run a fusion,
compatible with nvFuser's FusionDefinition for the common subset.

A definition owns a C++ Fusion (fuser._C.Fusion) that it builds as the
calls come, and a list of records of those calls (fuser._records), from
which it prints itself as Python. It runs through a FusionExecutorCache
(fuser._C.FusionExecutor) made on the first execute().

This module holds the class's core: the ``with`` block, inputs, constants
and outputs, execute() and inspection. Its other methods come from its
bases, one module per concept:

* _operands.py: the checks of op arguments and the op bookkeeping;
* _domains.py: split, merge, allocation domains, parallelize, extents;
* _movement_ops.py and _compute_ops.py: what fd.ops.* (_ops.py) calls;
* _execution.py: execute()'s input checks, vector inputs and the random
  ops' generator slots;
* _cpu_scalars.py: 0-dim CPU tensor inputs (define_tensor(is_cpu=True));
* _outputs.py: add_output, outputs added more than once, and the outputs
  that update inputs (alias_input);
* _scripts.py: printing as Python (str(fd)) and repro scripts;
* _options.py: the scheduling options execute() takes per call.
"""

import functools
import threading

import torch

from . import _C
from . import _records as rec
from ._C import DataType, FuserError, FuserInternalError
from ._C import ParallelType  # noqa: F401 - importable from here, as before the split
from ._compute_ops import ComputeOps
from ._cpu_scalars import CpuScalarInputs
from ._domains import DomainMethods
from ._execution import ExecutionSupport
from ._layouts import check_stride_order, describe_strides, normalize_contiguity
from ._movement_ops import MovementOps
from ._operands import _COMPLEX_SCALARS, OperandChecks, _is_int
from ._ops import Ops
from ._options import check_run_options
from ._outputs import OutputBookkeeping
from ._scripts import ScriptPrinting
from ._values import IterDomain, Scalar, Tensor, TensorDomain, Vector
from .dtypes import to_data_type

_NEW = "new"
_DEFINING = "defining"
_DEFINED = "defined"


@functools.lru_cache(maxsize=None)
def _failure_repro_dumped():
    """FUSER_DUMP=failure_repro, read once, as fuser reads FUSER_DUMP."""
    return _C.is_dump_enabled("failure_repro")


class FusionDefinition(
    OperandChecks,
    DomainMethods,
    MovementOps,
    ComputeOps,
    ExecutionSupport,
    CpuScalarInputs,
    OutputBookkeeping,
    ScriptPrinting,
):
    """Defines a fusion in a ``with`` block, then runs it.

    ::

        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                                  dtype=DataType.Float)
            t1 = fd.ops.mul(t0, 2.0)
            fd.add_output(t1)
        out, = fd.execute([torch.randn(2, 3, device="cuda")])

    A subclass may instead define the fusion in a ``definition(self)``
    method, which the first execute() (or print) calls.
    """

    def __init__(self):
        self._fusion = _C.Fusion()
        self._records = []
        self._num_tensors = 0
        self._num_scalars = 0
        self._num_vectors = 0
        self._inputs = []  # Tensors, Scalars and Vectors, in input order
        self._input_records = {}  # input name -> its Define* record
        self._init_outputs()
        self._iter_domains = {}  # C++ name -> IterDomain wrapper
        self._state = _NEW
        self._executor = None
        # Fusion-input positions of the seeds and offsets (in pairs) that
        # execute() draws from torch's default CUDA generator: one pair per
        # random op defined without rng_seed and rng_offset.
        self._generator_slots = []
        # Fake copies of the inputs of the last execute(save_repro_inputs=True).
        self.fake_inputs = None
        # execute() may be called from several threads at once: one
        # executor (a thread-safe cache) is made for all of them.
        self._executor_lock = threading.Lock()
        self.ops = Ops(self)

    # --- the with block ------------------------------------------------------
    def __enter__(self):
        if self._state == _DEFINED:
            raise FuserError(
                "This FusionDefinition is already defined; create a new "
                "FusionDefinition for another fusion."
            )
        if self._state == _DEFINING:
            raise FuserError("This FusionDefinition is already being defined.")
        self._state = _DEFINING
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        # After an exception the definition stays open for another with block.
        self._state = _DEFINED if exc_type is None else _NEW
        return False

    def definition(self):
        """Override in a subclass to define the fusion (as with nvFuser)."""
        raise NotImplementedError

    def _has_definition_method(self):
        return type(self).definition is not FusionDefinition.definition

    def _define_for_printing(self):
        if self._state == _NEW and not self._records and self._has_definition_method():
            self._ensure_defined("print")

    def _ensure_defined(self, what):
        if self._state == _DEFINED:
            return
        if self._state == _NEW and not self._records and self._has_definition_method():
            with self:
                self.definition()
            return
        if self._state == _DEFINING:
            raise FuserError(
                f"{what}: the definition is still open; call {what} after the "
                "`with FusionDefinition() as fd:` block."
            )
        raise FuserError(
            f"{what}: the fusion is not defined: define it in a "
            "`with FusionDefinition() as fd:` block first (an exception in "
            "that block leaves it undefined)."
        )

    def _check_defining(self, what):
        if self._state != _DEFINING:
            state = "already closed" if self._state == _DEFINED else "not open"
            raise FuserError(
                f"{what}: the definition is {state}; build fusions inside "
                "`with FusionDefinition() as fd:`."
            )

    # --- naming and wrapping ---------------------------------------------------
    def _new_tensor(self, val):
        tensor = Tensor(self, val, f"T{self._num_tensors}")
        self._num_tensors += 1
        return tensor

    def _next_scalar_name(self):
        name = f"S{self._num_scalars}"
        self._num_scalars += 1
        return name

    def _wrap(self, val):
        if val.is_tensor():
            return self._new_tensor(val)
        return Scalar(self, val, self._next_scalar_name())

    def _iter_domain(self, handle):
        wrapper = self._iter_domains.get(handle.name)
        if wrapper is None:
            wrapper = IterDomain(self, handle)
            self._iter_domains[handle.name] = wrapper
        return wrapper

    def _materialize(self, scalar):
        """Adds the record of a scalar read from a domain when it is used."""
        record, scalar._pending = scalar._pending, None
        scalar._name = self._next_scalar_name()
        self._records.append(record)

    # --- inputs, constants and outputs -------------------------------------------
    def define_tensor(
        self,
        shape=None,
        contiguity=None,
        dtype=DataType.Float,
        is_cpu=False,
        stride_order=None,
        *,
        sizes=None,
        strides=None,
        static_sizes=False,
    ):
        """Declares an input tensor, in one of nvFuser's two forms:

        * ``shape`` (-1: any size, 1: a broadcast axis, n: exactly n),
          ``contiguity`` (in allocation order; a bool for all axes, or one
          flag per axis with None for broadcast axes and for expanded ones,
          of any size and stride 0, read through their stride; default: all
          False)
          and ``stride_order`` (``stride_order[i]`` ranks axis i's stride,
          0 being the innermost; default: row-major);
        * ``sizes`` and ``strides`` of an example tensor, from which the
          contiguity and stride order are computed (sizes become -1 except
          1, unless ``static_sizes``).

        ``is_cpu=True`` (with ``shape=[]``) declares a 0-dim CPU tensor,
        such as ``torch.tensor(2.0)``, which execute() takes by value.
        """
        what = "fd.define_tensor"
        self._check_defining(what)
        dtype = to_data_type(dtype)
        if is_cpu:
            return self._define_cpu_scalar_tensor(shape, contiguity, dtype, stride_order, what)
        if sizes is not None or strides is not None:
            if shape is not None or contiguity is not None or stride_order is not None:
                raise TypeError(
                    f"{what}: give either shape/contiguity/stride_order or "
                    "sizes/strides, not both."
                )
            if sizes is None or strides is None:
                raise TypeError(f"{what}: sizes and strides go together.")
            shape, contiguity, stride_order = describe_strides(
                list(sizes), list(strides), static_sizes, what
            )
        elif shape is None:
            raise TypeError(f"{what}: missing the shape (or sizes and strides).")
        shape = list(shape)
        for size in shape:
            if not _is_int(size) or size < -1:
                raise FuserError(
                    f"{what}: shape entries must be -1 (any size) or a "
                    f"non-negative int; got {size!r} in {shape}."
                )
        stride_order = check_stride_order(stride_order, len(shape), what)
        contiguity = normalize_contiguity(shape, contiguity, stride_order, what)
        val = self._fusion.define_tensor(shape, contiguity, dtype, stride_order or [])
        tensor = self._new_tensor(val)
        record = rec.DefineTensor(tensor, shape, contiguity, dtype, stride_order)
        self._records.append(record)
        self._inputs.append(tensor)
        self._input_records[tensor.name] = record
        return tensor

    def from_pytorch(self, tensor, static_sizes=False):
        """Declares an input tensor like `tensor` (dtype, sizes, strides)."""
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(
                f"fd.from_pytorch: expected a torch.Tensor, got {type(tensor).__name__}."
            )
        # A meta tensor describes a layout without data; a CPU tensor could
        # not be passed to execute.
        if tensor.device.type not in ("cuda", "meta"):
            raise FuserError(
                f"fd.from_pytorch: the tensor is on {tensor.device}; fuser runs on "
                "CUDA tensors only. Declare it from the tensor on the GPU "
                "(tensor.cuda()), as it will be passed to execute, or from a "
                "meta tensor of its layout."
            )
        return self.define_tensor(
            sizes=list(tensor.shape),
            strides=list(tensor.stride()),
            dtype=to_data_type(tensor.dtype),
            static_sizes=static_sizes,
        )

    def define_vector(self, values, dtype=DataType.Int):
        """A list of sizes for fd.ops.reshape, slice or pad, as nvFuser's
        define_vector builds one: from a list of ints and integer Scalars
        (checked), or, given an int `size`, a vector input of that many
        sizes, which execute() takes as one list (or tuple, or torch.Size)
        of ints in its place among the inputs."""
        what = "fd.define_vector"
        self._check_defining(what)
        if dtype != DataType.Int:
            raise FuserError(f"{what}: vectors hold Int sizes; got dtype={dtype}.")
        if _is_int(values):
            return self._define_vector_input(int(values), what)
        vector = []
        for position, value in enumerate(values):
            if isinstance(value, Scalar):
                vector.append(self._operand(value, what, position))
            elif _is_int(value):
                vector.append(int(value))
            else:
                raise FuserError(
                    f"{what}: entries must be ints or integer Scalars; entry "
                    f"{position} is {value!r}."
                )
        return vector

    def _define_vector_input(self, size, what):
        if size < 0:
            raise FuserError(f"{what}({size}): a vector input has a size >= 0.")
        scalars = []
        for _ in range(size):
            val = self._fusion.define_scalar(None, DataType.Int)
            scalars.append(Scalar(self, val, self._next_scalar_name()))
        vector = Vector(scalars, f"V{self._num_vectors}")
        self._num_vectors += 1
        record = rec.DefineVector(vector, DataType.Int)
        self._records.append(record)
        self._inputs.append(vector)
        self._input_records[vector.name] = record
        return vector

    def define_scalar(self, value=None, dtype=None):
        """A constant scalar, or with value None a scalar input of `dtype`;
        ``define_scalar(DataType.X)`` (nvFuser's form) is a scalar input of
        type X too.

        Without a dtype: Bool for a bool, Int for an int, ComplexDouble for
        a complex, Double otherwise. Complex scalars are constants (a
        complex scalar input is a FuserError: pass a 0-dim complex tensor).
        """
        what = "fd.define_scalar"
        self._check_defining(what)
        if isinstance(value, DataType) and dtype is None:
            value, dtype = None, value
        if value is not None and not isinstance(value, (bool, int, float, complex)):
            raise TypeError(
                f"{what}: the value must be None, a bool, an int, a float or a "
                f"complex; got {type(value).__name__}."
            )
        if dtype is None:
            if isinstance(value, bool):
                dtype = DataType.Bool
            elif isinstance(value, int):
                dtype = DataType.Int
            elif isinstance(value, complex):
                dtype = DataType.ComplexDouble
            else:
                dtype = DataType.Double
        dtype = to_data_type(dtype)
        complex_type = dtype in (DataType.ComplexFloat, DataType.ComplexDouble)
        if complex_type and value is None:
            raise FuserError(
                f"{what}: fuser's complex scalars are constants; got an input of "
                f"dtype={dtype}. Pass the value as a 0-dim complex tensor input "
                "instead (fd.define_tensor(shape=[], dtype=...))."
            )
        if isinstance(value, complex) and not complex_type:
            raise FuserError(_COMPLEX_SCALARS.format(what=what, value=value))
        if value is not None:
            if complex_type:
                value = complex(value)
            elif dtype in (DataType.Float, DataType.Double, DataType.Half, DataType.BFloat16):
                value = float(value)
            elif dtype in (DataType.Int, DataType.Int32):
                value = int(value)
            elif dtype == DataType.Bool:
                value = bool(value)
        val = self._fusion.define_scalar(value, dtype)
        scalar = Scalar(self, val, self._next_scalar_name())
        record = rec.DefineScalar(scalar, value, dtype)
        self._records.append(record)
        if value is None:
            self._inputs.append(scalar)
            self._input_records[scalar.name] = record
        return scalar

    def inputs(self):
        """The inputs (Tensors, Scalars and Vectors), in the order execute()
        takes them."""
        return list(self._inputs)

    # --- running -------------------------------------------------------------------
    def execute(
        self,
        inputs,
        device=None,
        *,
        save_repro_inputs=False,
        _enable_options=None,
        _disable_options=None,
    ):
        """Runs the fusion on `inputs` (torch.Tensors on a CUDA device,
        0-dim CPU tensors where define_tensor(is_cpu=True) declared them,
        Python numbers and lists of ints, in input order) and returns the
        outputs as a list of torch.Tensors. Compiles on the first call for
        each input signature (dtypes, sizes, strides, alignment) and reuses
        the kernel after.

        ``device``: the CUDA device to run on (an index or a torch.device).
        ``save_repro_inputs``: keeps fake copies of the inputs as
        ``fd.fake_inputs`` for ``fd.last_repro_script()``.
        ``_enable_options`` / ``_disable_options``: option names as
        FUSER_ENABLE / FUSER_DISABLE take them, for this call only."""
        self._ensure_defined("execute()")
        inputs = list(inputs)
        if len(inputs) != len(self._inputs):
            raise FuserError(self._input_count_message(inputs))
        enable, disable = check_run_options(_enable_options, _disable_options)
        values = self._with_vector_entries(self._with_cpu_scalar_values(inputs))
        if save_repro_inputs:
            self._save_fake_inputs(inputs)
        if self._executor is None:
            with self._executor_lock:
                if self._executor is None:
                    if _C._is_multi_device(self._fusion):
                        from .multidevice import _ensure_process_group

                        _ensure_process_group()
                    self._executor = _C.FusionExecutor(self._fusion)
        if device is None:
            return self._returned(inputs, self._run(inputs, values, enable, disable))
        device = self._check_device(device, values)
        with torch.cuda.device(device):
            return self._returned(inputs, self._run(inputs, values, enable, disable))

    def _run(self, inputs, values, enable, disable):
        values = self._with_generator_values(values)
        if not _failure_repro_dumped():
            if enable or disable:
                return self._executor.run(values, enable, disable)
            return self._executor.run(values)
        # FUSER_DUMP=failure_repro (csrc/base/options.h): the script that
        # reproduces a fuser bug this run met (an internal error, or a
        # segment whose kernel failed and which ran with ATen).
        fallbacks = _C.kernel_fallback_count()
        try:
            outputs = self._executor.run(values, enable, disable)
        except FuserInternalError:
            self._print_repro(inputs)
            raise
        if _C.kernel_fallback_count() > fallbacks:
            self._print_repro(inputs)
        return outputs

    def _print_repro(self, inputs):
        print("[failure_repro]\n" + self.repro_script_for(inputs), flush=True)

    def _compile_off_device(self, inputs):
        """What a cache miss for `inputs` does up to the launch, without a
        GPU (csrc/runtime/off_device_compile.h): segmentation, each
        segment's scheduler, lowering and NVRTC. `inputs` as execute()
        takes them, on any device (CPU or meta tensors do). Returns, per
        segment, (scheduler name, kernel CUDA C++, what failed or "")."""
        self._ensure_defined("_compile_off_device()")
        return _C._compile_off_device(self._fusion, self._off_device_values(inputs))

    def _off_device_values(self, inputs):
        """`inputs` as the C++ fusion takes them, for the calls that run no
        kernel: vector entries spread, 0-dim CPU scalars read, the random
        ops' seed and offsets added."""
        values = self._with_vector_entries(self._with_cpu_scalar_values(list(inputs)))
        return self._with_generator_values(values)

    def _evaluate_with_aten(self, inputs, rewritten=False):
        """The outputs for `inputs`, computed op by op with ATen on the
        inputs' device (CPU tensors do; csrc/runtime/aten_evaluator.h): the
        reference the tests compare kernels with, and a check of a
        definition's math without a GPU. `inputs` as execute() takes them;
        random ops draw what the kernels draw. With `rewritten`, of the
        fusion as the rewrites before segmentation leave it
        (csrc/segmentation/preseg_passes.h)."""
        self._ensure_defined("_evaluate_with_aten()")
        return _C._evaluate_with_aten(
            self._fusion, self._off_device_values(inputs), rewritten
        )

    def _evaluate_segments_with_aten(self, inputs):
        """The outputs for `inputs`, the definition's segments for them
        evaluated one after another with ATen on the inputs' device (CPU
        tensors do; csrc/runtime/off_device_compile.h): checks
        segmentation, apart from the kernels, without a GPU."""
        self._ensure_defined("_evaluate_segments_with_aten()")
        return _C._evaluate_segments_with_aten(self._fusion, self._off_device_values(inputs))

    # --- inspection --------------------------------------------------------------------
    def fusion_ir(self):
        """The fusion as defined: inputs, outputs, math and every domain."""
        return str(self._fusion)

    def generate_cuda(self):
        """The CUDA C++ of the fusion as defined (unscheduled, so serial),
        lowered on the CPU: no GPU needed. The kernel that execute() runs
        is scheduled for its inputs: see last_cuda_code()."""
        if self._state != _DEFINING:
            self._ensure_defined("generate_cuda()")
        return self._fusion.generate_cuda()

    def _last_run(self, what):
        if self._executor is None or not self._executor.has_run():
            raise FuserError(
                f"{what}: this FusionDefinition has not been executed yet, so "
                "there is no kernel. Call fd.execute(inputs) first, or "
                "fd.generate_cuda() for the CUDA C++ of the fusion as defined "
                "(no GPU needed)."
            )
        return self._executor

    def last_cuda_code(self):
        """The CUDA C++ of the kernel(s) the most recent execute() ran."""
        codes = [c for c in self._last_run("last_cuda_code()").kernel_codes() if c]
        if not codes:
            raise FuserError(
                "last_cuda_code(): the most recent execute() launched no "
                "generated kernel (the fusion was run without one)."
            )
        return "\n".join(codes)

    def last_communications(self):
        """The collectives of a multi-device fusion (doc/multidevice.md), in
        run order, e.g. "Allgather on DeviceMesh{0 1}, input axis 0"."""
        return self._last_run("last_communications()").communications()

    def last_scheduler_types(self):
        """The scheduler of each segment the most recent execute() ran, in
        run order ("PointWise", "Reduction", "ExprEval", ...): one entry
        when the fusion ran whole."""
        return self._last_run("last_scheduler_types()").scheduler_types()

    def last_scheduled_fusion_ir(self):
        """The scheduled fusion(s) of the most recent execute()."""
        return "\n".join(self._last_run("last_scheduled_fusion_ir()").scheduled_fusion_irs())


__all__ = ["FusionDefinition", "IterDomain", "Scalar", "Tensor", "TensorDomain", "Vector"]
