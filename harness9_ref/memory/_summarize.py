"""SummarizationCompactor: replace old messages with an LLM-written summary
(SPEC R-SUM-1 … R-SUM-12; seed 6.1, D5).

The summarizer sees exactly two messages, a system prompt and a user prompt, and no tools. A
previous summary found among the old messages selects the incremental prompt, so that repeated
compaction merges summaries instead of summarising a summary of a summary.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Final, Protocol, Sequence

from ..schema import ROLE_SYSTEM, ROLE_USER, Message, ToolDefinition, Usage
from ._budget import (
    DEFAULT_MIN_TAIL_MESSAGES,
    TokenBudgetCompactor,
    effective_max_tokens,
    effective_min_tail,
)
from ._compactor import Compactor, budget_for_context_window, is_compactable
from ._repair import repair_orphaned_tool_pairs
from ._tokens import estimate_tokens

__all__ = [
    "SUMMARY_MARKER",
    "SUMMARY_TEMPLATE",
    "SUMMARY_SYSTEM_PROMPT",
    "SUMMARY_FIRST_PROMPT",
    "SUMMARY_INCREMENTAL_PROMPT",
    "SUMMARY_TIMEOUT_SECONDS",
    "Summarizer",
    "SummarizationCompactor",
    "SummaryFailed",
    "new_summarization_compactor",
    "render_transcript",
    "summary_request",
]

SUMMARY_MARKER: Final = "[Conversation Summary]"  # R-SUM-6: first line of a summary message
SUMMARY_TIMEOUT_SECONDS: Final = 60.0  # R-SUM-9: one summarizer call may take this long

# R-SUM-7: the five headings of seed 6.1 (summaryTemplate), verbatim.
SUMMARY_TEMPLATE: Final = (
    "**Goal:** What the user is trying to accomplish.\n"
    "**Progress:** Key actions taken and their results.\n"
    "**Key Decisions:** Important choices and rationale.\n"
    "**Next Steps:** What was planned or pending.\n"
    "**Critical Context:** Facts, file paths, variable names, or constraints the agent must remember."
)

# R-SUM-7: the summarizer's system prompt.
SUMMARY_SYSTEM_PROMPT: Final = (
    "You are the context summarizer of a coding agent. Older messages of a conversation are "
    "being removed from the agent's context window, and your summary replaces them. Keep every "
    "fact the agent needs to continue the task: the user's requests and preferences, file paths, "
    "commands, identifiers, error messages and numbers. Do not invent anything. When a previous "
    "summary is given, merge the new conversation into it and keep what still matters. Reply "
    "with the summary only, in exactly this format:\n\n" + SUMMARY_TEMPLATE
)

# R-SUM-8: the user prompt for a first summary and for an incremental update. Each {name} is
# replaced once, in one pass; the inserted text is never scanned for placeholders again.
SUMMARY_FIRST_PROMPT: Final = "Conversation to summarize:\n{conversation}"
SUMMARY_INCREMENTAL_PROMPT: Final = (
    "<previous-summary>\n{previous_summary}\n</previous-summary>\n\nNew conversation to merge:\n{conversation}"
)

_PLACEHOLDER: Final = re.compile(r"\{(conversation|previous_summary)\}")


class Summarizer(Protocol):
    """Anything that can answer a chat request; every LLM provider satisfies it (seed 6.1)."""

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message | None, Usage | None]: ...


class SummaryFailed(Exception):
    """The summarizer gave no usable summary; the compactor falls back (R-SUM-10)."""


def _fill(template: str, **values: str) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _is_summary(msg: Message) -> bool:
    return msg.content.startswith(SUMMARY_MARKER)


def _summary_text(msg: Message) -> str:
    """The text after the marker line of a summary message."""
    _, newline, rest = msg.content.partition("\n")
    return rest if newline else ""


def render_transcript(head: Sequence[Message]) -> tuple[str, str | None]:
    """Render old messages as text for the summarizer (R-SUM-5, R-SUM-6).

    Returns:
        The transcript, one line per rendered item joined by "\\n", and the previous summary
        (the text of the last summary message in ``head``) or None when there is none.
    """
    lines: list[str] = []
    previous: str | None = None
    for msg in head:
        if _is_summary(msg):
            previous = _summary_text(msg)
            continue
        if msg.tool_call_id:
            lines.append(f"[tool_result {msg.tool_call_id}]: {msg.content}")
            continue
        if msg.content:
            lines.append(f"[{msg.role}]: {msg.content}")
        lines.extend(f"[tool_call {c.name}({c.id})]: {c.arguments}" for c in msg.tool_calls)
    return "\n".join(lines), previous


def summary_request(head: Sequence[Message]) -> list[Message]:
    """The two messages sent to the summarizer for ``head`` (R-SUM-7, R-SUM-8)."""
    transcript, previous = render_transcript(head)
    if previous is None:
        prompt = _fill(SUMMARY_FIRST_PROMPT, conversation=transcript)
    else:
        prompt = _fill(SUMMARY_INCREMENTAL_PROMPT, conversation=transcript, previous_summary=previous)
    return [Message(ROLE_SYSTEM, SUMMARY_SYSTEM_PROMPT), Message(ROLE_USER, prompt)]


def _call_with_timeout(summarizer: Summarizer, request: list[Message], timeout: float) -> Message | None:
    """Run one summarizer call, giving up after ``timeout`` seconds (R-SUM-9).

    The call runs in a daemon thread because a Summarizer has no way to be told to stop; a
    call that overruns is abandoned and its late answer ignored.
    """
    outcome: list[Message | None] = []
    failure: list[BaseException] = []

    def call() -> None:
        try:
            outcome.append(summarizer.generate(request, [])[0])
        except Exception as exc:  # any provider failure means: fall back
            failure.append(exc)

    worker = threading.Thread(target=call, name="harness9-summarizer", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise SummaryFailed(f"the summarizer did not answer within {timeout:g} s")
    if failure:
        raise SummaryFailed(f"the summarizer failed: {failure[0]}") from failure[0]
    return outcome[0]


@dataclass(frozen=True, slots=True)
class SummarizationCompactor:
    """Summarise everything but the system prompt and the newest ``min_tail_messages`` messages.

    Args:
        provider: the Summarizer; None counts as a failure and always falls back.
        max_tokens: compact only when the estimate exceeds this (<= 0: DEFAULT_MAX_TOKENS).
        min_tail_messages: newest messages kept verbatim (<= 0: DEFAULT_MIN_TAIL_MESSAGES).
        fallback: used on any failure; None means TokenBudgetCompactor(max_tokens, min_tail_messages).
        timeout: seconds one summarizer call may take.
    """

    provider: Summarizer | None
    max_tokens: int
    min_tail_messages: int = DEFAULT_MIN_TAIL_MESSAGES
    fallback: Compactor | None = None
    timeout: float = SUMMARY_TIMEOUT_SECONDS
    _failures: list[str] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def failures(self) -> list[str]:
        """Why each fallback happened, oldest first: a failed summary is never silent (R-SUM-10)."""
        return list(self._failures)

    def effective_fallback(self) -> Compactor:
        if self.fallback is not None:
            return self.fallback
        return TokenBudgetCompactor(self.max_tokens, self.min_tail_messages)

    def compact(self, msgs: Sequence[Message]) -> list[Message]:
        """Apply seed 6.1: summarise the head, keep the tail, repair pairs; fall back on failure."""
        if estimate_tokens(msgs) <= effective_max_tokens(self.max_tokens) or not is_compactable(msgs):
            return list(msgs)
        min_tail = effective_min_tail(self.min_tail_messages)
        split = len(msgs) - min_tail
        if split <= 1:
            return list(msgs)
        head, tail = msgs[1:split], msgs[split:]
        try:
            summary = self._summarize(head)
        except SummaryFailed as exc:
            self._failures.append(str(exc))
            return self.effective_fallback().compact(msgs)
        summary_msg = Message(ROLE_USER, f"{SUMMARY_MARKER}\n{summary}")
        return repair_orphaned_tool_pairs([msgs[0], summary_msg, *tail])

    def _summarize(self, head: Sequence[Message]) -> str:
        """The summary text exactly as the summarizer wrote it (R-SUM-12); blank is a failure."""
        if self.provider is None:
            raise SummaryFailed("no summarizer is configured")
        reply = _call_with_timeout(self.provider, summary_request(head), self.timeout)
        if reply is None:
            raise SummaryFailed("the summarizer returned no message")
        if not reply.content.strip():
            raise SummaryFailed("the summarizer returned an empty summary")
        return reply.content


def new_summarization_compactor(provider: Summarizer | None, context_window: int) -> SummarizationCompactor:
    """The seed's NewSummarizationCompactor: 80% of the window, a tail of 6, the default fallback."""
    return SummarizationCompactor(provider, budget_for_context_window(context_window), DEFAULT_MIN_TAIL_MESSAGES)
