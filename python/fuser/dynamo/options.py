"""The options of the "fuser" TorchDynamo backend, as given to
``torch.compile(model, backend="fuser", options={...})``, and their checks.

Every name starts with ``fuser.`` so that a dictionary shared with other
backends reads unambiguously. An unknown name, or a value of the wrong
kind, is a FuserError that lists what is accepted (a misspelt option that
were ignored would silently compile something else than what was asked)."""

import dataclasses
import os
from typing import Callable, Optional, Tuple

from .._C import FuserError

# name -> (what it takes, what it does); the order of the help message.
KNOWN_OPTIONS = {
    "fuser.eager_ops": (
        "a list of aten op names",
        'ops never fused, e.g. ["aten.mm", "aten.native_layer_norm.default"]',
    ),
    "fuser.eager_partitions": (
        "a list of partition names, or a callable(PartitionInfo) -> bool",
        "partitions run with eager ATen instead of fuser (names as "
        '"fuser.dump" prints them, e.g. "graph0.forward.fused_1")',
    ),
    "fuser.fuse_matmul": (
        "a bool (default False)",
        "True puts matrix products (mm, bmm, addmm) in fusions, where fuser's "
        "matmul kernel takes bf16 and half products of fusion inputs; by default "
        "ATen (cuBLAS) runs them, faster on every shape measured so far",
    ),
    "fuser.dump": (
        'a list of "partitions", "definitions", "cuda"',
        "prints each graph's partitions (FX code), each FusionDefinition "
        "(Python), and the CUDA of each definition after its first run",
    ),
    "fuser.dump_dir": (
        "a folder (str)",
        "where fuser.dump writes its files instead of printing to stderr",
    ),
    "fuser.enable_options": (
        "a list of FUSER_ENABLE names",
        "passed to every execute() as _enable_options",
    ),
    "fuser.disable_options": (
        "a list of FUSER_DISABLE names",
        "passed to every execute() as _disable_options",
    ),
}

DUMP_KINDS = ("partitions", "definitions", "cuda")


@dataclasses.dataclass(frozen=True)
class BackendOptions:
    """The checked options of one torch.compile call."""

    eager_ops: Tuple[str, ...] = ()
    eager_partition_names: Tuple[str, ...] = ()
    eager_partition_predicate: Optional[Callable] = None
    # cuBLAS outran fuser's matmul kernel on every measured shape (0.92-0.97
    # bare, 0.96 with a bias+GELU epilogue, benchmarks/results/matmul.md;
    # the Llama block's weight gradients 626 against 750 TFLOP/s,
    # benchmarks/results/torch_compile.md): products stay with ATen unless
    # asked for.
    fuse_matmul: bool = False
    dump: Tuple[str, ...] = ()
    dump_dir: Optional[str] = None
    enable_options: Tuple[str, ...] = ()
    disable_options: Tuple[str, ...] = ()

    def dumps(self, kind):
        return kind in self.dump

    def keeps_op_eager(self, overload_name, packet_name):
        """Whether "fuser.eager_ops" names this op, as its overload
        ("aten.mm.default") or its packet ("aten.mm")."""
        return overload_name in self.eager_ops or packet_name in self.eager_ops

    def keeps_partition_eager(self, info):
        if info.name in self.eager_partition_names:
            return True
        return bool(self.eager_partition_predicate and self.eager_partition_predicate(info))


def _help():
    lines = ["The options of the fuser backend are:"]
    for name, (takes, does) in KNOWN_OPTIONS.items():
        lines.append(f"  {name!r}: {takes}: {does}")
    return "\n".join(lines)


def _string_list(name, value):
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise FuserError(
            f"torch.compile(backend='fuser'): option {name!r} takes "
            f"{KNOWN_OPTIONS[name][0]}; got {value!r}. Pass a list, e.g. "
            f"{{{name!r}: [{value!r}]}}."
        )
    if not all(isinstance(v, str) for v in value):
        raise FuserError(
            f"torch.compile(backend='fuser'): option {name!r} takes a list of str; "
            f"got {list(value)!r}."
        )
    return tuple(value)


def _checked_run_options(name, value, valid):
    names = _string_list(name, value)
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise FuserError(
            f"torch.compile(backend='fuser'): option {name!r}: unknown "
            f"{', '.join(repr(n) for n in unknown)}; fuser takes: {', '.join(valid)}."
        )
    return names


def parse_options(options, mode=None):
    """BackendOptions from torch.compile's `options` dict (None: defaults)
    and `mode` (fuser has one mode: None or "default")."""
    if mode not in (None, "default"):
        raise FuserError(
            f"torch.compile(backend='fuser'): mode={mode!r} is not supported: the fuser "
            "backend has no modes (its kernels are scheduled per input signature). "
            "Leave mode out, or use options (see below).\n" + _help()
        )
    if options is None:
        return BackendOptions()
    if not isinstance(options, dict):
        raise FuserError(
            f"torch.compile(backend='fuser'): options must be a dict; got "
            f"{type(options).__name__}.\n" + _help()
        )
    unknown = [k for k in options if k not in KNOWN_OPTIONS]
    if unknown:
        raise FuserError(
            f"torch.compile(backend='fuser'): unknown option"
            f"{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)}.\n" + _help()
        )
    fields = {}
    if "fuser.eager_ops" in options:
        fields["eager_ops"] = _string_list("fuser.eager_ops", options["fuser.eager_ops"])
    if "fuser.eager_partitions" in options:
        value = options["fuser.eager_partitions"]
        if callable(value):
            fields["eager_partition_predicate"] = value
        else:
            fields["eager_partition_names"] = _string_list("fuser.eager_partitions", value)
    if "fuser.fuse_matmul" in options:
        value = options["fuser.fuse_matmul"]
        if not isinstance(value, bool):
            raise FuserError(
                f"torch.compile(backend='fuser'): option 'fuser.fuse_matmul' takes a bool; "
                f"got {value!r}."
            )
        fields["fuse_matmul"] = value
    if "fuser.dump" in options:
        kinds = _string_list("fuser.dump", options["fuser.dump"])
        bad = [k for k in kinds if k not in DUMP_KINDS]
        if bad:
            raise FuserError(
                f"torch.compile(backend='fuser'): option 'fuser.dump': unknown "
                f"{', '.join(repr(k) for k in bad)}; it takes {', '.join(DUMP_KINDS)}."
            )
        fields["dump"] = kinds
    if "fuser.dump_dir" in options:
        folder = options["fuser.dump_dir"]
        if not isinstance(folder, (str, os.PathLike)):
            raise FuserError(
                f"torch.compile(backend='fuser'): option 'fuser.dump_dir' takes a folder "
                f"path; got {folder!r}."
            )
        fields["dump_dir"] = os.fspath(folder)
    # The valid names come from the extension (csrc/base/options.cpp).
    from .. import _options

    if "fuser.enable_options" in options:
        fields["enable_options"] = _checked_run_options(
            "fuser.enable_options", options["fuser.enable_options"], _options.enable_options()
        )
    if "fuser.disable_options" in options:
        fields["disable_options"] = _checked_run_options(
            "fuser.disable_options", options["fuser.disable_options"], _options.disable_options()
        )
    return BackendOptions(**fields)
