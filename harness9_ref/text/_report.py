"""What the context holds, in words: the notice of each compaction tier, the lines of
``/context``, the notice of a retry and a run's error message (SPEC R-TUI-5, R-TUI-20, R-TUI-21,
R-ENG-22, R-LANG-3).

Both read JSON-friendly data (the engine's dataclasses or their ``to_dict`` objects), so the
terminal UI, ``harness9-ref run`` and the conformance adapter render the same text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..engine import (
    CANCELLED,
    INTERNAL_ERROR,
    MAX_TURNS,
    CompactionData,
    ContextPart,
    ContextReport,
    ErrorData,
    RetryData,
    SaveFailedData,
)
from ..memory import format_token_count
from ._strings import (
    COMPACTION_TIERS,
    CONTEXT_COUNTED,
    CONTEXT_INDENT,
    CONTEXT_PARTS,
    CONTEXT_SOURCES,
    DEFAULT_LANG,
    strings_for,
)

# gets re-exported
__all__ = [
    "compaction_notice",
    "context_lines",
    "context_report_from_dict",
    "not_saved_notice",
    "retry_notice",
    "run_error",
    "without_type_name",
]

_TYPE_PREFIX: Final = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning)(?::\s*|$)")


def without_type_name(message: str) -> str:
    """An internal error's message without the exception type R-ENG-17 puts in front (R-CLI-13)."""
    return _TYPE_PREFIX.sub("", message, count=1) if _TYPE_PREFIX.match(message) else message


def run_error(data: ErrorData, lang: str = DEFAULT_LANG, max_turns: int = 0) -> str:
    """The message of a run's error event in ``lang`` (R-LANG-3): ``cancelled`` and, given the
    engine's limit, ``max_turns`` by their codes; an internal error behind ``cli_internal``
    without its type name (R-CLI-13); any other as the run reported it (a provider's words)."""
    texts = strings_for(lang)
    if data.code == CANCELLED:
        return texts["cancelled"]
    if data.code == MAX_TURNS and max_turns > 0:
        return texts["err_max_turns"].format(max_turns=max_turns)
    if data.code == INTERNAL_ERROR:
        return texts["cli_internal"].format(message=without_type_name(data.message) or texts["cli_unexpected"])
    return data.message


def _field(data: object, name: str, default: Any = None) -> Any:
    if isinstance(data, Mapping):
        return data.get(name, default)
    return getattr(data, name, default)


def compaction_notice(data: CompactionData | Mapping[str, Any], lang: str = DEFAULT_LANG) -> str:
    """The notice of a compaction event (R-TUI-5, R-TUI-21).

    Args:
        data: the event's data, as ``CompactionData`` or its JSON object
            ``{"tokens_before", "tokens_after", "msgs_before", "msgs_after", "tier"?, "cleared"?}``.

    Returns:
        Without a tier (literal mode), ``compaction_notice`` of ``lang``, for example
        ``⚡ 上下文已压缩 — 12.5K → 6.2K tokens（45 → 22 条消息）``; with one of
        COMPACTION_TIERS, ``compaction_<tier>``, followed by ``compaction_also_cleared`` when
        the tier is not ``cleared`` and results were cleared too. An unknown tier reads as none.
        Token counts are formatted by R-FMT.
    """
    texts = strings_for(lang)
    tier = _field(data, "tier")
    cleared = int(_field(data, "cleared", 0) or 0)
    key = f"compaction_{tier}" if tier in COMPACTION_TIERS else "compaction_notice"
    fields = {
        "tokens_before": format_token_count(int(_field(data, "tokens_before"))),
        "tokens_after": format_token_count(int(_field(data, "tokens_after"))),
        "msgs_before": int(_field(data, "msgs_before")),
        "msgs_after": int(_field(data, "msgs_after")),
        "cleared": cleared,
    }
    line = texts[key].format(**fields)
    if key not in ("compaction_notice", "compaction_cleared") and cleared > 0:
        line += texts["compaction_also_cleared"].format(cleared=cleared)
    return line


