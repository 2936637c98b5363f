"""``fd.fusion`` of the compatibility FusionDefinition: nvFuser's Fusion
object as far as programs written for nvfuser_direct use it (its inputs
and outputs), with its TensorViews' scheduling methods spelled as nvFuser
spells them, on top of fuser's Tensor (fuser/_values.py, fuser/_domains.py).

Thunder's DTensor path places each input on a device mesh this way::

    for tv in fd.fusion.inputs():
        tv.set_device_mesh(mesh)
        tv.split(dim, mesh.size, inner_split=False)
        tv.axis(dim).parallelize(ParallelType.mesh_x)
        tv.set_allocation_domain(tv.get_loop_domain(), new_contiguity=True)
"""

from fuser import FuserError, Tensor, Vector


class TensorView:
    """nvFuser's TensorView methods on a fuser Tensor of a definition."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __repr__(self):
        return f"TensorView({self.tensor!r})"

    @property
    def ndim(self):
        return self.tensor.ndim

    @property
    def dtype(self):
        return self.tensor.dtype

    def set_device_mesh(self, mesh):
        self.tensor.set_device_mesh(mesh)

    def split(self, axis, factor, inner_split=True):
        """Splits loop axis `axis`. fuser splits a tensor's loop domain only
        into `factor` outer parts (inner_split=False), which is how a tensor
        is spread over a device mesh."""
        if inner_split:
            raise FuserError(
                f"{self.tensor.name}.split({axis}, {factor}, inner_split=True): fuser "
                "schedules fusions itself and splits a tensor's loop axis only into outer "
                "parts over a device mesh; pass inner_split=False (the factor being the "
                "mesh size)."
            )
        self.tensor.outer_split(axis, factor)

    def axis(self, i):
        return self.tensor.axis(i)

    def get_loop_domain(self):
        return self.tensor.loop_domain()

    def get_logical_domain(self):
        return self.tensor.logical_domain()

    def get_allocation_domain(self):
        return self.tensor.allocation_domain()

    def set_allocation_domain(self, iter_domains, new_contiguity=True):
        self.tensor.set_allocation_domain(iter_domains, contiguity=new_contiguity)


def _as_nvfuser_values(values):
    """Tensors as TensorViews; a vector input as its scalars, as nvFuser
    defines a vector input as that many scalar inputs."""
    result = []
    for value in values:
        if isinstance(value, Tensor):
            result.append(TensorView(value))
        elif isinstance(value, Vector):
            result.extend(value)
        else:
            result.append(value)
    return result


class FusionView:
    """What ``fd.fusion`` offers: the fusion's inputs and outputs."""

    __slots__ = ("_fd",)

    def __init__(self, fd):
        self._fd = fd

    def inputs(self):
        """The inputs in the order execute() takes them (a vector input
        as its entries): TensorViews and Scalars."""
        return _as_nvfuser_values(self._fd.inputs())

    def outputs(self):
        return _as_nvfuser_values(self._fd.outputs())
