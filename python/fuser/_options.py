"""The scheduling options execute() can turn on or off for one call
(``_enable_options`` / ``_disable_options``), by the names the environment
variables FUSER_ENABLE and FUSER_DISABLE take (csrc/base/options.h), and
their check, which names the valid ones."""

from . import _C
from ._C import FuserError


def _checked(names, valid_names, argument, variable):
    if names is None:
        return []
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"execute(): {argument} takes a list of option names (str); got {names!r}.")
    names = list(names)
    if not names:
        return names
    # Read from the extension, which keeps the one list (options.cpp).
    valid = valid_names()
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise FuserError(
            f"execute(): {argument}: unknown option{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(n) for n in unknown)}. The options {variable} takes are: "
            f"{', '.join(valid)}."
        )
    return names


def enable_options():
    """The option names FUSER_ENABLE (and ``_enable_options``) take."""
    return list(_C.enable_option_names())


def disable_options():
    """The option names FUSER_DISABLE (and ``_disable_options``) take."""
    return list(_C.disable_option_names())


def check_run_options(enable, disable):
    """The per-call option lists `enable` and `disable` (None: none),
    checked against fuser's names; returned as lists."""
    return (
        _checked(enable, enable_options, "_enable_options", "FUSER_ENABLE"),
        _checked(disable, disable_options, "_disable_options", "FUSER_DISABLE"),
    )
