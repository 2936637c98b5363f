"""0-dim CPU tensor inputs of a FusionDefinition
(``fd.define_tensor(shape=[], is_cpu=True, dtype=...)``), as PyTorch ops
take ``torch.tensor(2.0)`` next to CUDA tensors.

Fuser runs on the GPU only, so such an input is a scalar input of the C++
fusion, and the definition hands out a 0-dim tensor filled with it
(``full([], scalar)``): the ops see a 0-dim tensor, as in nvFuser.
execute() takes the 0-dim CPU tensor in that position and passes its value
(``.item()``).

CpuScalarInputs is one of FusionDefinition's bases (fusion_definition.py)."""

import torch

from . import _records as rec
from ._C import DataType, FuserError
from ._execution import _describe_given
from ._values import Tensor
from .dtypes import to_torch_dtype


def _scalar_type_for(dtype, what):
    """The type of the scalar input that carries a CPU tensor of `dtype`:
    the Python number .item() gives."""
    if dtype == DataType.Bool:
        return DataType.Bool
    torch_dtype = to_torch_dtype(dtype)
    if torch_dtype.is_complex:
        raise FuserError(
            f"{what}: a complex CPU scalar tensor cannot be an input: fuser has complex "
            "tensors but no complex scalars. Move it to the GPU (a CUDA tensor input)."
        )
    return DataType.Double if torch_dtype.is_floating_point else DataType.Int


class CpuScalarInputs:
    """FusionDefinition's 0-dim CPU tensor inputs."""

    def _define_cpu_scalar_tensor(self, shape, contiguity, dtype, stride_order, what):
        if shape is None or list(shape) != [] or contiguity or stride_order:
            raise FuserError(
                f"{what}: is_cpu=True declares a 0-dim CPU scalar tensor (shape=[], no "
                f"contiguity or stride_order); got shape={shape!r}, "
                f"contiguity={contiguity!r}, stride_order={stride_order!r}. Other CPU "
                "tensors are not supported: move them to the GPU."
            )
        scalar = self._fusion.define_scalar(None, _scalar_type_for(dtype, what))
        tensor = self._new_tensor(self._fusion.full([], scalar, dtype))
        record = rec.DefineCpuScalarTensor(tensor, dtype)
        self._records.append(record)
        self._inputs.append(tensor)
        self._input_records[tensor.name] = record
        return tensor

    def _is_cpu_scalar_input(self, value):
        return isinstance(value, Tensor) and isinstance(
            self._input_records.get(value.name), rec.DefineCpuScalarTensor
        )

    def _with_cpu_scalar_values(self, inputs):
        """`inputs` with each 0-dim CPU tensor given for a CPU scalar input
        replaced by its value; anything else there is an error."""
        positions = [i for i, v in enumerate(self._inputs) if self._is_cpu_scalar_input(v)]
        if not positions:
            return inputs
        values = list(inputs)
        for i in positions:
            given = inputs[i]
            declared = self._inputs[i]
            expected = to_torch_dtype(self._input_records[declared.name].dtype)
            if (
                not isinstance(given, torch.Tensor)
                or given.device.type != "cpu"
                or given.dim() != 0
                or given.dtype != expected
            ):
                raise FuserError(
                    f"execute(): input {i} ({declared.name}) is a 0-dim CPU tensor of "
                    f"{expected}; got {_describe_given(given)}. Pass "
                    f"torch.tensor(value, dtype={expected}) (on the CPU, 0-dim); other "
                    "CPU tensors are not supported: move them to the GPU."
                )
            values[i] = given.item()
        return values
