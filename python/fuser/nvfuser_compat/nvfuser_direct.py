"""fuser as nvFuser's ``nvfuser_direct`` module, at nvFuser 0.2.35's API
(api_version.py): what programs written for nvfuser_direct import from it.
enable() (_installation.py) installs it as ``nvfuser_direct``."""

from fuser import DataType, ParallelType

from . import multidevice
from .api_version import version
from .dtensors import execute_with_dtensors
from .fusion_definition import FusionDefinition
from .tensor_descriptor import compute_tensor_descriptor

__all__ = [
    "DataType",
    "FusionDefinition",
    "ParallelType",
    "compute_tensor_descriptor",
    "execute_with_dtensors",
    "multidevice",
    "version",
]
