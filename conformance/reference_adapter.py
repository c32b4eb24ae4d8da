"""The Python reference adapter: protocol v1 on stdin/stdout, dispatching to ``harness9_ref``.

Run as ``python -m conformance.reference_adapter``. A port writes the same loop in its own
language; conformance/PORTING.md describes every op's input and output.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final

import harness9_ref
from conformance.reference._cli import op_cli
from conformance.reference._engine import op_approval_rule, op_engine_run, op_tool_execute
from conformance.reference._engine_tool import op_engine_tool
from conformance.reference._instructions import op_system_prompt
from conformance.reference._memory import INVALID_INPUT, MEMORY_OPS, InvalidInput
from conformance.reference._provider import PROVIDER_OPS
from conformance.reference._session import op_memory_session, op_session
from conformance.reference._tui import TUI_OPS
from harness9_ref.provider import ProviderError
from harness9_ref.schema import SchemaError

PROTOCOL_VERSION: Final = 1

OPS: Final[Mapping[str, Callable[[Mapping[str, Any]], Any]]] = {
    **MEMORY_OPS,
    "session": op_session,
    "memory_session": op_memory_session,
    **PROVIDER_OPS,
    "engine_run": op_engine_run,
    "tool_execute": op_tool_execute,
    "approval_rule": op_approval_rule,
    "engine_tool": op_engine_tool,
    "system_prompt": op_system_prompt,
    **TUI_OPS,
    "cli": op_cli,
}


def handle(request: Mapping[str, Any]) -> dict[str, Any]:
    """Answer one ``run`` request; domain errors become ``{"error": …}``, never a crash."""
    seq = request.get("seq")
    op = OPS.get(request.get("op", ""))
    if op is None:
        return {"seq": seq, "skipped": f"op {request.get('op')!r} is not implemented"}
    try:
        return {"seq": seq, "output": op(request.get("input", {}))}
    except (SchemaError, InvalidInput, ProviderError) as exc:
        return {"seq": seq, "error": {"code": exc.code, "message": str(exc)}}
    except LookupError as exc:
        return {"seq": seq, "error": {"code": INVALID_INPUT, "message": f"input is missing or names nothing known: {exc}"}}
    except TypeError as exc:
        return {"seq": seq, "error": {"code": INVALID_INPUT, "message": f"input has a wrong type: {exc}"}}


def start_answer() -> dict[str, Any]:
    """The answer to ``start``: what this implementation is and runs."""
    return {
        "protocol": PROTOCOL_VERSION,
        "implementation": {"name": "harness9-ref", "version": harness9_ref.__version__, "language": "python"},
        "ops": sorted(OPS),
        "backends": ["sqlite", "postgresql"],  # conformance/runner/_backends.py
        # SPEC R-PROF-3: every profile with cases but PostgreSQL, which a run judges only when
        # it is given a server (without one its PostgreSQL-only cases are unsupported).
        "profiles": ["core", "sessions", "providers", "local", "engine", "long", "tui", "cli"],
    }


def main() -> int:
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    # A lone surrogate (a string the answer passes on from its input) has no UTF-8 form; it can
    # only stand inside a JSON string, where backslashreplace writes it as the escape \udXXX
    # that JSON reads back as the same code point, instead of the adapter dying mid-line.
    sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "stop":
            return 0
        reply = start_answer() if cmd == "start" else handle(request)
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
