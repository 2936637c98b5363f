"""enable(): installs the compatibility modules under nvFuser's module
names in sys.modules, so that ``import nvfuser_direct`` and
``import nvfuser`` give fuser.

The rule: enable() never hides an nvFuser the user did not ask to
replace. If an installed nvFuser can be found under either name, it
refuses unless called with ``replace=True``; if a real nvFuser module is
already imported, it refuses even then, since objects made from it would
meet fuser's in one program.
"""

import importlib.util
import sys
import warnings

from fuser import FuserError

# How the modules were installed: None before enable(), else its `replace`.
_installed_with_replace = None


def _compat_modules():
    from . import multidevice, nvfuser, nvfuser_direct

    return {
        "nvfuser_direct": nvfuser_direct,
        "nvfuser_direct.multidevice": multidevice,
        "nvfuser": nvfuser,
    }


def _location(module_or_spec):
    origin = getattr(module_or_spec, "origin", None) or getattr(module_or_spec, "__file__", None)
    if origin:
        return origin
    locations = getattr(module_or_spec, "submodule_search_locations", None) or getattr(
        module_or_spec, "__path__", None
    )
    return ", ".join(locations) if locations else "an unknown location"


def enable(replace=False):
    """Installs fuser as ``nvfuser_direct`` (with ``nvfuser_direct.multidevice``)
    and ``nvfuser`` for this process. Call it before anything imports those
    names (before ``import thunder``). Calling it again is harmless.

    ``replace``: when an nvFuser installation is found, enable() raises a
    FuserError unless this is True, in which case fuser takes its place in
    this process (the installation itself is left alone)."""
    global _installed_with_replace
    modules = _compat_modules()
    for name, ours in modules.items():
        loaded = sys.modules.get(name)
        if loaded is not None and loaded is not ours:
            raise FuserError(
                f"fuser.nvfuser_compat.enable(): {name} is already imported (from "
                f"{_location(loaded)}), so fuser cannot take its name in this process: "
                "objects made by that module would meet fuser's. Call enable() before "
                f"anything imports {name} (before `import thunder`), in a fresh process."
            )
    if not replace:
        for name in ("nvfuser_direct", "nvfuser"):
            if sys.modules.get(name) is modules[name]:
                continue
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            if spec is not None:
                raise FuserError(
                    f"fuser.nvfuser_compat.enable(): an nvFuser installation provides "
                    f"{name} ({_location(spec)}); enable() does not hide it. Call "
                    "enable(replace=True) to use fuser in its place in this process (the "
                    "installation is left as it is), or uninstall nvFuser."
                )
    if "thunder.executors.nvfuserex" in sys.modules and not is_enabled():
        warnings.warn(
            "fuser.nvfuser_compat.enable() was called after thunder was imported: thunder "
            "looks for nvFuser when it is imported, so it will not use fuser in this "
            "process. Call enable() before `import thunder`.",
            stacklevel=2,
        )
    sys.modules.update(modules)
    if _installed_with_replace is None or replace:
        _installed_with_replace = bool(replace)


def is_enabled():
    """Whether enable() installed fuser under nvFuser's module names."""
    return _installed_with_replace is not None


def replaced_installation():
    """Whether enable() was asked to replace an installed nvFuser (repro
    scripts install the modules again in their own process the same way)."""
    return bool(_installed_with_replace)
