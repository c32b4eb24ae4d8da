"""The terminal UI (SPEC section 11: R-TUI-1 … R-TUI-21, R-APPR-2).

Its pure parts are plain functions of JSON-friendly values, with conformance cases:
``render_status`` and ``StatusState`` (the status bar), ``context_estimate`` (its figure
before the first token update), ``listing_lines``, ``parse_listing_choice`` and ``format_age``
(/resume and /search), ``complete_command``, ``classify_input`` and ``help_lines`` (the command
table); its strings and lines come from ``harness9_ref.text``. ``Approver`` is the registry's
approval callback that asks the user from the worker thread.

Importing this package does not import curses: ``run_tui`` imports it when the UI starts
and raises ``TuiUnavailable`` with a one-line message when it is missing (R-TUI-13).
"""

from . import _app, _approver, _commands, _context, _editor, _launch, _resume, _rewind, _screen_error, _status
from ._app import *
from ._approver import *
from ._commands import *
from ._context import *
from ._editor import *
from ._launch import *
from ._resume import *
from ._rewind import *
from ._screen_error import *
from ._status import *

__all__ = [
    *_app.__all__,
    *_approver.__all__,
    *_commands.__all__,
    *_context.__all__,
    *_editor.__all__,
    *_launch.__all__,
    *_resume.__all__,
    *_rewind.__all__,
    *_screen_error.__all__,
    *_status.__all__,
]
