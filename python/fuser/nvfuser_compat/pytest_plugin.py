"""A pytest plugin that runs a test suite written for nvFuser on fuser:
loading it installs fuser under nvFuser's module names
(fuser.nvfuser_compat.enable()) before the test files and their conftest
files are imported. For Lightning Thunder's tests::

    python -m pytest -p fuser.nvfuser_compat.pytest_plugin thunder/tests/test_nvfuser.py

or, with the plugin named in the environment instead of on the command
line, ``PYTEST_PLUGINS=fuser.nvfuser_compat.pytest_plugin python -m pytest ...``.
As enable() does, loading it fails when an nvFuser installation is found;
to run such a suite on fuser in its place, call
``fuser.nvfuser_compat.enable(replace=True)`` from a conftest.py at the root
of the run instead."""

from . import enable

enable()
