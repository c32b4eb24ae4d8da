"""The ``engine_run`` and ``tool_execute`` ops of the reference adapter.

``engine_run`` is one run of AgentEngine against scripts.

The provider and the tool registry are scripted (``harness9_ref.testing``), the session is a
MemorySession filled with the case's stored messages, and the compactor is built as in the
``compact`` op. The output is every event of the run, the session's messages afterwards and
the requests the provider received (the compacted views), so a case checks all three.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from conformance._reference_memory import compactor_from_json
from harness9_ref.engine import AgentEngine
from harness9_ref.memory import MemorySession
from harness9_ref.schema import messages_from_list, messages_to_list
from harness9_ref.testing import ScriptedProvider, ScriptedRegistry, steps_from_json
from harness9_ref.tools import Registry

__all__ = ["op_engine_run", "op_tool_execute"]


def op_engine_run(inp: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``prompt`` once; ``cancel_after_events`` cancels the run after that many events."""
    provider = ScriptedProvider(steps_from_json(inp["provider"], "provider"))
    registry = ScriptedRegistry.from_json(inp.get("registry", {}))
    session = None
    if inp.get("session") is not None:
        session = MemorySession()
        session.add_messages(messages_from_list(inp["session"], "session"))
    compactor = None if inp.get("compactor") is None else compactor_from_json(inp["compactor"])
    system_prompt = inp["system_prompt"]
    engine = AgentEngine(
        provider,
        registry,
        os.getcwd(),
        prompt_builder=lambda: system_prompt,
        session=session,
        compactor=compactor,
        context_window=inp.get("context_window", 0),
        max_turns=inp.get("max_turns", 50),
    )
    cancel_after = inp.get("cancel_after_events")
    events = []
    for event in engine.run_stream(inp["prompt"]):
        events.append(event.to_dict())
        if len(events) == cancel_after:
            engine.cancel()
    return {
        "events": events,
        "session": None if session is None else messages_to_list(session.get_messages()),
        "requests": [
            {"messages": messages_to_list(r.messages), "tools": [t.to_dict() for t in r.tools]} for r in provider.requests
        ],
    }


def op_tool_execute(inp: Mapping[str, Any]) -> Any:
    """The tool definitions (no ``name``), or the observation of one call in ``workdir``."""
    registry = Registry(
        inp["workdir"], bash_timeout=float(inp.get("bash_timeout", 60)), output_cap=int(inp.get("output_cap", 65536))
    )
    if "name" not in inp:
        return [tool.to_dict() for tool in registry.available_tools()]
    return registry.execute(inp["name"], inp["arguments"])
