"""fd.ops of the compatibility FusionDefinition: fuser's, with nvFuser's
meaning where the two differ (doc/thunder.md, "Where nvFuser's ops mean
something else"):

* ``div`` of two integer operands divides as C's ``/`` (nvFuser's
  integer division, which Thunder's integer ``div`` relies on), where
  fuser's ``div`` is torch.div (true division);
* the indexing ops take a floating-point index as nvFuser does (Thunder's
  cross-entropy builds its gather index with a float ``where``), cast to
  int64; fuser's own ops ask for integer indices, as torch does.
"""

from fuser._C import DataType
from fuser._ops import Ops
from fuser._values import Tensor

_INTEGER_TYPES = (
    DataType.Int,
    DataType.Int32,
    DataType.Int16,
    DataType.Int8,
    DataType.UInt8,
    DataType.Bool,
)
_FLOAT_TYPES = (DataType.Float, DataType.Double, DataType.Half, DataType.BFloat16)


def _is_integer(value):
    if isinstance(value, Tensor):
        return value.dtype in _INTEGER_TYPES
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return dtype in _INTEGER_TYPES
    return isinstance(value, int)


class CompatOps(Ops):
    """Ops under nvFuser's meanings (module docstring)."""

    def div(self, arg1, arg2):
        if _is_integer(arg1) and _is_integer(arg2):
            return self.trunc_div(arg1, arg2)
        return super().div(arg1, arg2)

    def _integer_index(self, index):
        if isinstance(index, Tensor) and index.dtype in _FLOAT_TYPES:
            return self.cast(index, DataType.Int)
        return index

    def take_along_axis(self, arg, index, dim):
        return super().take_along_axis(arg, self._integer_index(index), dim)

    def gather(self, arg, index, dim):
        return super().gather(arg, self._integer_index(index), dim)

    def index_select(self, arg, index, dim):
        return super().index_select(arg, self._integer_index(index), dim)
