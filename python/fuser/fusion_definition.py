"""FusionDefinition: the Python way to build, inspect and run a fusion,
compatible with nvFuser's FusionDefinition for the common subset.

A definition owns a C++ Fusion (fuser._C.Fusion) that it builds as the
calls come, and a list of records of those calls (fuser._records), from
which it prints itself as Python. It runs through a FusionExecutorCache
(fuser._C.FusionExecutor) made on the first execute().
"""

import threading

import torch

from . import _C
from . import _records as rec
from ._C import DataType, FuserError, ParallelType
from ._values import IterDomain, Scalar, Tensor, TensorDomain
from ._ops import Ops
from .dtypes import to_data_type
from ._layouts import allocation_order, check_stride_order, describe_strides, normalize_contiguity

_NEW = "new"
_DEFINING = "defining"
_DEFINED = "defined"

_NON_INTEGER_TYPES = (
    DataType.Bool,
    DataType.Double,
    DataType.Float,
    DataType.Half,
    DataType.BFloat16,
    DataType.Float8_e4m3fn,
    DataType.Float8_e5m2,
)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _describe_given(value):
    if isinstance(value, torch.Tensor):
        return (
            f"torch.Tensor(dtype={value.dtype}, shape={list(value.shape)}, "
            f"device={value.device})"
        )
    return f"{type(value).__name__} {value!r}"


