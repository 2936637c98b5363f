"""Op argument checkers and helpers: how a FusionDefinition turns the
arguments of its methods and of fd.ops.* into checked operands (Tensors,
Scalars, IterDomains, sizes, dims) and records an op.

OperandChecks is one of FusionDefinition's bases (fusion_definition.py)."""

from . import _records as rec
from ._C import DataType, FuserError
from ._values import IterDomain, Scalar, Tensor, Vector

_NON_INTEGER_TYPES = (
    DataType.Bool,
    DataType.Double,
    DataType.Float,
    DataType.Half,
    DataType.BFloat16,
    DataType.Float8_e4m3fn,
    DataType.Float8_e5m2,
    DataType.ComplexFloat,
    DataType.ComplexDouble,
)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


_COMPLEX_SCALARS = (
    "{what}: {value!r} is a complex number, but the dtype asked for is not a "
    "complex type. Give dtype=DataType.ComplexFloat or DataType.ComplexDouble "
    "(or no dtype)."
)


class OperandChecks:
    """FusionDefinition's checks of operands and its op bookkeeping."""

    def _operand(self, value, what, position):
        if isinstance(value, (Tensor, Scalar)):
            if value._fd is not self:
                raise FuserError(f"{what}: {value!r} belongs to another FusionDefinition.")
            if isinstance(value, Scalar) and value._pending is not None:
                self._materialize(value)
            return value
        if isinstance(value, (bool, int, float, complex)):
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
        if isinstance(shape, Vector):
            sizes = shape  # recorded by its name
        vals = [
            size._val if isinstance(size, Scalar) else self._fusion.index_constant(size)
            for size in sizes
        ]
        return sizes, vals

    def _optional_tensor_operands(self, what, named, start):
        """{name: Tensor or None} for the (name, value) pairs `named`, the
        first at argument position `start`."""
        return {
            name: None if value is None else self._tensor_operand(value, what, position)
            for position, (name, value) in enumerate(named, start=start)
        }

    @staticmethod
    def _check_bools(what, **flags):
        for name, flag in flags.items():
            if not isinstance(flag, bool):
                raise TypeError(f"{what}: {name} must be a bool; got {flag!r}.")

    def _scalar_operand(self, value, what, position):
        operand = self._operand(value, what, position)
        if not isinstance(operand, Scalar):
            raise FuserError(f"{what}: argument {position} must be a Scalar or a number.")
        return operand

    def _dim_op_operand(self, name, arg, dim, dim_name="dim"):
        """The checks of an op on one tensor with an int parameter `dim`
        (named `dim_name` in messages: an axis, a diagonal): its name for
        messages and the tensor."""
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        if not _is_int(dim):
            raise FuserError(f"{what}: {dim_name} must be an int; got {dim!r}.")
        return what, tensor

    # --- recording ---------------------------------------------------------------
    def _record_op(self, name, args, kwargs, out):
        self._records.append(rec.Op(name, args, kwargs, out))
        return out

    def _reduction_dims(self, tensor, dims, what):
        rank = tensor.ndim
        if dims is None:
            dims = list(range(rank))
        elif _is_int(dims):
            dims = [dims]
        else:
            dims = [int(d) for d in dims]
        return dims
