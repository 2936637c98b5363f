"""The nvFuser release whose Python API the compatibility modules emulate.

Programs written for nvFuser choose code paths by its version:
Thunder 0.2.6 takes the ``nvfuser_direct`` path from 0.2.34 on, and checks
other features against 0.2.8 to 0.2.33 (doc/thunder.md lists them).
0.2.35 is the last nvFuser release that ships both ``nvfuser_direct`` and
the legacy ``nvfuser`` module, whose ``compute_tensor_descriptor`` Thunder
still imports, so it is the API level both modules here follow. It says
what API is offered, not which fuser this is (``fuser.__version__``)."""

NVFUSER_API_VERSION = "0.2.35"


def version():
    """The nvFuser API level emulated: "0.2.35" (see the module docstring)."""
    return NVFUSER_API_VERSION
