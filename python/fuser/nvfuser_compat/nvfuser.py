"""fuser as nvFuser's legacy ``nvfuser`` module, at nvFuser 0.2.35's API
(api_version.py), as far as programs that use nvfuser_direct still import
it: Thunder reads ``compute_tensor_descriptor`` from here. enable()
(_installation.py) installs it as ``nvfuser``."""

from fuser import DataType, ParallelType

from .api_version import version
from .fusion_definition import FusionDefinition
from .tensor_descriptor import compute_contiguity, compute_tensor_descriptor


class FusionCache:
    """nvFuser's process-wide cache of fusions. fuser has no such cache to
    reset: each FusionDefinition holds its own executor. reset() exists for
    programs that call it (Thunder's test setup does when it finds the
    legacy module only)."""

    @staticmethod
    def reset():
        """Nothing to reset (see the class docstring)."""


__all__ = [
    "DataType",
    "FusionCache",
    "FusionDefinition",
    "ParallelType",
    "compute_contiguity",
    "compute_tensor_descriptor",
    "version",
]
