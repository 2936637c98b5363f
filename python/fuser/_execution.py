"""Execute-time machinery of a FusionDefinition: the inputs execute()
checks (count, device), the vector inputs' entries, and the seeds and
offsets that random ops defined without rng_seed/rng_offset take from
torch's default CUDA generator (the generator slots). The outputs, and the
copy of in-place updates into their inputs, are in _outputs.py.

ExecutionSupport is one of FusionDefinition's bases (fusion_definition.py)."""

import torch

from ._C import DataType, FuserError
from ._operands import _is_int
from ._values import Tensor, Vector


def _describe_given(value):
    if isinstance(value, torch.Tensor):
        return (
            f"torch.Tensor(dtype={value.dtype}, shape={list(value.shape)}, "
            f"device={value.device})"
        )
    return f"{type(value).__name__} {value!r}"


class ExecutionSupport:
    """What FusionDefinition.execute() relies on, besides the executor."""

    # --- inputs ----------------------------------------------------------------
    def _describe_input(self, i):
        value = self._inputs[i]
        record = self._input_records[value.name]
        if self._is_cpu_scalar_input(value):
            return f"{value.name}: a 0-dim CPU tensor of {record.dtype.name}"
        if isinstance(value, Tensor):
            return (
                f"{value.name}: a {record.dtype.name} tensor of shape "
                f"{record.shape} (-1: any size)"
            )
        if isinstance(value, Vector):
            return f"{value.name}: a list of {len(value)} ints"
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

    # --- vector inputs (fd.define_vector(size)) ------------------------------------
    def _fusion_input_count(self):
        """How many inputs the C++ fusion has so far: a vector's entries are
        scalar inputs each."""
        count = sum(len(v) if isinstance(v, Vector) else 1 for v in self._inputs)
        return count + len(self._generator_slots)

    def _with_vector_entries(self, inputs):
        """`inputs` with each vector input's list spread into its entries."""
        if not self._num_vectors:
            return inputs
        values = []
        for i, (declared, given) in enumerate(zip(self._inputs, inputs)):
            if not isinstance(declared, Vector):
                values.append(given)
                continue
            if not isinstance(given, (list, tuple, torch.Size)) or not all(
                _is_int(v) for v in given
            ):
                raise FuserError(
                    f"execute(): input {i} ({declared.name}) is a vector input; "
                    f"expected a list of {len(declared)} ints, got "
                    f"{_describe_given(given)}."
                )
            if len(given) != len(declared):
                raise FuserError(
                    f"execute(): input {i} ({declared.name}) is a vector of "
                    f"{len(declared)} ints; got {len(given)}: {list(given)}."
                )
            values += [int(v) for v in given]
        return values

    # --- random ops' seeds and offsets (the generator slots) --------------------
    def _generator_input(self):
        """A fusion input that execute() fills from the generator."""
        self._generator_slots.append(self._fusion_input_count())
        return self._fusion.define_scalar(None, DataType.Int)

    def _with_generator_values(self, inputs):
        """`inputs` with the seed and offsets of the random ops that take
        them from torch's default CUDA generator, whose offset advances by 4
        per op (as torch's own random ops reserve theirs)."""
        if not self._generator_slots:
            return inputs
        if torch.cuda.is_available():
            generator = torch.cuda.default_generators[torch.cuda.current_device()]
            base = generator.get_offset()
            generator.set_offset(base + 4 * (len(self._generator_slots) // 2))
        else:
            # Without a GPU (_compile_off_device, _evaluate_with_aten on the
            # CPU): the CPU generator's seed, which keeps no offset.
            generator = torch.default_generator
            base = 0
        seed = generator.initial_seed()
        seed = seed - (1 << 64) if seed >= (1 << 63) else seed  # int64 bits
        values = list(inputs)
        for k, position in enumerate(self._generator_slots):
            values.insert(position, seed if k % 2 == 0 else base + 4 * (k // 2))
        return values
