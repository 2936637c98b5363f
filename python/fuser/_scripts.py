"""A FusionDefinition as Python source: ``str(fd)``, a script that defines
the fusion again (rendered from its records, _records.py), and the repro
scripts that also build inputs like the ones it ran on and run it
(``fd.repro_script_for(inputs)``, ``fd.last_repro_script()``).

The module the scripts import from is a class attribute, so that a
subclass living under another module name (the nvFuser compatibility
package, fuser/nvfuser_compat) prints scripts that import it there.

ScriptPrinting is one of FusionDefinition's bases (fusion_definition.py)."""

import torch

from . import _records as rec
from ._C import FuserError


def _tensor_source(tensor):
    """Source for a random tensor of `tensor`'s dtype, shape, strides and
    device (a fake tensor describes one as well as a real one)."""
    size, stride = tuple(tensor.size()), tuple(tensor.stride())
    device = str(tensor.device)
    if tensor.is_contiguous():
        return f"torch.testing.make_tensor({size}, dtype={tensor.dtype}, device={device!r})"
    # The storage reaches one past the largest offset an element has.
    numel = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    return (
        f"torch.testing.make_tensor(({numel},), dtype={tensor.dtype}, device={device!r})"
        f".as_strided({size}, {stride})"
    )


def _number_source(value):
    if isinstance(value, complex):
        return f"complex({_number_source(value.real)}, {_number_source(value.imag)})"
    return rec.render_value(value, None)


def _input_source(position, value):
    if isinstance(value, torch.Tensor):
        return _tensor_source(value)
    if isinstance(value, (bool, int, float, complex)):
        return _number_source(value)
    if isinstance(value, (list, tuple, torch.Size)) and all(isinstance(v, int) for v in value):
        return repr([int(v) for v in value])
    raise FuserError(
        f"repro_script_for(): input {position} is a {type(value).__name__} ({value!r}); a "
        "repro script takes torch.Tensors, Python numbers and lists of ints."
    )


class ScriptPrinting:
    """FusionDefinition's printing as Python and its repro scripts."""

    # What the printed scripts import FusionDefinition, DataType and
    # ParallelType from (DeviceMesh from its .multidevice), and the name of
    # the function that defines the fusion.
    _script_module = "fuser"
    _script_function = "fuser_fusion"

    def _repro_preamble(self):
        """Lines a repro script runs before its imports from
        _script_module (a subclass may need to make that module importable)."""
        return []

    def __str__(self):
        self._define_for_printing()
        namer = rec.IdNamer()
        body = [line for r in self._records for line in r.render(namer).split("\n")]
        body = body or ["pass"]
        lines = [f"from {self._script_module} import DataType, FusionDefinition, ParallelType"]
        if any(isinstance(r, rec.SetDeviceMesh) for r in self._records):
            lines.append(f"from {self._script_module}.multidevice import DeviceMesh")
        lines += [
            "",
            "",
            f"def {self._script_function}(fd: FusionDefinition) -> None:",
        ]
        lines += [f"    {line}" for line in body]
        lines += [
            "",
            "",
            "with FusionDefinition() as fd:",
            f"    {self._script_function}(fd)",
        ]
        return "\n".join(lines) + "\n"

    __repr__ = __str__

    def repro_script_for(self, inputs=None):
        """A Python script that defines this fusion, makes random inputs of
        the dtypes, shapes, strides and devices of `inputs` (tensors, fake
        tensors included, numbers and lists of ints, in input order), and
        ends with the line ``fd.execute(inputs)``. Without inputs, the
        script only defines the fusion."""
        lines = ["# A fuser fusion and inputs like those it ran on (random values)."]
        lines.append(f"# torch {torch.__version__}, CUDA {torch.version.cuda}")
        for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
            lines.append(f"# CUDA device {i}: {torch.cuda.get_device_name(i)}")
        lines.append("import torch")
        lines += self._repro_preamble()
        script = "\n".join(lines) + "\n" + str(self)
        if inputs is None:
            return script
        entries = [f"    {_input_source(i, v)}," for i, v in enumerate(inputs)]
        return (
            script
            + "\ninputs = [\n"
            + "".join(e + "\n" for e in entries)
            + "]\n"
            + ("fd.execute(inputs)\n")
        )

    def last_repro_script(self):
        """The repro script of the inputs of the last
        ``execute(inputs, save_repro_inputs=True)``."""
        if getattr(self, "fake_inputs", None) is None:
            raise FuserError(
                "last_repro_script(): no inputs were saved; run "
                "fd.execute(inputs, save_repro_inputs=True) first (or call "
                "fd.repro_script_for(inputs))."
            )
        return self.repro_script_for(self.fake_inputs)

    def _save_fake_inputs(self, inputs):
        """Keeps fake copies of the tensors of `inputs` (dtype, shape,
        strides and device, no data) as ``fd.fake_inputs``, numbers and
        lists as they are."""
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode()
        self.fake_inputs = [
            mode.from_tensor(v) if isinstance(v, torch.Tensor) else v for v in inputs
        ]
