"""The design document's memory algorithms, transcribed literally: a test oracle and a benchmark baseline.

Each function follows the design document's pseudocode of EstimateTokens (SPEC R-TOK-1),
TokenBudgetCompactor (R-TB), SlidingWindowCompactor (R-SW) and repairOrphanedToolPairs (R-REP)
step by step, with only the precisions SPEC adds (R-TOK-1, R-TB-1, R-SW-1): bytes rather than code points, the defaults for
non-positive settings, and a history that is empty or does not start with a system message is
returned unchanged. Nothing is precomputed or shortcut: repair is the document's nested loop,
quadratic in the length of the history, and the budget search estimates every candidate from
scratch.

harness9_ref.memory must return exactly what these functions return for every input; it may
only be faster. The property tests compare the two and the benchmarks measure the difference.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness9_ref.schema import Message

__all__ = ["estimate_tokens", "repair_orphaned_tool_pairs", "sliding_window_compact", "token_budget_compact"]

CHARS_PER_TOKEN = 4


def estimate_tokens(msgs: Sequence[Message]) -> int:
    """R-TOK-1 with R-TOK-2: UTF-8 bytes of content, tool call id, name, arguments and tool_call_id, divided once."""
    total = 0
    for msg in msgs:
        total += len(msg.content.encode("utf-8"))
        for tc in msg.tool_calls:
            total += len(tc.id.encode("utf-8"))
            total += len(tc.name.encode("utf-8"))
            total += len(tc.arguments.encode("utf-8"))
        total += len(msg.tool_call_id.encode("utf-8"))
    return total // CHARS_PER_TOKEN


def repair_orphaned_tool_pairs(msgs: Sequence[Message]) -> list[Message]:
    """The repair pseudocode of R-REP, line by line."""
    # Pass 1: collect the tool_call IDs that exist.
    existing_ids: dict[str, bool] = {}
    for msg in msgs:
        for tc in msg.tool_calls:
            existing_ids[tc.id] = True

    # Pass 2: drop orphaned tool_results; insert a stub for each orphaned tool_call.
    result: list[Message] = []
    for msg in msgs:
        if msg.tool_call_id != "" and not existing_ids.get(msg.tool_call_id, False):
            continue  # drop the orphaned tool_result
        result.append(msg)
        if len(msg.tool_calls) > 0:
            for tc in msg.tool_calls:
                # Is there a tool_result for this call?
                has_result = False
                for m2 in msgs:
                    if m2.tool_call_id == tc.id:
                        has_result = True
                        break
                if not has_result:
                    result.append(Message(role="user", content="[context truncated]", tool_call_id=tc.id))
    return result


def _starts_with_system(msgs: Sequence[Message]) -> bool:
    return len(msgs) > 0 and msgs[0].role == "system"


def token_budget_compact(msgs: Sequence[Message], max_tokens: int, min_tail_messages: int) -> list[Message]:
    """The token-budget pseudocode with the defaults of R-TB-1 (160000 tokens, a tail of 6)."""
    if max_tokens <= 0:
        max_tokens = 160000
    if min_tail_messages <= 0:
        min_tail_messages = 6
    if not _starts_with_system(msgs):
        return list(msgs)
    non_system_count = len(msgs) - 1
    # 1. Protect the minimum tail.
    if non_system_count <= min_tail_messages:
        return list(msgs)
    # 2. Estimate the total.
    total_tokens = estimate_tokens(msgs)
    # 3. Within budget: unchanged.
    if total_tokens <= max_tokens:
        return list(msgs)
    # 4. Binary search for the largest tailLen in [MinTailMessages, nonSystemCount-1] with
    #    EstimateTokens([system] + msgs[N-tailLen:]) <= MaxTokens; if none fits, MinTailMessages (R-TB-1).
    tail_len = min_tail_messages
    lo, hi = min_tail_messages, non_system_count - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if estimate_tokens([msgs[0]] + list(msgs[len(msgs) - mid :])) <= max_tokens:
            tail_len = mid
            lo = mid + 1
        else:
            hi = mid - 1
    # 5. The final tail.
    tail = list(msgs[len(msgs) - tail_len :])
    # 6, 7. Repair and return.
    return repair_orphaned_tool_pairs([msgs[0]] + tail)


def sliding_window_compact(msgs: Sequence[Message], max_messages: int) -> list[Message]:
    """The sliding-window pseudocode with the defaults of R-SW-1 (100 messages; fewer than 2 means 2)."""
    if max_messages <= 0:
        max_messages = 100
    if max_messages < 2:
        max_messages = 2
    if not _starts_with_system(msgs):
        return list(msgs)
    # 1. Fits: unchanged.
    if len(msgs) <= max_messages:
        return list(msgs)
    # 2. Start of the window.
    start_idx = len(msgs) - max_messages + 1
    # 3. Boundary fix A: step back over orphaned observations.
    while start_idx > 1 and msgs[start_idx].tool_call_id != "":
        start_idx -= 1
    # 4. Candidate.
    candidate = [msgs[0]] + list(msgs[start_idx:])
    # 5, 6. Boundary fix B: repair both ways.
    return repair_orphaned_tool_pairs(candidate)
