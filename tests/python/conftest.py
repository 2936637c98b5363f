"""Shared setup of the Python tests.

tools/test.sh and tools/gpu_test.sh put the package on the path
(PYTHONPATH=python:<build>/python). Run by hand, `pytest tests/python`
falls back to the source tree and build/ (or $FUSER_BUILD_DIR)."""

import os
import sys

# The tests leave the user's kernel cache alone (and count compilations):
# the on-disk cache is off unless the caller set FUSER_KERNEL_CACHE_DIR.
os.environ.setdefault("FUSER_KERNEL_CACHE_DIR", "off")

try:
    import fuser  # noqa: F401
except ImportError:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    build = os.environ.get("FUSER_BUILD_DIR", os.path.join(root, "build"))
    sys.path[:0] = [os.path.join(root, "python"), os.path.join(build, "python")]
    for name in [m for m in sys.modules if m == "fuser" or m.startswith("fuser.")]:
        del sys.modules[name]


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _no_kernel_fallback(request):
    """Fails a test in which a kernel failed and its segment ran with ATen
    instead (the runtime's fallback, doc/design.md §6): the fallback must
    hide no bug. A test that makes kernels fail on purpose is marked
    `kernel_fallback`."""
    from fuser import _C

    before = _C.kernel_fallback_count()
    yield
    if request.node.get_closest_marker("kernel_fallback") is None:
        after = _C.kernel_fallback_count()
        assert after == before, (
            f"{after - before} segment(s) ran with ATen because their kernel "
            "failed (see the warning printed above)"
        )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "kernel_fallback: the test makes kernels fail on purpose"
    )
