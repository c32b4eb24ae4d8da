"""What the context holds, in words: the notice of each compaction tier, the lines of
``/context`` with the AGENTS.md files in the system prompt, the notice of a retry, the
warnings about AGENTS.md files and a run's error message (SPEC R-TUI-5, R-TUI-20, R-TUI-21,
R-ENG-22, R-INST-2, R-INST-5, R-CLI-19, R-LANG-3).

Both read JSON-friendly data (the engine's dataclasses or their ``to_dict`` objects), so the
terminal UI, ``harness9-ref run`` and the conformance adapter render the same text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..engine import (
    CANCELLED,
    INSTRUCTIONS_MAX_BYTES,
    INTERNAL_ERROR,
    MAX_TURNS,
    CompactionData,
    ContextPart,
    ContextReport,
    ErrorData,
    InstructionFile,
    InstructionWarning,
    RetryData,
    SaveFailedData,
    WindowData,
    one_line,
)
from ..memory.context import format_token_count
from ..memory.storage import ContextState
from ..provider import is_official_endpoint, server_name
from ._strings import (
    COMPACTION_TIERS,
    CONTEXT_COUNTED,
    CONTEXT_INDENT,
    CONTEXT_PARTS,
    CONTEXT_SOURCES,
    CONTEXT_WINDOW_SOURCES,
    DEFAULT_LANG,
    strings_for,
)

__all__ = [
    "OFFLINE_LABEL",
    "compaction_notice",
    "context_lines",
    "context_report_from_dict",
    "counted",
    "folder_shown",
    "instruction_lines",
    "instruction_warning_line",
    "learned_window_line",
    "model_label",
    "not_saved_notice",
    "origin_line",
    "other_folder_line",
    "provider_shown",
    "retry_notice",
    "run_compaction_notice",
    "run_error",
    "window_notice",
    "without_type_name",
]

_TYPE_PREFIX: Final = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning)(?::\s*|$)")
MODEL_NOT_FOUND: Final = "model_not_found"  # R-ERR-11: the code of a model the provider does not know


OFFLINE_LABEL: Final = "offline"  # R-TUI-25: the offline provider's name (offline.py takes it), its whole label
MODEL_LABEL: Final = "{provider}:{model}"  # R-TUI-25: the same in both languages
SERVER_LABEL: Final = "{label}@{server}"  # R-TUI-26: on a base URL other than the official endpoint


def model_label(provider: str, request_model: str, base_url: str | None = None) -> str:
    """The model label of the status bar and of a stored session (R-TUI-25, R-TUI-26, R-FIND-4a):
    who answers and the name its requests carry.

    ``request_model`` is R-PRV-27's (prefix removed on an official endpoint, kept on a router),
    so the label shows what is sent, never a name no request carries; the offline provider sends
    none, so it is ``offline`` alone, and a label never suggests a model answers when none does.
    A ``base_url`` other than the official endpoint adds ``@`` and its server (R-TUI-26), so a
    local server, which may get no key at all (R-CLI-21), is seen to answer; None is the default one.
    Here rather than in the terminal UI: ``run`` records it too and never loads the UI.
    """
    if provider == OFFLINE_LABEL:
        return OFFLINE_LABEL
    label = MODEL_LABEL.format(provider=provider, model=request_model)
    server = "" if base_url is None or is_official_endpoint(provider, base_url) else server_name(base_url)
    return SERVER_LABEL.format(label=label, server=server) if server else label


def without_type_name(message: str) -> str:
    """An internal error's message without the exception type R-ENG-17 puts in front (R-CLI-13)."""
    return _TYPE_PREFIX.sub("", message, count=1) if _TYPE_PREFIX.match(message) else message


def run_error(data: ErrorData, lang: str = DEFAULT_LANG, max_turns: int = 0, provider: str = "", model: str = "") -> str:
    """The message of a run's error event in ``lang`` (R-LANG-3): ``cancelled`` and, given the
    engine's limit, ``max_turns`` by their codes; a model the provider does not know as
    R-CLI-19's line naming ``provider`` and ``model`` (the request model) and how to choose
    another, since the provider's own words do not always name it (``Not found``); an internal
    error behind ``cli_internal`` without its type name (R-CLI-13); any other as the run
    reported it (a provider's words)."""
    texts = strings_for(lang)
    if data.code == CANCELLED:
        return texts["cancelled"]
    if data.code == MAX_TURNS and max_turns > 0:
        return texts["err_max_turns"].format(max_turns=max_turns)
    if data.code == MODEL_NOT_FOUND:
        return texts["model_not_found"].format(provider=provider, model=model, message=one_line(data.message))
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


def run_compaction_notice(data: CompactionData | Mapping[str, Any], lang: str = DEFAULT_LANG) -> str | None:
    """The notice of a run's compaction event, or None for one that did not shrink the figure (R-TUI-36).

    A recovery announces itself even when nothing changed (R-LONG-7b), and an estimate that
    shrank can still give a figure that did not (R-LONG-10c's rules differ before and after):
    a line saying ``4.7K → 4.8K`` would tell the user the context grew while being compacted.
    ``/compact`` answers with ``compaction_notice`` whatever the figures (R-TUI-21b).
    """
    if int(_field(data, "tokens_after")) >= int(_field(data, "tokens_before")):
        return None
    return compaction_notice(data, lang)


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
        window_source=str(data.get("window_source", "")),
    )