class FusionDefinition:
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
        self._inputs = []  # Tensors and Scalars, in input order
        self._input_records = {}  # input name -> its Define* record
        self._outputs = []
        self._iter_domains = {}  # C++ name -> IterDomain wrapper
        self._state = _NEW
        self._executor = None
        # Fusion-input positions of the seeds and offsets (in pairs) that
        # execute() draws from torch's default CUDA generator: one pair per
        # random op defined without rng_seed and rng_offset.
        self._generator_slots = []
        # Output position -> the input position it updates in place
        # (add_output(alias_input=)).
        self._aliases = {}
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

    def _operand(self, value, what, position):
        if isinstance(value, (Tensor, Scalar)):
            if value._fd is not self:
                raise FuserError(f"{what}: {value!r} belongs to another FusionDefinition.")
            if isinstance(value, Scalar) and value._pending is not None:
                self._materialize(value)
            return value
        if isinstance(value, (bool, int, float)):
            # Python numbers become constant scalars, as in nvFuser.
            return self.define_scalar(value)
        raise TypeError(
            f"{what}: argument {position} must be a Tensor, a Scalar or a "
            f"Python bool, int or float; got {type(value).__name__}."
        )

    def _tensor_operand(self, value, what, position=1):
        operand = self._operand(value, what, position)
        if not isinstance(operand, Tensor):
            raise FuserError(f"{what}: argument {position} must be a Tensor.")
        return operand

    def _iter_domain_operand(self, value, what):
        if not isinstance(value, IterDomain):
            raise TypeError(f"{what}: expected an IterDomain, got {type(value).__name__}.")
        if value._fd is not self:
            raise FuserError(f"{what}: {value!r} belongs to another FusionDefinition.")
        return value

    @staticmethod
    def _broadcast_flags(tensor):
        return [d.is_broadcast() for d in tensor._val.logical_domain() if not d.is_reduction()]

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
        """
        what = "fd.define_tensor"
        self._check_defining(what)
        if is_cpu:
            raise FuserError(f"{what}: CPU tensors (is_cpu=True) are not supported.")
        dtype = to_data_type(dtype)
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
        """A shape for fd.ops.reshape from ints and integer Scalars (a list
        of them, checked), as nvFuser's define_vector builds one. Vector
        inputs (nvFuser's define_vector(size)) are not supported: declare
        the sizes as scalar inputs, fd.define_scalar(None, dtype=DataType.Int)."""
        what = "fd.define_vector"
        self._check_defining(what)
        if _is_int(values):
            raise FuserError(
                f"{what}({values}): vector inputs are not supported; declare "
                "each size as a scalar input, fd.define_scalar(None, "
                "dtype=DataType.Int), and pass them as numbers to execute."
            )
        if dtype != DataType.Int:
            raise FuserError(f"{what}: vectors hold Int sizes; got dtype={dtype}.")
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

    def define_scalar(self, value=None, dtype=None):
        """A constant scalar, or with value None a scalar input.

        Without a dtype: Bool for a bool, Int for an int, Double otherwise.
        """
        what = "fd.define_scalar"
        self._check_defining(what)
        if value is not None and not isinstance(value, (bool, int, float)):
            raise TypeError(
                f"{what}: the value must be None, a bool, an int or a float; "
                f"got {type(value).__name__}."
            )
        if dtype is None:
            if isinstance(value, bool):
                dtype = DataType.Bool
            elif isinstance(value, int):
                dtype = DataType.Int
            else:
                dtype = DataType.Double
        dtype = to_data_type(dtype)
        if value is not None:
            if dtype in (DataType.Float, DataType.Double, DataType.Half, DataType.BFloat16):
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

    def add_output(self, output, stride_order=None, *, alias_input=None):
        """Makes a tensor an output of the fusion. With ``stride_order`` (as
        in define_tensor: ``stride_order[i]`` ranks dimension i's stride, 0
        the innermost) the output is allocated dense in that order, as
        torch.empty_strided would lay it out. With ``alias_input`` (a tensor
        input of the same type and rank) the output is an in-place update:
        execute() writes it into that input's memory and does not return
        it (an optimizer step's parameter update)."""
        what = "fd.add_output"
        self._check_defining(what)
        tensor = self._operand(output, what, 1)
        if not isinstance(tensor, Tensor):
            raise FuserError(f"{what}: only tensors can be outputs; {tensor.name} is a scalar.")
        self._check_no_expand(tensor, what, tensor._expand)
        if alias_input is not None:
            self._check_alias(tensor, alias_input, stride_order, what)
            position = next(i for i, t in enumerate(self._inputs) if t is alias_input)
            self._aliases[len(self._outputs)] = position
            self._fusion.add_output(tensor._val)
            self._outputs.append(tensor)
            self._records.append(rec.AddOutput(tensor, None, alias_input))
            return
        ids = tensor.logical_domain()
        dims = [d for d, i in enumerate(ids) if not i.is_reduction()]
        stride_order = check_stride_order(stride_order, len(dims), what)
        if stride_order is not None and tensor._val.has_allocation():
            raise FuserError(
                f"{what}: {tensor.name} already has an allocation domain; give "
                "either it or stride_order."
            )
        if stride_order is not None:
            self._allocate_dense_in_order(tensor, stride_order)
        self._fusion.add_output(tensor._val)
        self._outputs.append(tensor)
        self._records.append(rec.AddOutput(tensor, stride_order))

    def _check_alias(self, tensor, alias_input, stride_order, what):
        if not isinstance(alias_input, Tensor) or not any(alias_input is t for t in self._inputs):
            raise FuserError(
                f"{what}: alias_input must be a tensor input of this definition; "
                f"got {alias_input!r}."
            )
        if any(alias_input is self._inputs[i] for i in self._aliases.values()):
            raise FuserError(f"{what}: {alias_input.name} is already the alias of an output.")
        if stride_order is not None:
            raise FuserError(
                f"{what}: an output aliasing {alias_input.name} is laid out as that "
                "input; give no stride_order."
            )
        if tensor.dtype != alias_input.dtype or tensor.ndim != alias_input.ndim:
            raise FuserError(
                f"{what}: {tensor.name} ({tensor.dtype.name}, rank {tensor.ndim}) "
                f"cannot be written into {alias_input.name} ({alias_input.dtype.name}, "
                f"rank {alias_input.ndim}); cast or reshape it to the input's type "
                "and rank."
            )

    def _returned(self, inputs, outputs):
        """The outputs execute() returns: those aliasing an input are copied
        into it instead (their sizes checked) and left out."""
        if not self._aliases:
            return outputs
        for k, i in self._aliases.items():
            target = inputs[i]
            if tuple(target.shape) != tuple(outputs[k].shape):
                raise FuserError(
                    f"execute(): output {k} has shape {list(outputs[k].shape)}, but "
                    f"the input {i} it updates in place has shape "
                    f"{list(target.shape)}."
                )
            target.copy_(outputs[k])
        return [out for k, out in enumerate(outputs) if k not in self._aliases]

    def _allocate_dense_in_order(self, tensor, stride_order):
        """Gives `tensor` an allocation domain dense in `stride_order` (a
        checked permutation), outermost first; reduction axes (no memory)
        after the others."""
        ids = tensor.logical_domain()
        dims = [d for d, i in enumerate(ids) if not i.is_reduction()]
        alloc = [ids[dims[k]] for k in allocation_order(stride_order, len(dims))]
        alloc += [i for i in ids if i.is_reduction()]
        flags = [None if i.is_broadcast() else True for i in alloc]
        self._fusion.set_allocation_domain(tensor._val, [i._val for i in alloc], flags)

    def inputs(self):
        """The inputs (Tensors and Scalars), in the order execute() takes them."""
        return list(self._inputs)

    def outputs(self):
        return list(self._outputs)

    # --- domains -----------------------------------------------------------------
    def split(self, iter_domain, factor, inner_split=True):
        """Splits an axis by `factor` (an int or an integer Scalar) into
        (outer, inner); with inner_split the factor is the inner extent,
        else the outer one. No tensor's domain changes: use the results in
        Tensor.set_allocation_domain."""
        what = "fd.split"
        self._check_defining(what)
        iter_domain = self._iter_domain_operand(iter_domain, what)
        if isinstance(factor, Scalar):
            factor = self._operand(factor, what, 2)
            factor_arg = factor._val
        elif _is_int(factor):
            factor_arg = factor
        else:
            raise TypeError(
                f"{what}: the factor must be an int or a Scalar, got " f"{type(factor).__name__}."
            )
        outer, inner = self._fusion.split(iter_domain._val, factor_arg, bool(inner_split))
        outer, inner = self._iter_domain(outer), self._iter_domain(inner)
        self._records.append(rec.Split(iter_domain, factor, bool(inner_split), outer, inner))
        return outer, inner

    def merge(self, outer, inner):
        """Merges two axes into one (outer-major). No tensor's domain changes."""
        what = "fd.merge"
        self._check_defining(what)
        outer = self._iter_domain_operand(outer, what)
        inner = self._iter_domain_operand(inner, what)
        out = self._iter_domain(self._fusion.merge(outer._val, inner._val))
        self._records.append(rec.Merge(outer, inner, out))
        return out

    def _set_allocation_domain(self, tensor, iter_domains, contiguity):
        what = f"{tensor.name}.set_allocation_domain"
        self._check_defining(what)
        ids = [self._iter_domain_operand(i, what) for i in iter_domains]
        if isinstance(contiguity, bool):
            flags = [None if i.is_broadcast() else contiguity for i in ids]
        else:
            flags = list(contiguity)
            if len(flags) != len(ids):
                raise FuserError(
                    f"{what}: contiguity needs one flag per axis ({len(ids)}), "
                    f"got {len(flags)}."
                )
            for i, (iter_domain, flag) in enumerate(zip(ids, flags)):
                if iter_domain.is_broadcast():
                    flags[i] = None
                elif not isinstance(flag, bool):
                    raise FuserError(
                        f"{what}: contiguity[{i}] must be True or False for "
                        f"{iter_domain!r} (only broadcast axes take None)."
                    )
        self._fusion.set_allocation_domain(tensor._val, [i._val for i in ids], flags)
        self._records.append(rec.SetAllocationDomain(tensor, ids, flags))

    def _parallelize(self, iter_domain, parallel_type):
        what = "IterDomain.parallelize"
        self._check_defining(what)
        if not isinstance(parallel_type, ParallelType):
            raise TypeError(f"{what}: expected a ParallelType, got {parallel_type!r}.")
        iter_domain._val.parallelize(parallel_type)
        self._records.append(rec.Parallelize(iter_domain, parallel_type))

    def _extent(self, iter_domain):
        scalar = Scalar(self, iter_domain._val.extent())
        scalar._pending = rec.Extent(iter_domain, scalar)
        return scalar

    def _size(self, tensor, dim):
        ids = [d for d in tensor._val.logical_domain() if not d.is_reduction()]
        if not _is_int(dim) or not -len(ids) <= dim < len(ids):
            raise FuserError(
                f"{tensor.name}.size: dimension {dim!r} is out of range for " f"rank {len(ids)}."
            )
        dim %= len(ids)
        scalar = Scalar(self, ids[dim].extent())
        scalar._pending = rec.Size(tensor, dim, scalar)
        return scalar

    # --- ops (through fd.ops) ----------------------------------------------------
    def _record_op(self, name, args, kwargs, out):
        self._records.append(rec.Op(name, args, kwargs, out))
        return out

    def _propagate_expand(self, out, inputs):
        """Elementwise ops keep a pending expand where the result is still a
        broadcast."""
        if not isinstance(out, Tensor):
            return
        flags = self._broadcast_flags(out)
        for operand in inputs:
            if isinstance(operand, Tensor):
                for axis, size in operand._expand.items():
                    if axis < len(flags) and flags[axis]:
                        out._expand.setdefault(axis, size)

    @staticmethod
    def _check_no_expand(tensor, what, axes):
        if axes:
            detail = ", ".join(
                f"axis {a} to {s.name if isinstance(s, Scalar) else s}"
                for a, s in sorted(axes.items())
            )
            raise FuserError(
                f"{what}: {tensor.name} has broadcast axes that "
                f"broadcast_in_dim asked to expand ({detail}), and fuser has no "
                "expand yet: combine it with a tensor of the full shape first "
                "(e.g. fd.ops.add), or broadcast to size 1."
            )

    def _elementwise(self, name, operands, call, kwargs=None):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        args = [self._operand(v, what, i + 1) for i, v in enumerate(operands)]
        out = self._wrap(call(*[a._val for a in args]))
        self._propagate_expand(out, args)
        return self._record_op(name, args, kwargs or {}, out)

    def _unary(self, name, arg):
        return self._elementwise(name, [arg], lambda a: self._fusion.unary(name, a))

    def _binary(self, name, lhs, rhs):
        return self._elementwise(name, [lhs, rhs], lambda a, b: self._fusion.binary(name, a, b))

    def _clamp(self, arg, min_value, max_value):
        what = "fd.ops.clamp"
        self._check_defining(what)
        if min_value is None and max_value is None:
            raise FuserError(f"{what}: give min, max or both (torch.clamp needs a bound).")
        x = self._tensor_operand(arg, what)
        lo = None if min_value is None else self._operand(min_value, what, 2)
        hi = None if max_value is None else self._operand(max_value, what, 3)
        out = self._wrap(
            self._fusion.clamp(
                x._val, None if lo is None else lo._val, None if hi is None else hi._val
            )
        )
        self._propagate_expand(out, [a for a in (x, lo, hi) if a is not None])
        return self._record_op("clamp", [x], {"min": lo, "max": hi}, out)

    def _where(self, pred, value1, value2):
        return self._elementwise("where", [pred, value1, value2], self._fusion.where)

    def _cast(self, arg, dtype):
        dtype = to_data_type(dtype)
        return self._elementwise(
            "cast", [arg], lambda a: self._fusion.cast(a, dtype), {"dtype": dtype}
        )

    def _set(self, name, arg):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        make = self._fusion.segment_set if name == "segment_set" else self._fusion.set
        out = self._wrap(make(tensor._val))
        out._expand = dict(tensor._expand)
        return self._record_op(name, [tensor], {}, out)

    def _stride_order(self, arg, stride_order):
        what = "fd.ops.stride_order"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        rank = len([i for i in tensor.logical_domain() if not i.is_reduction()])
        order = check_stride_order(stride_order, rank, what)
        out = self._wrap(self._fusion.set(tensor._val))
        out._expand = dict(tensor._expand)
        if order is not None:
            self._allocate_dense_in_order(out, order)
        kwargs = {"stride_order": [int(s) for s in stride_order]}
        return self._record_op("stride_order", [tensor], kwargs, out)

    def _broadcast(self, arg, is_broadcast_dim):
        what = "fd.ops.broadcast"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        flags = [bool(f) for f in is_broadcast_dim]
        out = self._wrap(self._fusion.broadcast(tensor._val, flags))
        kept = [i for i, f in enumerate(flags) if not f]
        out._expand = {kept[a]: s for a, s in tensor._expand.items() if a < len(kept)}
        return self._record_op("broadcast", [tensor], {"is_broadcast_dim": flags}, out)

    def _squeeze(self, arg, dims):
        what = "fd.ops.squeeze"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = [int(dims)] if _is_int(dims) else [int(d) for d in dims]
        self._check_no_expand(tensor, what, tensor._expand)
        out = self._wrap(self._fusion.squeeze(tensor._val, dims))
        return self._record_op("squeeze", [tensor], {"dims": dims}, out)

    def _unsqueeze(self, arg, dim):
        what = "fd.ops.unsqueeze"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        self._check_no_expand(tensor, what, tensor._expand)
        out = self._wrap(self._fusion.unsqueeze(tensor._val, int(dim)))
        return self._record_op("unsqueeze", [tensor], {"dim": int(dim)}, out)

    def _broadcast_in_dim(self, arg, shape, broadcast_dims):
        what = "fd.ops.broadcast_in_dim"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        shape = [s if _is_int(s) else self._operand(s, what, 2) for s in shape]
        for s in shape:
            if not _is_int(s) and not isinstance(s, Scalar):
                raise TypeError(f"{what}: shape entries must be ints or Scalars.")
        broadcast_dims = [int(d) for d in broadcast_dims]
        rank, out_rank = tensor.ndim, len(shape)
        if len(broadcast_dims) != rank:
            raise FuserError(
                f"{what}: broadcast_dims needs one entry per dimension of "
                f"{tensor.name} ({rank}), got {broadcast_dims}."
            )
        if any(not 0 <= d < out_rank for d in broadcast_dims) or any(
            a >= b for a, b in zip(broadcast_dims, broadcast_dims[1:])
        ):
            raise FuserError(
                f"{what}: broadcast_dims {broadcast_dims} must be increasing "
                f"output dimensions in [0, {out_rank})."
            )

        def is_one(size):
            if isinstance(size, Scalar):
                return size.value() == 1
            return size in (1, -1)

        in_flags = self._broadcast_flags(tensor)
        in_ids = [d for d in tensor._val.logical_domain() if not d.is_reduction()]
        flags = [True] * out_rank
        expand = {}
        for in_axis, out_axis in enumerate(broadcast_dims):
            flags[out_axis] = False
            size = shape[out_axis]
            if in_flags[in_axis]:
                if not is_one(size):
                    expand[out_axis] = size
                elif in_axis in tensor._expand:
                    expand[out_axis] = tensor._expand[in_axis]
            elif _is_int(size) and size != -1:
                extent = in_ids[in_axis].extent().value()
                if extent is not None and extent != size:
                    raise FuserError(
                        f"{what}: dimension {in_axis} of {tensor.name} has size "
                        f"{extent}, which cannot become {size}."
                    )
        for out_axis in range(out_rank):
            if flags[out_axis] and not is_one(shape[out_axis]):
                expand[out_axis] = shape[out_axis]
        if any(flags):
            out = self._wrap(self._fusion.broadcast(tensor._val, flags))
        else:
            out = self._wrap(self._fusion.set(tensor._val))
        out._expand = expand
        return self._record_op(
            "broadcast_in_dim",
            [tensor],
            {"shape": shape, "broadcast_dims": broadcast_dims},
            out,
        )

    def _permute(self, arg, dims):
        what = "fd.ops.permute"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = [int(d) for d in dims]
        out = self._wrap(self._fusion.permute(tensor._val, dims))
        rank = tensor.ndim
        out._expand = {
            i: tensor._expand[d % rank] for i, d in enumerate(dims) if d % rank in tensor._expand
        }
        return self._record_op("permute", [tensor], {"dims": dims}, out)

    def _reshape(self, arg, new_shape):
        what = "fd.ops.reshape"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        self._check_no_expand(tensor, what, tensor._expand)
        sizes, vals = self._sizes_operand(new_shape, what, "new_shape")
        out = self._wrap(self._fusion.reshape(tensor._val, vals))
        return self._record_op("reshape", [tensor], {"new_shape": sizes}, out)

    def _sizes_operand(self, shape, what, name):
        """The sizes `shape` lists (ints or integer Scalars), as recorded
        and as IR values."""
        sizes = []
        for position, size in enumerate(shape):
            if isinstance(size, Scalar) and size.value() is not None:
                size = size.value()
            if isinstance(size, Scalar):
                size = self._operand(size, what, position)
                if size.dtype in _NON_INTEGER_TYPES:
                    raise FuserError(
                        f"{what}: {name} entry {position} ({size.name}) is a "
                        f"{size.dtype.name} scalar; sizes are integers."
                    )
            elif not _is_int(size):
                raise FuserError(
                    f"{what}: {name} entries must be ints or integer Scalars "
                    f"(inputs, or sizes of tensors); got {shape}."
                )
            sizes.append(size)
        vals = [
            size._val if isinstance(size, Scalar) else self._fusion.index_constant(size)
            for size in sizes
        ]
        return sizes, vals

    def _scalar_operand(self, value, what, position):
        operand = self._operand(value, what, position)
        if not isinstance(operand, Scalar):
            raise FuserError(f"{what}: argument {position} must be a Scalar or a number.")
        return operand

    def _full(self, shape, fill_value, dtype):
        what = "fd.ops.full"
        self._check_defining(what)
        sizes, vals = self._sizes_operand(shape, what, "shape")
        value = self._scalar_operand(fill_value, what, 2)
        dtype = to_data_type(dtype)
        out = self._wrap(self._fusion.full(vals, value._val, dtype))
        kwargs = {"shape": sizes, "fill_value": value, "dtype": dtype}
        return self._record_op("full", [], kwargs, out)

    def _iota(self, length, start, step, dtype):
        what = "fd.ops.iota"
        self._check_defining(what)
        (size,), (length_val,) = self._sizes_operand([length], what, "length")
        dtype = to_data_type(dtype)
        ends = []
        for position, value in ((2, start), (3, step)):
            ends.append(None if value is None else self._scalar_operand(value, what, position))
        out = self._wrap(
            self._fusion.iota(
                length_val,
                None if ends[0] is None else ends[0]._val,
                None if ends[1] is None else ends[1]._val,
                dtype,
            )
        )
        kwargs = {"length": size, "start": ends[0], "step": ends[1], "dtype": dtype}
        return self._record_op("iota", [], kwargs, out)

    def _random(self, name, a, b, shape, rng_seed, rng_offset, dtype):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        if (rng_seed is None) != (rng_offset is None):
            raise FuserError(
                f"{what}: give both rng_seed and rng_offset, or neither (then "
                "each execute() draws them from torch's default CUDA generator)."
            )
        # The parameters first, as the printed definition lists them.
        a = self._scalar_operand(a, what, 1)
        b = self._scalar_operand(b, what, 2)
        sizes, vals = self._sizes_operand(shape, what, "shape")
        dtype = to_data_type(dtype)
        if rng_seed is None:
            seed = offset = None
            seed_val, offset_val = self._generator_input(), self._generator_input()
        else:
            seed = self._scalar_operand(rng_seed, what, "rng_seed")
            offset = self._scalar_operand(rng_offset, what, "rng_offset")
            seed_val, offset_val = seed._val, offset._val
        out = self._wrap(
            self._fusion.random(name, vals, a._val, b._val, seed_val, offset_val, dtype)
        )
        kwargs = {"shape": sizes, "rng_seed": seed, "rng_offset": offset, "dtype": dtype}
        return self._record_op(name, [a, b], kwargs, out)

    def _generator_input(self):
        """A fusion input that execute() fills from the generator."""
        self._generator_slots.append(len(self._inputs) + len(self._generator_slots))
        return self._fusion.define_scalar(None, DataType.Int)

    def _with_generator_values(self, inputs):
        """`inputs` with the seed and offsets of the random ops that take
        them from torch's default CUDA generator, whose offset advances by 4
        per op (as torch's own random ops reserve theirs)."""
        if not self._generator_slots:
            return inputs
        generator = torch.cuda.default_generators[torch.cuda.current_device()]
        seed = generator.initial_seed()
        seed = seed - (1 << 64) if seed >= (1 << 63) else seed  # int64 bits
        base = generator.get_offset()
        generator.set_offset(base + 4 * (len(self._generator_slots) // 2))
        values = list(inputs)
        for k, position in enumerate(self._generator_slots):
            values.insert(position, seed if k % 2 == 0 else base + 4 * (k // 2))
        return values

    def _dim_op_operand(self, name, arg, dim):
        """The checks of an op on one tensor along an int `dim`: its name
        for messages and the tensor."""
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        self._check_no_expand(tensor, what, tensor._expand)
        if not _is_int(dim):
            raise FuserError(f"{what}: dim must be an int; got {dim!r}.")
        return what, tensor

    def _slice(self, arg, start_indices, end_indices, strides):
        what = "fd.ops.slice"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        self._check_no_expand(tensor, what, tensor._expand)
        if strides is None:
            strides = [1] * len(start_indices)
        if not len(start_indices) == len(end_indices) == len(strides):
            raise FuserError(
                f"{what}: start_indices, end_indices and strides must have one "
                f"entry per axis; got {len(start_indices)}, {len(end_indices)} "
                f"and {len(strides)}."
            )
        starts, start_vals = self._sizes_operand(start_indices, what, "start_indices")
        ends, end_vals = self._sizes_operand(end_indices, what, "end_indices")
        steps, step_vals = self._sizes_operand(strides, what, "strides")
        out = self._wrap(self._fusion.slice(tensor._val, start_vals, end_vals, step_vals))
        kwargs = {"start_indices": starts, "end_indices": ends, "strides": steps}
        return self._record_op("slice", [tensor], kwargs, out)

    def _pad(self, arg, pad_widths, value):
        what = "fd.ops.pad"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        self._check_no_expand(tensor, what, tensor._expand)
        widths, width_vals = self._sizes_operand(pad_widths, what, "pad_widths")
        fill = None if value is None else self._scalar_operand(value, what, 3)
        out = self._wrap(
            self._fusion.pad(tensor._val, width_vals, None if fill is None else fill._val)
        )
        return self._record_op("pad", [tensor], {"pad_widths": widths, "value": fill}, out)

    def _cat(self, tensors, dim):
        what = "fd.ops.cat"
        self._check_defining(what)
        operands = [self._tensor_operand(t, what, i) for i, t in enumerate(tensors)]
        for operand in operands:
            self._check_no_expand(operand, what, operand._expand)
        if not _is_int(dim):
            raise FuserError(f"{what}: dim must be an int; got {dim!r}.")
        out = self._wrap(self._fusion.cat([t._val for t in operands], int(dim)))
        return self._record_op("cat", [operands], {"dim": int(dim)}, out)

    def _indexing(self, name, arg, index, dim, src=None):
        what, tensor = self._dim_op_operand(name, arg, dim)
        if name == "select":
            position = self._scalar_operand(index, what, 2)
            out = self._wrap(self._fusion.select(tensor._val, int(dim), position._val))
            return self._record_op(name, [tensor, position], {"dim": int(dim)}, out)
        indices = self._tensor_operand(index, what, 2)
        args = [tensor, indices]
        src_val = None
        if name == "scatter":
            source = self._tensor_operand(src, what, 3)
            args.append(source)
            src_val = source._val
        out = self._wrap(self._fusion.indexing(name, tensor._val, int(dim), indices._val, src_val))
        return self._record_op(name, args, {"dim": int(dim)}, out)

    def _scan(self, name, arg, dim, dtype):
        what, tensor = self._dim_op_operand(name, arg, dim)
        dtype = DataType.Null if dtype is None else to_data_type(dtype)
        out = self._wrap(self._fusion.scan(name, tensor._val, int(dim), dtype))
        kwargs = {"dim": int(dim)}
        if dtype != DataType.Null:
            kwargs["dtype"] = dtype
        return self._record_op(name, [tensor], kwargs, out)

    def _triangle(self, name, arg, diagonal):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        self._check_no_expand(tensor, what, tensor._expand)
        if not _is_int(diagonal):
            raise FuserError(f"{what}: diagonal must be an int; got {diagonal!r}.")
        out = self._wrap(self._fusion.triangle(name, tensor._val, int(diagonal)))
        return self._record_op(name, [tensor], {"diagonal": int(diagonal)}, out)

    def _reduction(self, name, arg, dims, keepdim, dtype):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = self._reduction_dims(tensor, dims, what)
        dtype = DataType.Null if dtype is None else to_data_type(dtype)
        out = self._wrap(self._fusion.reduction(name, tensor._val, dims, bool(keepdim), dtype))
        self._keep_expand(tensor, dims, keepdim, (out,))
        return self._record_op(
            name,
            [tensor],
            {"dims": dims, "keepdim": bool(keepdim), "dtype": dtype},
            out,
        )

    def _reduction_dims(self, tensor, dims, what):
        rank = tensor.ndim
        if dims is None:
            dims = list(range(rank))
        elif _is_int(dims):
            dims = [dims]
        else:
            dims = [int(d) for d in dims]
        reduced = {d % rank for d in dims if rank and -rank <= d < rank}
        self._check_no_expand(
            tensor,
            what,
            {a: s for a, s in tensor._expand.items() if a in reduced},
        )
        return dims

    def _keep_expand(self, tensor, dims, keepdim, outs):
        """Pending expands of kept axes carry over to the results."""
        rank = tensor.ndim
        reduced = {d % rank for d in dims if rank and -rank <= d < rank}
        kept = [a for a in range(rank) if keepdim or a not in reduced]
        for out in outs:
            out._expand = {kept.index(a): s for a, s in tensor._expand.items() if a in kept}

    def _matmul(self, arg1, arg2):
        what = "fd.ops.matmul"
        self._check_defining(what)
        a = self._tensor_operand(arg1, what, 1)
        b = self._tensor_operand(arg2, what, 2)
        out = self._wrap(self._fusion.matmul(a._val, b._val))
        return self._record_op("matmul", [a, b], {}, out)

    def _linear(self, arg1, arg2, bias):
        what = "fd.ops.linear"
        self._check_defining(what)
        x = self._tensor_operand(arg1, what, 1)
        weight = self._tensor_operand(arg2, what, 2)
        operands = [x, weight]
        bias_val = None
        if bias is not None:
            bias = self._tensor_operand(bias, what, 3)
            operands.append(bias)
            bias_val = bias._val
        out = self._wrap(self._fusion.linear(x._val, weight._val, bias_val))
        return self._record_op("linear", operands, {}, out)

    def _softmax(self, name, arg, dim):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        self._check_no_expand(tensor, what, tensor._expand)
        if not _is_int(dim):
            raise TypeError(f"{what}: dim must be an int, got {dim!r}.")
        out = self._wrap(self._fusion.softmax(tensor._val, int(dim), name == "log_softmax"))
        return self._record_op(name, [tensor], {"dim": int(dim)}, out)

    def _softmax_backward(self, name, grad, output, dim):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        dy = self._tensor_operand(grad, what, 1)
        y = self._tensor_operand(output, what, 2)
        for tensor in (dy, y):
            self._check_no_expand(tensor, what, tensor._expand)
        if not _is_int(dim):
            raise TypeError(f"{what}: dim must be an int, got {dim!r}.")
        log = name == "log_softmax_backward"
        out = self._wrap(self._fusion.softmax_backward(dy._val, y._val, int(dim), log))
        return self._record_op(name, [dy, y], {"dim": int(dim)}, out)

    def _norm(self, name, arg, normalized_shape, weight, bias, eps):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        x = self._tensor_operand(arg, what, 1)
        if _is_int(normalized_shape):
            normalized_shape = [normalized_shape]
        shape = [int(s) for s in normalized_shape]
        operands = {"weight": weight, "bias": bias} if name == "layer_norm" else {"weight": weight}
        vals = {}
        kwargs = {"normalized_shape": shape}
        for position, (key, value) in enumerate(operands.items(), start=2):
            vals[key] = None
            if value is not None:
                tensor = self._tensor_operand(value, what, position)
                self._check_no_expand(tensor, what, tensor._expand)
                vals[key] = tensor._val
                kwargs[key] = tensor
        self._check_no_expand(x, what, x._expand)
        if not isinstance(eps, (int, float)) or isinstance(eps, bool):
            raise TypeError(f"{what}: eps must be a Python number, got {eps!r}.")
        kwargs["eps"] = float(eps)
        if name == "layer_norm":
            val = self._fusion.layer_norm(x._val, shape, vals["weight"], vals["bias"], float(eps))
        else:
            val = self._fusion.rms_norm(x._val, shape, vals["weight"], float(eps))
        return self._record_op(name, [x], kwargs, self._wrap(val))

    def _welford(self, arg, dims):
        what = "fd.ops.welford"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = self._reduction_dims(tensor, dims, what)
        outs = tuple(self._wrap(v) for v in self._fusion.welford(tensor._val, dims))
        self._keep_expand(tensor, dims, False, outs)
        self._record_op("welford", [tensor], {"dims": dims}, outs)
        return outs

    def _var_mean(self, name, arg, dims, correction, keepdim):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = self._reduction_dims(tensor, dims, what)
        if not _is_int(correction):
            raise TypeError(f"{what}: correction must be an int, got {correction!r}.")
        vals = self._fusion.var_mean(tensor._val, dims, int(correction), bool(keepdim))
        # fd.ops.var names only the variance.
        outs = tuple(self._wrap(v) for v in (vals[:1] if name == "var" else vals))
        self._keep_expand(tensor, dims, keepdim, outs)
        kwargs = {"dims": dims, "correction": int(correction), "keepdim": bool(keepdim)}
        self._record_op(name, [tensor], kwargs, outs if len(outs) > 1 else outs[0])
        return outs if len(outs) > 1 else outs[0]

    # --- running -------------------------------------------------------------------
    def execute(self, inputs, device=None):
        """Runs the fusion on `inputs` (torch.Tensors on a CUDA device and
        Python numbers, in input order) and returns the outputs as a list of
        torch.Tensors. Compiles on the first call for each input signature
        (dtypes, sizes, strides, alignment) and reuses the kernel after."""
        self._ensure_defined("execute()")
        inputs = list(inputs)
        if len(inputs) != len(self._inputs):
            raise FuserError(self._input_count_message(inputs))
        if self._executor is None:
            with self._executor_lock:
                if self._executor is None:
                    self._executor = _C.FusionExecutor(self._fusion)
        if device is None:
            outputs = self._executor.run(self._with_generator_values(inputs))
            return self._returned(inputs, outputs)
        device = self._check_device(device, inputs)
        with torch.cuda.device(device):
            outputs = self._executor.run(self._with_generator_values(inputs))
            return self._returned(inputs, outputs)

    def _describe_input(self, i):
        value = self._inputs[i]
        record = self._input_records[value.name]
        if isinstance(value, Tensor):
            return (
                f"{value.name}: a {record.dtype.name} tensor of shape "
                f"{record.shape} (-1: any size)"
            )
        return f"{value.name}: a {record.dtype.name} scalar"

    def _input_count_message(self, inputs):
        expected = len(self._inputs)
        lines = [
            f"execute(): the fusion takes {expected} input"
            f"{'' if expected == 1 else 's'}, but {len(inputs)} "
            f"{'was' if len(inputs) == 1 else 'were'} given.",
            "  Expected, in this order:",
        ]
        for i in range(expected):
            given = f"given {_describe_given(inputs[i])}" if i < len(inputs) else "MISSING"
            lines.append(f"    {i}: {self._describe_input(i)}; {given}")
        for i in range(expected, len(inputs)):
            lines.append(f"    {i}: unexpected extra input {_describe_given(inputs[i])}")
        return "\n".join(lines)

    @staticmethod
    def _check_device(device, inputs):
        device = torch.device("cuda", device) if _is_int(device) else torch.device(device)
        if device.type != "cuda":
            raise FuserError(f"execute(): fuser runs on CUDA devices, not on {device}.")
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        for i, value in enumerate(inputs):
            if isinstance(value, torch.Tensor) and value.device != device:
                raise FuserError(
                    f"execute(): input {i} is on {value.device}, but "
                    f"device={device} was asked for."
                )
        return device

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

    def last_scheduler_types(self):
        """The scheduler of each segment the most recent execute() ran, in
        run order ("PointWise", "Reduction", "ExprEval", ...): one entry
        when the fusion ran whole."""
        return self._last_run("last_scheduler_types()").scheduler_types()

    def last_scheduled_fusion_ir(self):
        """The scheduled fusion(s) of the most recent execute()."""
        return "\n".join(self._last_run("last_scheduled_fusion_ir()").scheduled_fusion_irs())

    def __str__(self):
        if self._state == _NEW and not self._records and self._has_definition_method():
            self._ensure_defined("print")
        namer = rec.IdNamer()
        body = [r.render(namer) for r in self._records] or ["pass"]
        lines = [
            "from fuser import DataType, FusionDefinition, ParallelType",
            "",
            "",
            "def fuser_fusion(fd: FusionDefinition) -> None:",
        ]
        lines += [f"    {line}" for line in body]
        lines += [
            "",
            "",
            "with FusionDefinition() as fd:",
            "    fuser_fusion(fd)",
        ]
        return "\n".join(lines) + "\n"

    __repr__ = __str__


__all__ = ["FusionDefinition", "IterDomain", "Scalar", "Tensor", "TensorDomain"]
