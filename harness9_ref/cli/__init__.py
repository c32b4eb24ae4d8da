"""The ``harness9-ref`` command (SPEC section "Command line": R-CLI-1 … R-CLI-23).

``main(argv)`` runs the program and returns its exit status; ``python -m harness9_ref`` and the
installed ``harness9-ref`` script call it. The settings rules are pure functions:
``resolve_settings`` and ``choose_provider``.
"""

from . import _agent, _main, _parser, _prompt, _run_prompt, _settings, _subcommands, _wiring
from ._agent import *
from ._main import *
from ._parser import *
from ._prompt import *
from ._run_prompt import *
from ._settings import *
from ._subcommands import *
from ._wiring import *

__all__ = [
    *_agent.__all__,
    *_main.__all__,
    *_parser.__all__,
    *_prompt.__all__,
    *_run_prompt.__all__,
    *_settings.__all__,
    *_subcommands.__all__,
    *_wiring.__all__,
]
