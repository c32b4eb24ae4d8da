"""SummarizationCompactor: replace old messages with an LLM-written summary
(SPEC R-SUM-1 … R-SUM-12).

The summarizer sees exactly two messages, a system prompt and a user prompt, and no tools. A
previous summary found among the old messages selects the incremental prompt, so that repeated
compaction merges summaries instead of summarising a summary of a summary.

With a ``request_limit`` (long-session mode, R-FOLD) no request may outgrow it: the head is
summarised in pieces, each folded into the summary so far with the incremental prompt, so a
head of any length is summarised by requests of bounded size.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from ..._harness9_error import Harness9Error
from ...schema import ROLE_SYSTEM, ROLE_USER, Message, ToolDefinition, Usage
from ._compactor import (
    DEFAULT_MIN_TAIL_MESSAGES,
    Compactor,
    TokenBudgetCompactor,
    budget_for_context_window,
    effective_max_tokens,
    effective_min_tail,
    is_compactable,
)
from ._repair import repair_orphaned_tool_pairs
from ._shorten import marker_bytes, shorten_text
from ._tokens import CHARS_PER_TOKEN, bytes_to_tokens, estimate_tokens, utf8_len

__all__ = [
    "REQUEST_SHARE",
    "SUMMARY_FIRST_PROMPT",
    "SUMMARY_FOCUS",
    "SUMMARY_INCREMENTAL_PROMPT",
    "SUMMARY_MARKER",
    "SUMMARY_NOT_SHORTER",
    "SUMMARY_RECALL",
    "SUMMARY_SHARE",
    "SUMMARY_SYSTEM_PROMPT",
    "SUMMARY_TEMPLATE",
    "SUMMARY_TIMEOUT_SECONDS",
    "LimitsReply",
    "SummarizationCompactor",
    "Summarizer",
    "SummaryOutcome",
    "cut_to",
    "is_summary",
    "new_summarization_compactor",
    "summary_message",
]

SUMMARY_MARKER: Final = "[Conversation Summary]"  # R-SUM-6: first line of a summary message
SUMMARY_TIMEOUT_SECONDS: Final = 60.0  # R-SUM-9: one summarizer call may take this long

# R-SUM-7: the five headings of the design document's summary template, verbatim.
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

# R-FOLD-5: added to every summarizer prompt of a compaction asked for with a focus.
SUMMARY_FOCUS: Final = "\n\nPay particular attention to: {focus}"
# R-LONG-13: with the engine's recall tool on, the summarizer learns that leaving a detail out loses nothing.
SUMMARY_RECALL: Final = (
    "\n\nThe original messages stay in the session and the assistant can read any of them back "
    "with its recall tool, so keep what is needed to continue the work and name the files, "
    "commands and decisions it may want to look up again."
)

# R-FOLD-6: a summary that does not shrink the context is a failed summary.
SUMMARY_NOT_SHORTER: Final = "the summary is not shorter than the messages it replaces"
REQUEST_SHARE: Final = 2  # R-LONG-1: a summarizer request takes at most half the window
SUMMARY_SHARE: Final = 8  # R-LONG-1: a summary takes at most an eighth of it

_PLACEHOLDER: Final = re.compile(r"\{(conversation|previous_summary)\}")


class Summarizer(Protocol):
    """Anything that can answer a chat request; every LLM provider satisfies it (R-SUM-1)."""

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message | None, Usage | None]: ...


@runtime_checkable
class LimitsReply(Protocol):
    """A summarizer that can be told how long its reply may be (R-FOLD-7): the HTTP providers."""

    reply_limit: int


class SummaryFailed(Harness9Error):
    """The summarizer gave no usable summary; the compactor falls back (R-SUM-10).

    Raised where a summary turns out unusable (no summarizer, no reply, a blank one, a timeout,
    a failed call, a summary not shorter than its head) and caught once, by ``summarize``, which
    records its message in ``failures`` and falls back; it never leaves the compactor.
    """


def cut_to(text: str, limit: int) -> str:
    """``text`` cut at its end to at most ``limit`` UTF-8 bytes of whole characters (R-FOLD-6), as a
    server's ``max_tokens`` cuts a reply: a summary's first lines are its goal and progress."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def _fill(template: str, **values: str) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def is_summary(msg: Message) -> bool:
    """A summary message is one whose content starts with SUMMARY_MARKER, whatever its role (R-SUM-6)."""
    return msg.content.startswith(SUMMARY_MARKER)


