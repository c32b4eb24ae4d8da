"""The conformance vocabulary: op names and the adapter protocol version.

Every port's adapter, the case schema and the protocol schemas use these names; a test checks
that the schemas' ``op`` enums equal ``OPS``, so the three cannot drift apart.
"""

from __future__ import annotations

from typing import Final

__all__ = ["OBSERVED_KEYS", "OPS", "PROTOCOL_VERSION"]

OPS: Final = (
    "estimate_tokens",
    "estimate_tool_tokens",
    "canonical_json",
    "format_token_count",
    "model_limits",
    "repair_tool_pairs",
    "compact",
    "shorten_view",
    "session",
    "memory_session",
    "provider_request",
    "provider_parse",
    "provider_call",
    "model_window",
    "engine_run",
    "tool_execute",
    "approval_rule",
    "engine_tool",
    "system_prompt",
    "tui_status",
    "tui_notice",
    "tui_resume",
    "tui_input",
    "cli",
)

# The adapter protocol this runner speaks; an adapter's start answer must echo it.
PROTOCOL_VERSION: Final = 1

# Keys of a steps case's ``expect`` that the runner checks itself, by looking at the scratch
# folder after the run (conformance/runner/_workspace.py), rather than taking the adapter's word.
OBSERVED_KEYS: Final = ("database", "files", "modes", "replay")
