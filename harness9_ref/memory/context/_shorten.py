"""Shortening oversized messages in a view, so that a request fits the window (SPEC R-TRIM-1 … R-TRIM-3).

Compaction removes old messages; it cannot help when one recent message is itself huge (a 40 KB
tool result kept in the tail). Shortening keeps the beginning and the end of such a text, with a
marker in between that says how much was left out and that the full text is still in the session.
It works on a view only: the stored history is never shortened, no message is removed or moved,
so no tool call loses its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...schema import Message
from ._tokens import CHARS_PER_TOKEN, message_bytes, utf8_len

__all__ = ["SHORTENED_MARKER", "SHORTEN_KEEP_MIN", "shorten_text", "shorten_view"]

# R-TRIM-2: what replaces the middle of a shortened text.
SHORTENED_MARKER: Final = (
    "\n\n[… {omitted} of {total} bytes left out here to fit the context window; "
    "the full text is kept in the session …]\n\n"
)
SHORTEN_KEEP_MIN: Final = 1024  # R-TRIM-3: a shortened message keeps at least this many bytes


def _marker(omitted: int, total: int) -> str:
    return SHORTENED_MARKER.replace("{omitted}", str(omitted), 1).replace("{total}", str(total), 1)


def marker_bytes(total: int) -> int:
    """The marker's size when both numbers are ``total``: an upper bound for any cut of ``total`` bytes."""
    return utf8_len(_marker(total, total))


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def shorten_text(text: str, keep: int) -> str:
    """``head + marker + tail`` keeping about ``keep`` bytes of ``text`` (R-TRIM-2).

    The cut never splits a character: ``head`` is the longest prefix of at most ``keep // 2``
    bytes, ``tail`` the longest suffix of at most ``keep - keep // 2`` bytes.
    """
    data = text.encode("utf-8")
    total = len(data)
    if total <= keep:
        return text
    end = keep // 2
    while end > 0 and _is_continuation(data[end]):
        end -= 1
    start = total - (keep - keep // 2)
    while start < total and _is_continuation(data[start]):
        start += 1
    head, tail = data[:end].decode("utf-8"), data[start:].decode("utf-8")
    return head + _marker(total - end - (total - start), total) + tail


def shorten_view(msgs: Sequence[Message], max_tokens: int, keep_min: int = SHORTEN_KEEP_MIN) -> list[Message]:
    """Shorten the longest contents until ``estimate_tokens`` of the list is at most ``max_tokens`` (R-TRIM-1, R-TRIM-3).

    Message 0 (the system prompt) and tool-call arguments are never touched; a message whose
    shortened form would not be shorter stays as it is. What is still over budget when the
    candidates run out stays over budget. ``keep_min`` is the least a shortened content keeps
    and the size a candidate must exceed: SHORTEN_KEEP_MIN, or 0 when even short messages
    must give way because nothing else fits (R-FIT-1).
    """
    out = list(msgs)
    excess = sum(message_bytes(m) for m in out) - (CHARS_PER_TOKEN * max_tokens + CHARS_PER_TOKEN - 1)
    if excess <= 0:
        return out
    sizes = [(utf8_len(m.content), i) for i, m in enumerate(out) if i > 0]
    candidates = sorted(((-size, i) for size, i in sizes if size > keep_min))
    for negative_size, i in candidates:
        if excess <= 0:
            break
        size = -negative_size
        keep = max(keep_min, size - excess - marker_bytes(size))
        content = shorten_text(out[i].content, keep)
        lost = size - utf8_len(content)
        if lost <= 0:
            continue
        message = out[i]
        out[i] = Message(message.role, content, message.tool_calls, message.tool_call_id)
        excess -= lost
    return out
