"""fuser: a fusion compiler for PyTorch programs on NVIDIA GPUs.

Describe a fusion with a :class:`FusionDefinition`, as with nvFuser::

    import torch
    from fuser import FusionDefinition, DataType

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                              dtype=DataType.Float)
        t1 = fd.ops.relu(t0)
        fd.add_output(t1)

    out, = fd.execute([torch.randn(4, 8, device="cuda")])
"""

import pkgutil

# In a source checkout the compiled module lives in the build tree
# (<build>/python/fuser/_C*.so) while these files stay in python/fuser:
# with both on sys.path (PYTHONPATH=python:<build>/python) the package spans
# the two folders.
__path__ = pkgutil.extend_path(__path__, __name__)

# torch first: it loads libtorch and registers torch.Tensor, which the
# extension uses for its inputs and outputs.
import torch  # noqa: E402,F401

from ._C import (  # noqa: E402
    DataType,
    FuserError,
    FuserInternalError,
    ParallelType,
)
from .fusion_definition import (  # noqa: E402
    FusionDefinition,
    IterDomain,
    Scalar,
    Tensor,
    TensorDomain,
    Vector,
)
from .dtypes import to_data_type, to_torch_dtype  # noqa: E402

# torch.compile(model, backend="fuser"): registered when TorchDynamo's
# registry loads, without importing torch._dynamo here (doc/torch_compile.md).
from . import dynamo  # noqa: E402,F401

# Shown as fuser.FuserError in tracebacks.
FuserError.__module__ = __name__
FuserInternalError.__module__ = __name__

__version__ = "0.1.0"

__all__ = [
    "DataType",
    "FuserError",
    "FuserInternalError",
    "FusionDefinition",
    "IterDomain",
    "ParallelType",
    "Scalar",
    "Tensor",
    "TensorDomain",
    "Vector",
    "to_data_type",
    "to_torch_dtype",
]
