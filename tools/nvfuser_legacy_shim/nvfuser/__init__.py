"""The one name Lightning Thunder 0.2.6 imports from nvFuser's legacy module
`nvfuser` even when it runs on `nvfuser_direct`: compute_tensor_descriptor.
nvFuser 0.2.36 dropped the legacy module but kept the function in
nvfuser_direct; this forwards to it, so that Thunder 0.2.6 runs on the real
nvFuser 0.2.36 as the peer of fuser (tools/gpu_thunder.sh, doc/thunder.md).
Put this folder on PYTHONPATH next to nvFuser's, never with fuser's."""

from nvfuser_direct import compute_tensor_descriptor, version  # noqa: F401
