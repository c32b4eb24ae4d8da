"""Token estimation and display (SPEC R-TOK-1 … R-TOK-5, R-FMT-1 … R-FMT-3).

The estimate is "UTF-8 bytes divided by four", divided once on the total. Bytes, not code
points: Chinese text is three bytes a character, and counting characters would under-estimate
it three- to four-fold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ...schema import Message, ToolDefinition, canonical_json

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "estimate_tool_tokens", "format_token_count", "size_text"]

CHARS_PER_TOKEN: Final = 4  # R-TOK-1


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes (a lone surrogate counts three, as WTF-8 writes it)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def message_bytes(msg: Message) -> int:
    """The bytes one message adds to B in R-TOK-2; role and framing count nothing."""
    total = utf8_len(msg.content) + utf8_len(msg.tool_call_id)
    for call in msg.tool_calls:
        total += utf8_len(call.id) + utf8_len(call.name) + utf8_len(call.arguments)
    return total


def bytes_to_tokens(total_bytes: int) -> int:
    return total_bytes // CHARS_PER_TOKEN


def estimate_tokens(msgs: Iterable[Message]) -> int:
    """Estimate the tokens a list of messages occupies (R-TOK-2).

    Returns:
        floor(B / CHARS_PER_TOKEN), B the UTF-8 bytes of every content, tool call id, name,
        arguments and tool_call_id.
    """
    return bytes_to_tokens(sum(message_bytes(m) for m in msgs))


def estimate_tool_tokens(tools: Sequence[ToolDefinition]) -> int:
    """Estimate the tokens tool definitions occupy (R-TOK-3, R-TOK-4).

    A schema counts as its canonical JSON text; a null schema counts nothing.
    """
    total = 0
    for tool in tools:
        total += utf8_len(tool.name) + utf8_len(tool.description)
        if tool.input_schema is not None:
            total += utf8_len(canonical_json(tool.input_schema))
    return bytes_to_tokens(total)


def _tenths(tenths: int, unit: str) -> str:
    whole, frac = divmod(tenths, 10)
    return f"{whole}.{frac}{unit}" if frac else f"{whole}{unit}"


def format_token_count(n: int) -> str:
    """Format a token count for people, in integer arithmetic only (R-FMT-1 … R-FMT-3).

    500 -> "500", 1050 -> "1.1K", 999950 -> "1M", 1200000 -> "1.2M".
    """
    if n < 1000:
        return str(n)
    k_tenths = (n + 50) // 100
    if k_tenths < 10000:
        return _tenths(k_tenths, "K")
    return _tenths((n + 50000) // 100000, "M")


def size_text(size: int) -> str:
    """A size in bytes for people (R-TOOL-9): R-FMT's figure, a space, the unit: ``100.2 KB``."""
    figure = format_token_count(size)
    unit = figure[-1] if figure[-1:] in ("K", "M") else ""
    return f"{figure.removesuffix(unit)} {unit}B"
