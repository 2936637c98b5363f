"""fuser as a TorchDynamo backend: ``torch.compile(model, backend="fuser")``
(doc/torch_compile.md).

Importing this package is cheap: it imports neither torch._dynamo nor
AOTAutograd. It calls `install()` (registration.py), which makes the name
"fuser" known to TorchDynamo when its registry loads; the backend itself
(backend.py) is imported at the first compile.

The modules, one concept each:

* registration.py: the name "fuser" in TorchDynamo's registry;
* backend.py: the backend (AOTAutograd) and compile_graph;
* options.py: the options torch.compile passes, checked;
* decompositions.py: what AOTAutograd decomposes;
* aten_table.py: the aten ops fuser takes, one row each, with the
  translators in translate_pointwise.py, translate_reduction.py,
  translate_shape.py, translate_library.py and rng.py (random ops, and how
  dropout keeps forward and backward in step);
* support.py: the OperatorSupport derived from the table;
* partitioner.py: the graph cut into partitions;
* signatures.py: the input signatures definitions are cached by;
* translation.py: a partition to a FusionDefinition;
* fused_partition.py: what runs a partition;
* dump.py: the "fuser.dump" option.
"""

from .registration import BACKEND_NAME, install

install()


def __getattr__(name):
    # The heavy parts on first use (`fuser.dynamo.fuser_backend`, ...).
    if name in ("fuser_backend", "compile_graph", "CompiledGraph"):
        from . import backend

        return getattr(backend, name)
    raise AttributeError(f"module 'fuser.dynamo' has no attribute {name!r}")


__all__ = ["BACKEND_NAME", "install", "fuser_backend", "compile_graph", "CompiledGraph"]