def retry_notice(data: RetryData | Mapping[str, Any], lang: str = DEFAULT_LANG) -> str:
    """The line of a retry event (R-ENG-22): ``retry_notice`` of ``lang``.

    ``data`` is ``RetryData`` or its JSON object; the delay is written with one decimal
    (``2.0``), the message as the event gives it, for example ``↻ retrying in 2.0 s: openai:
    HTTP 429 rate_limit_exceeded: slow down (attempt 2 of 3)``.
    """
    return strings_for(lang)["retry_notice"].format(
        delay=f"{float(_field(data, 'delay_seconds')):.1f}",
        message=_field(data, "message"),
        attempt=int(_field(data, "attempt")),
        max_attempts=int(_field(data, "max_attempts")),
    )


def not_saved_notice(data: SaveFailedData | Mapping[str, Any], lang: str = DEFAULT_LANG) -> str:
    """The line of a ``save_failed`` event (R-TUI-22): ``not_saved_notice`` of ``lang``.

    ``data`` is ``SaveFailedData`` or its JSON object; ``total`` counts the stored and the lost
    messages of the turn, so the user sees how much of it is gone.
    """
    unsaved = int(_field(data, "unsaved"))
    return strings_for(lang)["not_saved_notice"].format(
        unsaved=unsaved, total=int(_field(data, "saved")) + unsaved, message=_field(data, "message")
    )


def context_report_from_dict(data: Mapping[str, Any]) -> ContextReport:
    """A ContextReport from its JSON object (R-LONG-17), for the conformance adapter."""
    parts: Sequence[Mapping[str, Any]] = data.get("parts", [])
    return ContextReport(
        window=int(data["window"]),
        budget=int(data["budget"]),
        total=int(data["total"]),
        source=str(data["source"]),
        parts=tuple(ContextPart(str(p["name"]), int(p["tokens"]), int(p["count"])) for p in parts),
    )


def context_lines(report: ContextReport, lang: str = DEFAULT_LANG) -> list[str]:
    """What ``/context`` shows for ``report`` (R-TUI-20).

    A header with the total, the window and the source; one indented line per part of the
    report, in its order (the counted parts with their count); then the trigger: its tokens,
    or that automatic compaction is off. Percentages are of the window, ``n * 100 // window``;
    with the window unknown (0) no percentage and no trigger line are shown.

    Raises:
        ValueError: a part's name or the source is not one R-LONG-17 defines.
    """
    texts = strings_for(lang)
    if report.source not in CONTEXT_SOURCES:
        raise ValueError(f"unknown source {report.source!r}: expected one of {', '.join(CONTEXT_SOURCES)}")
    window = report.window
    known = window > 0
    source = texts[f"context_{report.source}"]
    total = format_token_count(report.total)

    def pct(tokens: int) -> int:
        return tokens * 100 // window

    if known:
        header = texts["context_header"].format(
            total=total, window=format_token_count(window), pct=pct(report.total), source=source
        )
    else:
        header = texts["context_header_unknown"].format(total=total, source=source)
    lines = [header]
    for part in report.parts:
        if part.name not in CONTEXT_PARTS:
            raise ValueError(f"unknown part {part.name!r}: expected one of {', '.join(CONTEXT_PARTS)}")
        key = "context_part_count" if part.name in CONTEXT_COUNTED else "context_part"
        key += "" if known else "_unknown"
        tokens = format_token_count(part.tokens)
        text = texts[key].format(
            label=texts[f"context_{part.name}"], tokens=tokens, count=part.count, pct=pct(part.tokens) if known else 0
        )
        lines.append(CONTEXT_INDENT + text)
    if known:
        if report.budget > 0:
            lines.append(texts["context_trigger"].format(budget=format_token_count(report.budget), pct=pct(report.budget)))
        else:
            lines.append(texts["context_trigger_off"])
    return lines
