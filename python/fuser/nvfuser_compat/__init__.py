"""fuser under nvFuser's module names (``nvfuser_direct`` and ``nvfuser``),
for programs written against nvFuser's Python API, such as Lightning
Thunder's nvFuser executor (doc/thunder.md).

The opt-in step, before the program imports those names (before
``import thunder``)::

    import fuser.nvfuser_compat
    fuser.nvfuser_compat.enable()

or, for a pytest run, ``python -m pytest -p fuser.nvfuser_compat.pytest_plugin``
(or ``PYTEST_PLUGINS=fuser.nvfuser_compat.pytest_plugin``).

enable() does not hide an installed nvFuser: it refuses, saying where that
installation is, unless called with ``replace=True``.
"""

from ._installation import enable, is_enabled

__all__ = ["enable", "is_enabled"]
