"""Records of a FusionDefinition: one per call that built it, in order.

Printing a definition renders its records as Python source that re-creates
it (FusionDefinition.__str__). Tensors and scalars are named by the record
that made them (T0, S1, ...); iteration domains are named while rendering:
by the split or merge that made them (I0, I1, ...) or by where they sit in a
tensor's domains (T0.logical_domain()[0]).
"""

import math

from ._C import DataType, DeviceMesh, ParallelType


def render_value(value, namer):
    """Python source for an argument of a record."""
    from ._values import IterDomain, Scalar, Tensor, Vector

    if isinstance(value, (Tensor, Scalar, Vector)):
        return value.name
    if isinstance(value, IterDomain):
        return namer.id_expr(value)
    if isinstance(value, DataType):
        return f"DataType.{value.name}"
    if isinstance(value, ParallelType):
        return f"ParallelType.{value.name}"
    if isinstance(value, DeviceMesh):
        return f"DeviceMesh({list(value.devices)!r})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render_value(v, namer) for v in value) + "]"
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, complex):
        return f"complex({render_value(value.real, namer)}, {render_value(value.imag, namer)})"
    raise TypeError(f"cannot print {value!r} in a fusion definition")


class IdNamer:
    """Names iteration domains while records are rendered in order."""

    def __init__(self):
        self._names = {}
        self._count = 0

    def new_name(self, iter_domain):
        name = f"I{self._count}"
        self._count += 1
        self._names[iter_domain.key] = name
        return name

    def add_tensor(self, tensor):
        """Names the domains of a tensor that just got defined."""
        for kind in ("logical", "root", "loop"):
            domain = getattr(tensor, f"{kind}_domain")()
            for i, iter_domain in enumerate(domain):
                self._names.setdefault(iter_domain.key, f"{tensor.name}.{kind}_domain()[{i}]")

    def id_expr(self, iter_domain):
        try:
            return self._names[iter_domain.key]
        except KeyError:
            raise RuntimeError(
                f"cannot print {iter_domain!r}: it is not reachable from a "
                "tensor's root, logical or loop domain or a split or merge of "
                "this definition"
            ) from None


class Record:
    def render(self, namer):
        raise NotImplementedError


class DefineTensor(Record):
    def __init__(self, out, shape, contiguity, dtype, stride_order):
        self.out = out
        self.shape = shape
        self.contiguity = contiguity
        self.dtype = dtype
        self.stride_order = stride_order

    def render(self, namer):
        args = [
            f"shape={render_value(self.shape, namer)}",
            f"contiguity={render_value(self.contiguity, namer)}",
            f"dtype={render_value(self.dtype, namer)}",
        ]
        if self.stride_order is not None:
            args.append(f"stride_order={render_value(self.stride_order, namer)}")
        text = f"{self.out.name} = fd.define_tensor({', '.join(args)})"
        namer.add_tensor(self.out)
        return text


class DefineScalar(Record):
    def __init__(self, out, value, dtype):
        self.out = out
        self.value = value
        self.dtype = dtype

    def render(self, namer):
        return (
            f"{self.out.name} = fd.define_scalar("
            f"{render_value(self.value, namer)}, "
            f"dtype={render_value(self.dtype, namer)})"
        )


class DefineVector(Record):
    """A vector input, then its entries by name (a vector is a list)."""

    def __init__(self, out, dtype):
        self.out = out
        self.dtype = dtype

    def render(self, namer):
        text = (
            f"{self.out.name} = fd.define_vector({len(self.out)}, "
            f"dtype={render_value(self.dtype, namer)})"
        )
        if not self.out:
            return text
        entries = ", ".join(s.name for s in self.out) + ("," if len(self.out) == 1 else "")
        return f"{text}\n{entries} = {self.out.name}"


class Op(Record):
    """fd.ops.<name>(*args, **kwargs) -> out."""

    def __init__(self, name, args, kwargs, out):
        self.name = name
        self.args = list(args)
        self.kwargs = dict(kwargs)
        self.out = out

    def render(self, namer):
        from ._values import Tensor

        args = [render_value(a, namer) for a in self.args]
        args += [f"{k}={render_value(v, namer)}" for k, v in self.kwargs.items()]
        outs = self.out if isinstance(self.out, tuple) else (self.out,)
        names = ", ".join(out.name for out in outs)
        text = f"{names} = fd.ops.{self.name}({', '.join(args)})"
        for out in outs:
            if isinstance(out, Tensor):
                namer.add_tensor(out)
        return text


