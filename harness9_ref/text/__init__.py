"""What the agent shows as text, in the terminal UI and in the line modes alike
(SPEC R-TUI-1 … R-TUI-19, R-CLI-7).

The message catalogue in both languages (``_strings``), the product's errors worded by it and
any error in a language (``_said``, R-LANG-3), the lines a conversation is shown as (``_lines``),
the reports of the engine's events (``_report``) and terminal cell widths with the cleaning of
control characters (``_cells``, R-SAFE-1): pure functions of plain values, no terminal.
``harness9-ref run`` and ``show`` print with them without importing the UI package.
"""

from . import _cells, _lines, _report, _said, _strings
from ._cells import *
from ._lines import *
from ._report import *
from ._said import *
from ._strings import *

__all__ = [*_cells.__all__, *_lines.__all__, *_report.__all__, *_said.__all__, *_strings.__all__]
