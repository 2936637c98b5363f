"""The FusionDefinition of the compatibility modules: fuser's, plus what
programs written for nvfuser_direct reach for beyond it:

* ``fd.fusion`` (fusion_view.py), for scheduling inputs on device meshes;
* fd.ops with nvFuser's meaning where it differs from fuser's (ops.py);
* nvFuser's option names in execute() (options.py);
* printed scripts and repro scripts that import ``nvfuser_direct``.
"""

import fuser

from . import _installation
from .fusion_view import FusionView
from .ops import CompatOps
from .options import translate_run_options


class FusionDefinition(fuser.FusionDefinition):
    """fuser.FusionDefinition as nvfuser_direct.FusionDefinition."""

    _script_module = "nvfuser_direct"
    _script_function = "nvfuser_fusion"

    def __init__(self):
        super().__init__()
        self.ops = CompatOps(self)  # nvFuser's meanings (ops.py)

    def _repro_preamble(self):
        # A repro script runs in a process of its own, where the module
        # names must be installed again, as this process installed them.
        replace = _installation.replaced_installation()
        return [
            "import fuser.nvfuser_compat",
            "",
            f"fuser.nvfuser_compat.enable(replace={replace!r})",
        ]

    @property
    def fusion(self):
        """The fusion's inputs and outputs as nvFuser's Fusion lists them."""
        return FusionView(self)

    def execute(
        self,
        inputs,
        device=None,
        *,
        save_repro_inputs=False,
        _enable_options=None,
        _disable_options=None,
    ):
        """fuser.FusionDefinition.execute, with the option lists in
        nvFuser's names (fuser's own names are taken too)."""
        enable, disable = translate_run_options(_enable_options, _disable_options)
        return super().execute(
            inputs,
            device,
            save_repro_inputs=save_repro_inputs,
            _enable_options=enable,
            _disable_options=disable,
        )
