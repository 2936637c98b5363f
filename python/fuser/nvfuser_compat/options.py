"""nvFuser's per-call option names (execute's ``_enable_options`` and
``_disable_options``, NVFUSER_ENABLE / NVFUSER_DISABLE in nvFuser's
csrc/options.cpp) in fuser's terms (FUSER_ENABLE / FUSER_DISABLE,
csrc/base/options.h).

A name fuser knows passes through: where fuser has the same option, it
has nvFuser's name (matmul_expr_eval). Of the other nvFuser options, one
is:

* already what fuser does: dropped;
* about how nvFuser compiles, caches or reports, with no effect on what
  runs or what it computes: dropped with a warning, once per name;
* anything else: an error, since ignoring it would run something other
  than what was asked for."""

import warnings

from fuser import FuserError
from fuser._options import check_run_options, disable_options, enable_options

# nvFuser option -> why fuser already behaves as it asks.
_ALREADY_FUSERS_BEHAVIOUR = {
    ("enable", "fuse_matmul"): (
        "fuser's matmul scheduler takes the matmuls it can schedule and ExprEval "
        "(ATen) runs the others, which is what nvFuser does with fuse_matmul"
    ),
}

# nvFuser option -> what it changes in nvFuser, which fuser has no switch for
# and which does not change what a fusion computes.
_IGNORED = {
    ("disable", "kernel_reuse"): "nvFuser's reuse of a kernel for new input sizes",
    ("disable", "nvrtc_caching"): "nvFuser's caching of compiled kernels",
    ("disable", "parallel_compile"): "nvFuser's compiling of segments in parallel",
    ("disable", "nvtx"): "nvFuser's NVTX ranges",
    ("enable", "kernel_debug"): "nvFuser's debug build of kernels",
    ("enable", "kernel_lineinfo"): "nvFuser's line information in kernels",
    ("enable", "warn_register_spill"): "nvFuser's warnings on register spills",
    ("enable", "static_fusion_count"): "nvFuser's fusion numbering",
}

_warned = set()


def _translate(names, kind, fusers_names):
    if names is None:
        return []
    if isinstance(names, str):
        raise TypeError(f"execute(): _{kind}_options takes a list of option names; got {names!r}.")
    names = list(names)
    if not names:
        return names
    fusers = fusers_names()
    kept = []
    for name in names:
        key = (kind, name)
        if name in fusers:
            kept.append(name)
        elif key in _ALREADY_FUSERS_BEHAVIOUR:
            continue
        elif key in _IGNORED:
            if key not in _warned:
                _warned.add(key)
                warnings.warn(
                    f"nvFuser's {kind} option {name!r} is ignored: it changes "
                    f"{_IGNORED[key]}, which fuser does not have; results are unchanged.",
                    stacklevel=4,
                )
        else:
            translated = [
                n for k, n in list(_ALREADY_FUSERS_BEHAVIOUR) + list(_IGNORED) if k == kind
            ]
            raise FuserError(
                f"execute(): {kind} option {name!r} is neither fuser's nor an nvFuser option "
                f"fuser can stand in for. fuser's (FUSER_{kind.upper()}): "
                f"{', '.join(fusers)}; nvFuser's it takes: {', '.join(sorted(translated))}."
            )
    return kept


def translate_run_options(enable, disable):
    """nvFuser's per-call option lists as fuser's (see the module
    docstring), checked as fuser's execute() checks them."""
    return check_run_options(
        _translate(enable, "enable", enable_options),
        _translate(disable, "disable", disable_options),
    )
