"""How the name "fuser" reaches TorchDynamo's backend registry
(torch/_dynamo/backends/registry.py), without importing torch._dynamo
when fuser is imported.

Importing torch._dynamo takes longer than importing torch itself (about
1.7 s against 1.6 s on the development machine), and most programs that
import fuser never call torch.compile. So `import fuser` only installs a
finder on sys.meta_path that waits for the registry module: when anything
imports torch._dynamo.backends.registry (torch.compile does, first thing),
the finder lets the module load as usual, then registers "fuser" in it and
removes itself. When the registry is already imported, "fuser" is
registered at once. Either way the backend module itself (backend.py, with
AOTAutograd and the partitioner) is imported at the first compile, not
before.

An installed fuser also declares the entry point
``torch_dynamo_backends: fuser = fuser.dynamo.backend:fuser_backend``
(pyproject.toml), which the registry reads the first time it looks up a
name it does not know: torch.compile(m, backend="fuser") then works
without importing fuser first. Registering by name skips a name the entry
point already supplies, so the two never clash (the registry refuses a
second registration of one name)."""

import importlib.abc
import sys

BACKEND_NAME = "fuser"
_REGISTRY_MODULE = "torch._dynamo.backends.registry"


def fuser_backend(graph_module, example_inputs, **kwargs):
    """The "fuser" backend as registered: imports the real one when Dynamo
    first calls it (backend.fuser_backend documents the arguments)."""
    from .backend import fuser_backend as backend

    return backend(graph_module, example_inputs, **kwargs)


fuser_backend.__name__ = BACKEND_NAME


def register_in(registry):
    """Registers "fuser" in the registry module, unless it is there."""
    # The registry has no public query that does not import every backend
    # (list_backends does): read its tables. An entry point for the name
    # (a non-None value) is loaded by the registry itself on lookup.
    if BACKEND_NAME in registry._COMPILER_FNS or registry._BACKENDS.get(BACKEND_NAME):
        return
    registry.register_backend(compiler_fn=fuser_backend, name=BACKEND_NAME)


class _LoaderThenRegister(importlib.abc.Loader):
    """Runs the registry module's own loader, then registers "fuser"."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        register_in(module)

    def __getattr__(self, name):
        # get_source, get_code, ...: as the wrapped loader (tracebacks,
        # inspect and linecache read the module's source through them).
        return getattr(self._loader, name)


class _RegistryFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _REGISTRY_MODULE:
            return None
        _remove_finder()
        # The spec the other finders give (normally PathFinder's), with its
        # loader wrapped.
        for finder in list(sys.meta_path):
            find_spec = getattr(finder, "find_spec", None)
            spec = None if find_spec is None else find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _LoaderThenRegister(spec.loader)
                return spec
        return None


_finder = _RegistryFinder()


def _remove_finder():
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass


def install():
    """Makes torch.compile(m, backend="fuser") work in this process; cheap
    (imports nothing). Called by `import fuser`; calling it again is
    harmless."""
    registry = sys.modules.get(_REGISTRY_MODULE)
    if registry is not None:
        register_in(registry)
        return
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
