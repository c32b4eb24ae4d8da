"""Bidirectional repair of orphaned tool call/result pairs (SPEC R-REP-1 … R-REP-7).

The output is exactly that of the seed's nested-loop algorithm; two sets make it linear.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...schema import ROLE_USER, Message

__all__ = ["STUB_TEXT", "repair_orphaned_tool_pairs"]

STUB_TEXT: Final = "[context truncated]"  # R-REP-4: the stub tool_result content


def repair_orphaned_tool_pairs(msgs: Sequence[Message]) -> list[Message]:
    """Drop results without a call and give every call without a result a stub result.

    A result is orphaned when no message in ``msgs`` carries a tool call with its id (type A);
    it is dropped. A call is orphaned when no message in ``msgs`` answers its id, before or
    after it (type B); a stub result with STUB_TEXT is inserted right after the message
    holding the call, one per orphaned call in call order, before that message's other results.

    Returns:
        A new list; the input is not changed.
    """
    call_ids = {call.id for m in msgs for call in m.tool_calls}
    # "" is kept on purpose: the seed compares ids with ==, so a call whose id is empty is
    # "answered" by any message without a tool_call_id (R-REP-6).
    result_ids = {m.tool_call_id for m in msgs}
    repaired: list[Message] = []
    for msg in msgs:
        if msg.tool_call_id and msg.tool_call_id not in call_ids:
            continue
        repaired.append(msg)
        for call in msg.tool_calls:
            if call.id not in result_ids:
                repaired.append(Message(ROLE_USER, STUB_TEXT, tool_call_id=call.id))
    return repaired
