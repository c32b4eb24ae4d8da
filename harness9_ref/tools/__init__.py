"""The agent's tools on a working directory: ``read_file``, ``bash``, ``edit_file``, ``write_file`` (SPEC R-TOOL).

``Registry(workdir)`` offers them to the model and runs them; every failure comes back as an
observation starting with ``error: ``, never as an exception. ``bash`` is not a sandbox
(R-TOOL-8): a command can read and change anything the user can. The registry also ends the
commands it started, on ``interrupt()`` and ``close()`` (R-INT), and asks an approval callback
before each command and each change of a file, which it shows as a unified diff, unless an
allow rule of the working directory covers the command (R-APPR). A rewind puts back the files
the dropped turns changed, with the user's consent (``plan_restores``, ``restore``, R-UNDO-4).
"""

from . import _approval, _bash, _edit, _output, _process, _read_file, _registry, _rules, _undo
from ._approval import *
from ._bash import *
from ._edit import *
from ._output import *
from ._process import *
from ._read_file import *
from ._registry import *
from ._rules import *
from ._undo import *

__all__ = [
    *_approval.__all__,
    *_bash.__all__,
    *_edit.__all__,
    *_output.__all__,
    *_process.__all__,
    *_read_file.__all__,
    *_registry.__all__,
    *_rules.__all__,
    *_undo.__all__,
]
