"""Judging a port whose summarizer prompts, summary marker or stub text are its own.

Why: a port such as the Go original words its summarizer prompts, its summary marker and its
repair stub differently from SPEC.md while splitting, rendering, choosing the first or the
incremental prompt, extracting the previous summary and repairing pairs exactly as SPEC says.
Comparing its texts byte for byte would fail every summarization and repair case on wording
alone and hide its logic. So an adapter may declare its wording in its start answer, and the
runner rewrites each case's texts into that wording before comparing: the logic stays checked
exactly. The texts themselves are pinned by the few cases marked ``"pins": ["wording"]``, which
are never rewritten.

The runner reads SPEC's values from its own constants below, not from ``harness9_ref``, so it
stays standard library only; a test checks that they equal the reference's pinned constants.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

__all__ = [
    "SPEC_WORDING",
    "WORDING_PIN",
    "Wording",
    "read_wording",
    "reword_case",
]

# SPEC.md's pinned texts (R-SUM-6, R-SUM-7, R-SUM-8, R-REP-4), equal to harness9_ref.memory.context's.
SUMMARY_MARKER: Final = "[Conversation Summary]"
SUMMARY_SYSTEM_PROMPT: Final = (
    "You are the context summarizer of a coding agent. Older messages of a conversation are "
    "being removed from the agent's context window, and your summary replaces them. Keep every "
    "fact the agent needs to continue the task: the user's requests and preferences, file "
    "paths, commands, identifiers, error messages and numbers. Do not invent anything. When a "
    "previous summary is given, merge the new conversation into it and keep what still matters. "
    "Reply with the summary only, in exactly this format:\n\n"
    "**Goal:** What the user is trying to accomplish.\n"
    "**Progress:** Key actions taken and their results.\n"
    "**Key Decisions:** Important choices and rationale.\n"
    "**Next Steps:** What was planned or pending.\n"
    "**Critical Context:** Facts, file paths, variable names, or constraints the agent must "
    "remember."
)
SUMMARY_FIRST_PROMPT: Final = "Conversation to summarize:\n{conversation}"
SUMMARY_INCREMENTAL_PROMPT: Final = (
    "<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    "New conversation to merge:\n{conversation}"
)
STUB_TEXT: Final = "[context truncated]"
SUMMARY_FOCUS: Final = "\n\nPay particular attention to: {focus}"  # R-FOLD-5

WORDING_PIN: Final = "wording"  # the ``pins`` entry of a case that is never rewritten
WORDING_OPS: Final = frozenset({"compact", "repair_tool_pairs"})
# Ops whose expected results hold these texts inside token counts and requests the runner
# cannot re-derive; a case of theirs that shows a text the port words otherwise is unsupported.
UNREWORDABLE_OPS: Final = frozenset({"engine_run"})
_PLACEHOLDER: Final = re.compile(r"\{(conversation|previous_summary)\}")


@dataclass(frozen=True, slots=True)
class Wording:
    """The texts a port uses; the defaults are SPEC's. Field names are the protocol's keys."""

    summary_system_prompt: str = SUMMARY_SYSTEM_PROMPT
    summary_first_prompt: str = SUMMARY_FIRST_PROMPT
    summary_incremental_prompt: str = SUMMARY_INCREMENTAL_PROMPT
    summary_marker: str = SUMMARY_MARKER
    stub_text: str = STUB_TEXT
    summary_focus: str = SUMMARY_FOCUS

    @property
    def prompts_differ(self) -> bool:
        """Whether the port's summarizer requests are worded unlike SPEC's."""
        spec = SPEC_WORDING
        return (self.summary_system_prompt, self.summary_first_prompt,
                self.summary_incremental_prompt) != (spec.summary_system_prompt,
                spec.summary_first_prompt, spec.summary_incremental_prompt)


SPEC_WORDING: Final = Wording()
_KEYS: Final = tuple(f.name for f in fields(Wording))
# Placeholders each template must hold, so that logic stays visible in the rewritten prompt.
_REQUIRED: Final = {
    "summary_first_prompt": ("{conversation}",),
    "summary_incremental_prompt": ("{conversation}", "{previous_summary}"),
    "summary_focus": ("{focus}",),
}


def read_wording(value: Any) -> Wording:
    """The ``wording`` member of a start answer; absent keys keep SPEC's values.

    Raises:
        ValueError: not an object of known string keys, an empty marker, or a template that
            lacks one of its placeholders (without it, part of the logic would go unchecked).
    """
    if value is None:
        return SPEC_WORDING
    if not isinstance(value, Mapping):
        raise ValueError("wording must be an object")
    unknown = sorted(set(value) - set(_KEYS))
    if unknown:
        raise ValueError(f"wording has unknown keys {unknown}; known are {list(_KEYS)}")
    for key, text in value.items():
        if not isinstance(text, str):
            raise ValueError(f"wording.{key} must be a string")
        for placeholder in _REQUIRED.get(key, ()):
            if placeholder not in text:
                raise ValueError(f"wording.{key} must contain {placeholder}")
    if value.get("summary_marker") == "":
        raise ValueError("wording.summary_marker must not be empty")
    return Wording(**dict(value))


def _parse(template: str, text: str) -> dict[str, str] | None:
    """Recover the placeholder values SPEC's template was filled with, or None.

    A text that parses two ways (a value that itself holds the template's literal text) is
    None too: the runner cannot know which values the case meant, so it does not guess.
    """
    pieces = _PLACEHOLDER.split(template)
    names = pieces[1::2]
    results = []
    for group in (r"(.*?)", r"(.*)"):
        literals = [re.escape(piece) for piece in pieces[0::2]]
        pattern = "".join(lit + (group if i < len(names) else "") for i, lit in enumerate(literals))
        match = re.fullmatch(pattern, text, re.DOTALL)
        if match is None:
            return None
        results.append(dict(zip(names, match.groups())))
    return results[0] if results[0] == results[1] else None


def _fill(template: str, values: Mapping[str, str]) -> str:
    """R-SUM-8's one-pass filling: inserted text is never scanned again."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _reword_prompt(text: str, wording: Wording) -> str | None:
    for spec_template, own_template in (
        (SUMMARY_INCREMENTAL_PROMPT, wording.summary_incremental_prompt),
        (SUMMARY_FIRST_PROMPT, wording.summary_first_prompt),
    ):
        values = _parse(spec_template, text)
        if values is not None:
            return _fill(own_template, values)
    return None


def _reword_requests(requests: Any, wording: Wording) -> Any:
    """Summarizer requests re-rendered with the port's system prompt and templates."""
    if not isinstance(requests, list):
        return requests
    out = []
    for request in requests:
        messages = request.get("messages") if isinstance(request, dict) else None
        if not (isinstance(messages, list) and len(messages) == 2
                and all(isinstance(m, dict) for m in messages)):
            out.append(request)
            continue
        system, user = (dict(m) for m in messages)
        if system.get("content") == SUMMARY_SYSTEM_PROMPT:
            system["content"] = wording.summary_system_prompt
        prompt = _reword_prompt(user.get("content", ""), wording)
        if prompt is None:
            raise _CannotReword(f"a summarizer prompt does not parse with SPEC's templates: "
                                f"{user.get('content', '')[:60]!r}")
        user["content"] = prompt
        out.append({**request, "messages": [system, user]})
    return out


class _CannotReword(Exception):
    """The case's expected texts cannot be carried into the port's wording."""


def _remark(messages: Any, wording: Wording) -> Any:
    """Messages whose content starts with SPEC's marker, given the port's marker instead."""
    if not isinstance(messages, list):
        return messages
    out = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and content.startswith(SUMMARY_MARKER):
            message = {**message, "content": wording.summary_marker + content[len(SUMMARY_MARKER):]}
        out.append(message)
    return out


def _restub(output: Any, inputs: Any, wording: Wording) -> Any:
    """Stub results (R-REP-4) in an expected message list, given the port's stub text.

    A stub is a user message with SPEC's stub text that the input did not hold: the cases
    never feed a stub in, but a message equal to an input one is the input's, left alone.
    """
    if not isinstance(output, list):
        return output
    given = [m for m in inputs if isinstance(m, dict)] if isinstance(inputs, list) else []
    out = []
    for message in output:
        if (isinstance(message, dict) and message.get("role") == "user"
                and message.get("content") == STUB_TEXT and message not in given):
            message = {**message, "content": wording.stub_text}
        out.append(message)
    return out


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, keys excepted."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _texts_shown(input: Any, expect: Any, wording: Wording) -> str:
    """The names of SPEC's texts, among those the port words otherwise, that the case holds.

    A summarizer request always carries the system prompt, so a port whose templates differ
    is found by it too; the focus suffix is found by its text before ``{focus}``.
    """
    needles = {
        "summary_system_prompt": (wording.prompts_differ, SUMMARY_SYSTEM_PROMPT),
        "summary_marker": (wording.summary_marker != SUMMARY_MARKER, SUMMARY_MARKER),
        "stub_text": (wording.stub_text != STUB_TEXT, STUB_TEXT),
        "summary_focus": (wording.summary_focus != SUMMARY_FOCUS,
                          SUMMARY_FOCUS.split("{", 1)[0]),
    }
    texts = [*_strings(input), *_strings(expect)]
    return ", ".join(name for name, (differs, needle) in needles.items()
                     if differs and any(needle in text for text in texts))


def reword_case(op: str, input: dict[str, Any], expect: dict[str, Any], wording: Wording
                ) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """The case's input and expect carried into the port's wording, or why it cannot be judged.

    Only ``compact`` and ``repair_tool_pairs`` cases are rewritten; an ``engine_run`` case that
    shows one of the texts the port words otherwise cannot be judged; others come back as given.
    The input's summary messages get the port's marker, so its R-SUM-6 logic sees summaries.
    """
    if op in UNREWORDABLE_OPS and wording != SPEC_WORDING:
        shown = _texts_shown(input, expect, wording)
        if shown:
            return (f"its expected requests, messages and token counts hold SPEC's {shown}, "
                    "which the adapter words otherwise")
    if op not in WORDING_OPS or wording == SPEC_WORDING or "output" not in expect:
        return input, expect
    summarizing = op == "compact" and input.get("strategy") == "summarization"
    config = input.get("config")
    if summarizing and wording.prompts_differ and isinstance(config, dict) and \
            isinstance(config.get("request_limit"), int) and config["request_limit"] > 0:
        return ("the pieces of R-FOLD-3 and the shortening of R-FOLD-4 depend on the byte "
                "lengths of the prompts, so with the adapter's own prompts this case's "
                "requests cannot be derived from SPEC's")
    output = expect["output"]
    try:
        if op == "repair_tool_pairs":
            output = _restub(output, input.get("messages"), wording)
        elif isinstance(output, dict):
            messages = output.get("messages")
            if summarizing:
                messages = _remark(messages, wording)
                input = {**input, "messages": _remark(input.get("messages"), wording)}
                if "summarizer_requests" in output:
                    output = {**output, "summarizer_requests":
                              _reword_requests(output["summarizer_requests"], wording)}
            if "messages" in output:
                output = {**output, "messages": _restub(messages, input.get("messages"), wording)}
    except _CannotReword as exc:
        return str(exc)
    return input, {**expect, "output": output}