def summary_message(summary: str) -> Message:
    """The message that stands for a summary in a view: the marker line, then the text (R-SUM-12)."""
    return Message(ROLE_USER, f"{SUMMARY_MARKER}\n{summary}")


def _summary_text(msg: Message) -> str:
    """The text after the marker line of a summary message."""
    _, newline, rest = msg.content.partition("\n")
    return rest if newline else ""


def _render(msg: Message) -> list[str]:
    """The lines of one non-summary message (R-SUM-5)."""
    if msg.tool_call_id:
        return [f"[tool_result {msg.tool_call_id}]: {msg.content}"]
    lines = [f"[{msg.role}]: {msg.content}"] if msg.content else []
    lines.extend(f"[tool_call {c.name}({c.id})]: {c.arguments}" for c in msg.tool_calls)
    return lines


def _split_summaries(head: Sequence[Message]) -> tuple[list[Message], str | None]:
    """The head's messages that are not summaries, and the last summary's text or None (R-SUM-6)."""
    items: list[Message] = []
    previous: str | None = None
    for msg in head:
        if is_summary(msg):
            previous = _summary_text(msg)
        else:
            items.append(msg)
    return items, previous


def render_transcript(head: Sequence[Message]) -> tuple[str, str | None]:
    """Render old messages as text for the summarizer (R-SUM-5, R-SUM-6).

    Returns:
        The transcript, one line per rendered item joined by "\n", and the previous summary
        (the text of the last summary message in ``head``) or None when there is none.
    """
    items, previous = _split_summaries(head)
    return "\n".join(line for msg in items for line in _render(msg)), previous


def prompt_suffix(focus: str, recall: bool) -> str:
    """What follows every user prompt of a compaction: the focus (R-FOLD-5), then the recall note (R-LONG-13)."""
    suffix = SUMMARY_FOCUS.replace("{focus}", focus, 1) if focus else ""
    return suffix + SUMMARY_RECALL if recall else suffix


def _request(transcript: str, previous: str | None, suffix: str) -> list[Message]:
    """The two messages of one summarizer request (R-SUM-7, R-SUM-8), the prompt ending in ``suffix``."""
    if previous is None:
        prompt = _fill(SUMMARY_FIRST_PROMPT, conversation=transcript)
    else:
        prompt = _fill(SUMMARY_INCREMENTAL_PROMPT, conversation=transcript, previous_summary=previous)
    return [Message(ROLE_SYSTEM, SUMMARY_SYSTEM_PROMPT), Message(ROLE_USER, prompt + suffix)]


def _request_bytes(previous: str | None, suffix: str) -> int:
    """The byte count (R-TOK-2) of a request whose conversation is empty."""
    return sum(utf8_len(m.content) for m in _request("", previous, suffix))


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
class SummaryOutcome:
    """What ``SummarizationCompactor.summarize`` did: the view, and the summary when one was made.

    ``summary`` is None when the summary failed and ``messages`` is the fallback's view; the
    reason is the compactor's newest entry in ``failures``.
    """

    messages: list[Message]
    summary: str | None


