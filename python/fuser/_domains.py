"""Domains of a FusionDefinition: splitting and merging IterDomains,
setting a tensor's allocation domain, parallelizing an axis, and the extent
and size Scalars read from domains (what Tensor and IterDomain call).

DomainMethods is one of FusionDefinition's bases (fusion_definition.py)."""

from . import _C
from . import _records as rec
from ._C import FuserError, ParallelType
from ._operands import _is_int
from ._values import Scalar


class DomainMethods:
    """FusionDefinition's methods on IterDomains and allocation domains."""

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

    def _set_device_mesh(self, tensor, mesh):
        what = f"{tensor.name}.set_device_mesh"
        self._check_defining(what)
        if not isinstance(mesh, _C.DeviceMesh):
            raise TypeError(
                f"{what}: expected a fuser.multidevice.DeviceMesh, got " f"{type(mesh).__name__}."
            )
        _C._set_device_mesh(tensor._val, mesh)
        self._records.append(rec.SetDeviceMesh(tensor, mesh))

    def _outer_split(self, tensor, axis, factor):
        what = f"{tensor.name}.outer_split"
        self._check_defining(what)
        if not _is_int(axis) or not _is_int(factor):
            raise TypeError(f"{what}: axis and factor must be ints, got {axis!r} and {factor!r}.")
        loop = tensor._val.loop_domain()
        if not -len(loop) <= axis < len(loop):
            raise FuserError(
                f"{what}: axis {axis} is out of range for a loop domain of " f"{len(loop)} axes."
            )
        axis %= len(loop)
        _C._outer_split(self._fusion, tensor._val, axis, factor)
        self._records.append(rec.OuterSplit(tensor, axis, factor))

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
