"""The reference's format_token_count, claiming the profiles named on its command line.

Usage: ``claims.py [--wrong] PROFILE...``. The start answer's ``profiles`` is the list of
PROFILEs as given, unknown names included, so that the runner's refusal can be tested too
(SPEC R-PROF-3); ``--wrong`` appends a digit to every answer. It declares one op, so over the
real suite its core profile has passes and unsupported cases.
"""

import sys
from pathlib import Path
from typing import Any

from _base import serve

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import conformance.reference_adapter as reference


def answer(request: dict[str, Any]) -> Any:
    reply = reference.handle(request)
    if "--wrong" in sys.argv[1:] and "output" in reply:
        reply["output"] += "0"
    return reply


serve(answer, declare={"profiles": [name for name in sys.argv[1:] if name != "--wrong"]})
