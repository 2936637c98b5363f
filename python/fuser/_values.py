"""What a FusionDefinition hands out: Tensor, Scalar, IterDomain and
TensorDomain. Each wraps a handle to a node of the definition's C++ Fusion
(fuser._C) and knows its definition, which records what is done with it."""

from . import _C
from ._C import DataType


class _Operand:
    """Arithmetic operators, recorded as fd.ops calls."""

    __slots__ = ()

    def __add__(self, other):
        return self._fd.ops.add(self, other)

    def __radd__(self, other):
        return self._fd.ops.add(other, self)

    def __sub__(self, other):
        return self._fd.ops.sub(self, other)

    def __rsub__(self, other):
        return self._fd.ops.sub(other, self)

    def __mul__(self, other):
        return self._fd.ops.mul(self, other)

    def __rmul__(self, other):
        return self._fd.ops.mul(other, self)

    def __truediv__(self, other):
        return self._fd.ops.div(self, other)

    def __rtruediv__(self, other):
        return self._fd.ops.div(other, self)

    def __pow__(self, other):
        return self._fd.ops.pow(self, other)

    def __rpow__(self, other):
        return self._fd.ops.pow(other, self)

    def __neg__(self):
        return self._fd.ops.neg(self)

    def __abs__(self):
        return self._fd.ops.abs(self)


class Tensor(_Operand):
    """A tensor of a FusionDefinition (an input or the result of an op)."""

    __slots__ = ("_fd", "_val", "name")

    def __init__(self, fd, val, name):
        self._fd = fd
        self._val = val
        self.name = name

    @property
    def ndim(self):
        """The number of dimensions (reduced axes excluded)."""
        return self._val.ndim

    @property
    def dtype(self):
        return self._val.dtype

    def __repr__(self):
        return f"Tensor({self.name}: {self._val}, dtype=DataType.{self.dtype.name})"

    # --- domains -------------------------------------------------------------
    def _ids(self, handles):
        return [self._fd._iter_domain(h) for h in handles]

    def domain(self):
        """The TensorDomain: every domain of this tensor."""
        return TensorDomain(self)

    def axis(self, i):
        """Loop axis i (the loop domain is the logical one unless scheduled)."""
        return self._fd._iter_domain(self._val.axis(i))

    def logical_domain(self):
        return self._ids(self._val.logical_domain())

    def root_domain(self):
        """The root domain (the logical one when the tensor has no root)."""
        return self._ids(self._val.root_domain())

    def allocation_domain(self):
        """The allocation domain (the logical one when none is set)."""
        return self._ids(self._val.allocation_domain())

    def loop_domain(self):
        return self._ids(self._val.loop_domain())

    def has_allocation(self):
        return self._val.has_allocation()

    def contiguity(self):
        """One flag per allocation axis: True, False, or None (broadcast)."""
        return self._val.contiguity()

    def set_allocation_domain(self, iter_domains, contiguity=True):
        """Sets how the tensor lies in memory: `iter_domains` outermost
        first, made from the logical domain by fd.split / fd.merge and
        covering it exactly; `contiguity` is a bool for every axis or one
        flag per axis (None for broadcast axes)."""
        self._fd._set_allocation_domain(self, iter_domains, contiguity)

    # --- devices (doc/multidevice.md) -----------------------------------------
    def set_device_mesh(self, mesh):
        """Places the tensor on `mesh` (a fuser.multidevice.DeviceMesh): its
        axis parallelized with ParallelType.mesh_x (DIDx) is split across the
        mesh's devices; without one every device holds all of it."""
        self._fd._set_device_mesh(self, mesh)

    def outer_split(self, axis, factor):
        """Splits loop axis `axis` into `factor` outer parts (usually the
        mesh size), then axis(axis) is the outer part: parallelize it with
        ParallelType.mesh_x to shard the tensor."""
        self._fd._outer_split(self, axis, factor)

    def device_mesh(self):
        """The mesh the tensor is placed on (an empty one if none)."""
        return _C._device_mesh(self._val)

    def size(self, dim):
        """The extent of dimension `dim` as a Scalar."""
        return self._fd._size(self, dim)

    def shape(self):
        """The extents of all dimensions, as Scalars."""
        return [self.size(i) for i in range(self.ndim)]


class Scalar(_Operand):
    """A scalar of a FusionDefinition: a constant, an input or a result."""

    __slots__ = ("_fd", "_val", "_name", "_pending")

    def __init__(self, fd, val, name=None, pending=None):
        self._fd = fd
        self._val = val
        self._name = name
        # A record that defines this scalar once it is used (extent() and
        # size() are queries until then).
        self._pending = pending

    @property
    def name(self):
        if self._name is None:
            raise RuntimeError("this scalar is not part of the definition yet")
        return self._name

    @property
    def dtype(self):
        return self._val.dtype

    def value(self):
        """The value of a constant, else None."""
        return self._val.value()

    def __repr__(self):
        name = self._name if self._name is not None else "?"
        return (
            f"Scalar({name}: {self._val}, value={self.value()!r}, "
            f"dtype=DataType.{self.dtype.name})"
        )


class Vector(list):
    """A vector input of a FusionDefinition (fd.define_vector(size)): a list
    of its Int scalar inputs, usable wherever a list of sizes is; execute()
    takes one list of `size` ints in its place."""

    def __init__(self, scalars, name):
        super().__init__(scalars)
        self.name = name

    def __repr__(self):
        return f"Vector({self.name}: {[s.name for s in self]})"


class IterDomain:
    """One axis of a tensor's domain (an iteration domain)."""

    __slots__ = ("_fd", "_val")

    def __init__(self, fd, val):
        self._fd = fd
        self._val = val

    @property
    def key(self):
        """Identifies the C++ IterDomain within its fusion."""
        return self._val.name

    def __eq__(self, other):
        return isinstance(other, IterDomain) and self._fd is other._fd and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"IterDomain({self._val})"

    def extent(self):
        """The extent as a Scalar."""
        return self._fd._extent(self)

    def is_broadcast(self):
        return self._val.is_broadcast()

    def is_reduction(self):
        return self._val.is_reduction()

    @property
    def parallel_type(self):
        return self._val.parallel_type

    def parallelize(self, parallel_type):
        self._fd._parallelize(self, parallel_type)

    def split(self, factor, inner_split=True):
        """Splits this axis by `factor`; returns (outer, inner). Touches no
        tensor's domains: use the results in set_allocation_domain."""
        return self._fd.split(self, factor, inner_split=inner_split)

    def merge(self, inner):
        """Merges this axis (outer) with `inner`; returns the merged axis."""
        return self._fd.merge(self, inner)


class TensorDomain:
    """The domains of a tensor (a view; it follows later changes)."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def logical(self):
        return self._tensor.logical_domain()

    def root(self):
        return self._tensor.root_domain()

    def allocation(self):
        return self._tensor.allocation_domain()

    def loop(self):
        return self._tensor.loop_domain()

    def contiguity(self):
        return self._tensor.contiguity()

    def axis(self, i):
        return self._tensor.axis(i)

    def __len__(self):
        return len(self._tensor.loop_domain())

    def __getitem__(self, i):
        return self.loop()[i]

    def __str__(self):
        return self._tensor._val.domain_string()

    def __repr__(self):
        return f"TensorDomain({self._tensor.name}):\n{self}"


__all__ = ["DataType", "IterDomain", "Scalar", "Tensor", "TensorDomain"]