@dataclass(slots=True)
class SummarizationCompactor:
    """Summarise everything but the system prompt and the newest ``min_tail_messages`` messages.

    Not frozen, because it is not immutable: each fallback appends its reason to ``failures``
    (R-SUM-10). The other fields are its configuration; change them with ``dataclasses.replace``.

    Args:
        provider: the Summarizer; None counts as a failure and always falls back.
        max_tokens: compact only when the estimate exceeds this (<= 0: DEFAULT_MAX_TOKENS).
        min_tail_messages: newest messages kept verbatim (<= 0: DEFAULT_MIN_TAIL_MESSAGES).
        fallback: used on any failure; None means TokenBudgetCompactor(max_tokens, min_tail_messages).
        timeout: seconds one summarizer call may take.
        request_limit: the most tokens one summarizer request may estimate; a longer head is
            summarised in pieces (R-FOLD). 0 sends one request whatever its size (R-SUM-7).
        summary_limit: the most tokens a summary may estimate; a longer one is cut to it, and one
            not shorter than the messages it replaces is a failed summary (R-FOLD-6). It is also
            the reply limit asked of a summarizer that takes one (R-FOLD-7). 0: no limit (R-SUM).
    """

    provider: Summarizer | None
    max_tokens: int
    min_tail_messages: int = DEFAULT_MIN_TAIL_MESSAGES
    fallback: Compactor | None = None
    timeout: float = SUMMARY_TIMEOUT_SECONDS
    request_limit: int = 0
    summary_limit: int = 0
    _failures: list[str] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def failures(self) -> list[str]:
        """Why each fallback happened, oldest first: a failed summary is never silent (R-SUM-10)."""
        return list(self._failures)

    @property
    def tail_messages(self) -> int:
        """The number of newest messages a compaction keeps verbatim (R-SUM-1)."""
        return effective_min_tail(self.min_tail_messages)

    def over_budget(self, msgs: Sequence[Message]) -> bool:
        """The document's trigger (R-SUM-2): the estimate exceeds ``max_tokens``."""
        return estimate_tokens(msgs) > effective_max_tokens(self.max_tokens)

    def effective_fallback(self) -> Compactor:
        if self.fallback is not None:
            return self.fallback
        return TokenBudgetCompactor(self.max_tokens, self.min_tail_messages)

    def fall_back(self, msgs: Sequence[Message]) -> list[Message]:
        """The fallback's view of ``msgs``, as a failed summary gives it (R-SUM-10), without asking the summarizer."""
        return self.effective_fallback().compact(msgs)

    def compact(self, msgs: Sequence[Message]) -> list[Message]:
        """Apply R-SUM-1 … R-SUM-10: summarise the head, keep the tail, repair pairs; fall back on failure."""
        if not self.over_budget(msgs) or not is_compactable(msgs):
            return list(msgs)
        split = len(msgs) - self.tail_messages
        if split <= 1:
            return list(msgs)
        return self.summarize(msgs, split).messages

    def summarize(self, msgs: Sequence[Message], split: int, focus: str = "", *, recall: bool = False) -> SummaryOutcome:
        """Summarise ``msgs[1:split]`` and keep ``msgs[split:]``, whatever the budget (R-SUM-10, R-SUM-12, R-LONG-5).

        ``focus`` is added to every summarizer prompt (R-FOLD-5), then, with ``recall``, the note
        that the messages can be read back (R-LONG-13). On failure the fallback's view of ``msgs``
        is returned with ``summary`` None.
        """
        try:
            summary = self._summarize(msgs[1:split], prompt_suffix(focus, recall))
            self._check_shrinks(msgs[1:split], summary)
        except SummaryFailed as exc:
            self._failures.append(str(exc))
            return SummaryOutcome(self.fall_back(msgs), None)
        return SummaryOutcome(repair_orphaned_tool_pairs([msgs[0], summary_message(summary), *msgs[split:]]), summary)

    def fit_window(self, window: int) -> None:
        """Make the limits that were set follow a window learned after the compactor was built (R-WIN-6).

        The trigger becomes 80% of ``window`` (R-CMP-4), and each limit that is on becomes
        its share of the window: ``request_limit`` a half (R-LONG-1), ``summary_limit`` an
        eighth (R-FOLD-6).
        """
        self.max_tokens = budget_for_context_window(window)
        if self.request_limit > 0:
            self.request_limit = window // REQUEST_SHARE
        if self.summary_limit > 0:
            self.summary_limit = window // SUMMARY_SHARE

    def _check_shrinks(self, head: Sequence[Message], summary: str) -> None:
        """R-FOLD-6: with a summary limit, a summary must shrink what it replaces."""
        if self.summary_limit > 0 and estimate_tokens([summary_message(summary)]) >= estimate_tokens(head):
            raise SummaryFailed(SUMMARY_NOT_SHORTER)

    def _summarize(self, head: Sequence[Message], suffix: str) -> str:
        """The summary of ``head``: one request, or pieces folded in order (R-FOLD-2, R-FOLD-3).

        A piece grows while its request fits ``request_limit``. The request's size is counted
        incrementally: the prompt with an empty conversation, plus the rendered lines and the
        newlines between them (each template holds ``{conversation}`` once).
        """
        if self.request_limit <= 0:
            transcript, previous = render_transcript(head)
            return self._ask(_request(transcript, previous, suffix))
        items, summary = _split_summaries(head)
        piece: list[Message] = []
        line_bytes = lines = 0
        empty = _request_bytes(summary, suffix)
        for msg in items:
            rendered = _render(msg)
            if not rendered:  # R-FOLD-3: a message that renders nothing belongs to no piece
                continue
            more_bytes = line_bytes + sum(utf8_len(line) for line in rendered)
            more_lines = lines + len(rendered)
            if piece and bytes_to_tokens(empty + more_bytes + max(0, more_lines - 1)) > self.request_limit:
                summary = self._ask(self._fitted(piece, summary, suffix))
                empty = _request_bytes(summary, suffix)
                piece, line_bytes, lines = [], 0, 0
                more_bytes, more_lines = sum(utf8_len(line) for line in rendered), len(rendered)
            piece.append(msg)
            line_bytes, lines = more_bytes, more_lines
        return self._ask(self._fitted(piece, summary, suffix))

    def _fitted(self, piece: list[Message], previous: str | None, suffix: str) -> list[Message]:
        """The request for ``piece``; a lone message over the limit is shortened to fit (R-FOLD-4)."""
        request = _request("\n".join(line for msg in piece for line in _render(msg)), previous, suffix)
        over = sum(utf8_len(m.content) for m in request) - (CHARS_PER_TOKEN * self.request_limit + CHARS_PER_TOKEN - 1)
        if over <= 0 or len(piece) != 1:
            return request
        msg = piece[0]
        size = utf8_len(msg.content)
        content = shorten_text(msg.content, max(0, size - over - marker_bytes(size)))
        if utf8_len(content) >= size:  # shortening would not make it shorter (R-TRIM-3's rule)
            return request
        short = Message(msg.role, content, msg.tool_calls, msg.tool_call_id)
        return _request("\n".join(_render(short)), previous, suffix)

    def _ask(self, request: list[Message]) -> str:
        """One summarizer call; the reply exactly as written (R-SUM-12); blank is a failure (R-SUM-10)."""
        if self.provider is None:
            raise SummaryFailed("no summarizer is configured")
        if self.summary_limit > 0 and isinstance(self.provider, LimitsReply):
            self.provider.reply_limit = self.summary_limit  # R-FOLD-7
        reply = _call_with_timeout(self.provider, request, self.timeout)
        if reply is None:
            raise SummaryFailed("the summarizer returned no message")
        if not reply.content.strip():
            raise SummaryFailed("the summarizer returned an empty summary")
        if self.summary_limit > 0 and bytes_to_tokens(utf8_len(reply.content)) > self.summary_limit:
            return cut_to(reply.content, CHARS_PER_TOKEN * self.summary_limit)  # R-FOLD-6
        return reply.content


def new_summarization_compactor(
    provider: Summarizer | None, context_window: int, *, request_limit: int = 0, summary_limit: int = 0
) -> SummarizationCompactor:
    """The seed's NewSummarizationCompactor: 80% of the window, a tail of 6, the default fallback.

    ``request_limit`` bounds each summarizer request (R-FOLD-1) and ``summary_limit`` each
    summary (R-FOLD-6); the agent uses half and an eighth of the window (R-LONG-1).
    """
    return SummarizationCompactor(
        provider,
        budget_for_context_window(context_window),
        DEFAULT_MIN_TAIL_MESSAGES,
        request_limit=request_limit,
        summary_limit=summary_limit,
    )