def instruction_warning_line(warning: InstructionWarning, lang: str = DEFAULT_LANG) -> str:
    """The line of a warning about an AGENTS.md file (R-INST-2): ``instructions_<kind>`` of ``lang``."""
    return strings_for(lang)[f"instructions_{warning.kind}"].format(
        path=warning.path, size=warning.size, limit=INSTRUCTIONS_MAX_BYTES, reason=warning.reason
    )


def instruction_lines(
    files: Sequence[InstructionFile | Mapping[str, Any]], lang: str = DEFAULT_LANG
) -> list[str]:
    """/context's lines for the AGENTS.md files in the system prompt (R-INST-5), in their order.

    Each is indented under the system prompt's line and names the file and its tokens (R-FMT),
    ``(cut)`` when only its start is used; with no file one line says there is none, so a file
    that was expected and not found shows.
    """
    texts = strings_for(lang)
    indent = CONTEXT_INDENT * 2
    if not files:
        return [indent + texts["instructions_context_none"]]
    lines = []
    for file in files:
        key = "instructions_context_file_cut" if _field(file, "cut", False) else "instructions_context_file"
        tokens = format_token_count(int(_field(file, "tokens")))
        lines.append(indent + texts[key].format(path=_field(file, "path"), tokens=tokens))
    return lines


def context_lines(
    report: ContextReport,
    lang: str = DEFAULT_LANG,
    instructions: Sequence[InstructionFile | Mapping[str, Any]] | None = None,
) -> list[str]:
    """What ``/context`` shows for ``report`` (R-TUI-20).

    A header with the total, the window and the source; one indented line per part of the
    report, in its order (the counted parts with their count), the system prompt's followed by
    ``instruction_lines`` when ``instructions`` is given (R-INST-5); then the trigger: its
    tokens, or that automatic compaction is off; then, when the report names it, where the
    window comes from (R-WIN-7). Percentages are of the window,
    ``n * 100 // window``; with the window unknown (0) no percentage and no trigger line are shown.

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
        if part.name == "system" and instructions is not None:
            lines.extend(instruction_lines(instructions, lang))
    if known:
        if report.budget > 0:
            lines.append(texts["context_trigger"].format(budget=format_token_count(report.budget), pct=pct(report.budget)))
        else:
            lines.append(texts["context_trigger_off"])
    if report.window_source in CONTEXT_WINDOW_SOURCES:
        lines.append(texts["context_window_line"].format(source=texts[f"context_window_{report.window_source}"]))
    return lines


def learned_window_line(state: ContextState, lang: str = DEFAULT_LANG) -> str:
    """``show``'s line for a window the session learned from its server (R-WIN-7): ``show_window``."""
    texts = strings_for(lang)
    return texts["show_window"].format(
        window=format_token_count(state.window),
        source=texts[f"context_window_{state.window_source}"],
        model=state.window_model,
    )


def counted(n: int, noun: str, lang: str = DEFAULT_LANG) -> str:
    """``n`` and its noun, ``sessions`` or ``messages``, singular for 1 (R-CLI-56): ``1 message``, ``2 messages``."""
    return strings_for(lang)[f"{noun}_count_one" if n == 1 else f"{noun}_count"].format(n=n)


def folder_shown(folder: str, lang: str = DEFAULT_LANG) -> str:
    """A session's folder as listed (R-FIND-6): the home folder as ``~``, ``folder_unknown`` for
    one recorded before sessions kept theirs. Not made terminal-safe here: each caller's filter does."""
    if not folder:
        return strings_for(lang)["folder_unknown"]
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (folder == home or folder.startswith(home.rstrip("/") + "/")):
        return "~" + folder[len(home.rstrip("/")) :]
    return folder


def provider_shown(provider: str, lang: str = DEFAULT_LANG) -> str:
    """A session's provider as listed (R-FIND-6): the model label it recorded, or ``provider_unknown``."""
    return provider or strings_for(lang)["provider_unknown"]


def origin_line(folder: str, provider: str, lang: str = DEFAULT_LANG) -> str:
    """``show``'s line naming where and with what the session was started (R-CLI-55): ``show_origin``."""
    return strings_for(lang)["show_origin"].format(folder=folder_shown(folder, lang), provider=provider_shown(provider, lang))


def other_folder_line(folder: str, here: str, lang: str = DEFAULT_LANG) -> str:
    """The line of a session continued in a folder other than its own (R-CLI-53): ``cli_other_folder``."""
    return strings_for(lang)["cli_other_folder"].format(folder=folder_shown(folder, lang), here=folder_shown(here, lang))


def window_notice(data: WindowData | Mapping[str, Any], lang: str = DEFAULT_LANG) -> str:
    """The line of a ``window`` event (R-EVT-12): ``window_notice_<source>`` of ``lang``."""
    return strings_for(lang)[f"window_notice_{_field(data, 'source')}"].format(
        window=format_token_count(int(_field(data, "window"))),
        previous=format_token_count(int(_field(data, "previous"))),
    )