class AddOutput(Record):
    def __init__(self, tensor, stride_order=None, alias_input=None):
        self.tensor = tensor
        self.stride_order = stride_order
        self.alias_input = alias_input

    def render(self, namer):
        if self.alias_input is not None:
            return f"fd.add_output({self.tensor.name}, alias_input={self.alias_input.name})"
        if self.stride_order is None:
            return f"fd.add_output({self.tensor.name})"
        return f"fd.add_output({self.tensor.name}, stride_order={self.stride_order})"


class Split(Record):
    def __init__(self, iter_domain, factor, inner_split, outer, inner):
        self.iter_domain = iter_domain
        self.factor = factor
        self.inner_split = inner_split
        self.outer = outer
        self.inner = inner

    def render(self, namer):
        source = namer.id_expr(self.iter_domain)
        factor = render_value(self.factor, namer)
        outer = namer.new_name(self.outer)
        inner = namer.new_name(self.inner)
        return (
            f"{outer}, {inner} = fd.split({source}, {factor}, " f"inner_split={self.inner_split!r})"
        )


class Merge(Record):
    def __init__(self, outer, inner, out):
        self.outer = outer
        self.inner = inner
        self.out = out

    def render(self, namer):
        outer = namer.id_expr(self.outer)
        inner = namer.id_expr(self.inner)
        return f"{namer.new_name(self.out)} = fd.merge({outer}, {inner})"


class SetAllocationDomain(Record):
    def __init__(self, tensor, iter_domains, contiguity):
        self.tensor = tensor
        self.iter_domains = list(iter_domains)
        self.contiguity = list(contiguity)

    def render(self, namer):
        return (
            f"{self.tensor.name}.set_allocation_domain("
            f"{render_value(self.iter_domains, namer)}, "
            f"contiguity={render_value(self.contiguity, namer)})"
        )


class Parallelize(Record):
    def __init__(self, iter_domain, parallel_type):
        self.iter_domain = iter_domain
        self.parallel_type = parallel_type

    def render(self, namer):
        return (
            f"{namer.id_expr(self.iter_domain)}.parallelize("
            f"{render_value(self.parallel_type, namer)})"
        )


class SetDeviceMesh(Record):
    def __init__(self, tensor, mesh):
        self.tensor = tensor
        self.mesh = mesh

    def render(self, namer):
        return f"{self.tensor.name}.set_device_mesh({render_value(self.mesh, namer)})"


class OuterSplit(Record):
    """A split of a tensor's loop axis into `factor` outer parts."""

    def __init__(self, tensor, axis, factor):
        self.tensor = tensor
        self.axis = axis
        self.factor = factor

    def render(self, namer):
        return f"{self.tensor.name}.outer_split({self.axis}, {self.factor})"


class Extent(Record):
    """A scalar read from an iteration domain (IterDomain.extent())."""

    def __init__(self, iter_domain, out):
        self.iter_domain = iter_domain
        self.out = out

    def render(self, namer):
        return f"{self.out.name} = {namer.id_expr(self.iter_domain)}.extent()"


class Size(Record):
    """A scalar read from a tensor's shape (Tensor.size(dim))."""

    def __init__(self, tensor, dim, out):
        self.tensor = tensor
        self.dim = dim
        self.out = out

    def render(self, namer):
        return f"{self.out.name} = {self.tensor.name}.size({self.dim})"


class DefineCpuScalarTensor(Record):
    """A 0-dim CPU tensor input (define_tensor(is_cpu=True)); its scalar
    input and the fill that makes it a tensor are not printed."""

    def __init__(self, out, dtype):
        self.out = out
        self.dtype = dtype
        self.shape = []

    def render(self, namer):
        text = (
            f"{self.out.name} = fd.define_tensor(shape=[], contiguity=[], "
            f"dtype={render_value(self.dtype, namer)}, is_cpu=True)"
        )
        namer.add_tensor(self.out)
        return text
