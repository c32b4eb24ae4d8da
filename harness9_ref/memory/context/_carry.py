"""What a summary message carries besides the summary: the user's own words and the plan (SPEC R-LONG-13, R-LONG-14).

A summary is the model's paraphrase, and a paraphrase loses the detail a user insisted on ("keep
the public API", "not in that file"). So, in long-session mode, the summary message also quotes
the user's most recent requests verbatim, newest kept within a bound, carried from summary to
summary; and it ends with the session's plan (R-SES-7), so a compaction never makes the agent
forget what it set out to do. Both live inside the summary message, so a checkpoint (R-CKP-1)
stores them with the summary and a run that starts from it gets them back.

The *body* of a summary message is everything after its marker line: the summarizer's text,
then the parts below, each after a blank line and a pinned header. ``summarizer_part`` takes
the summarizer's text back out, so the next summary is asked to fold only its own words.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ...planning import PLAN_HEADER
from ...schema import ROLE_USER, Message, canonical_json
from ._shorten import shorten_text
from ._summarize import is_summary
from ._tokens import CHARS_PER_TOKEN, utf8_len

__all__ = [
    "RECALL_NOTE",
    "REQUESTS_HEADER",
    "REQUESTS_MAX_TOKENS",
    "carried_requests",
    "recent_requests",
    "requests_budget",
    "summarizer_part",
    "summary_body",
]

# R-LONG-13: the header of the quoted requests; each request follows on its own line as "- " and
# its canonical JSON string (R-TOK-4), so that a request of several lines stays one line and
# reads back exactly.
REQUESTS_HEADER: Final = "The user's most recent requests, verbatim, oldest first:"
REQUESTS_MAX_TOKENS: Final = 2000  # R-LONG-13: at most this many tokens of quoted requests
# R-LONG-13: the line that tells the model where the summarised messages went.
RECALL_NOTE: Final = "Messages 0 to {last} of this session are summarised here; the recall tool reads any of them back."
_ITEM: Final = "- "


def requests_budget(budget: int) -> int:
    """The bytes of quoted requests a summary message may hold (R-LONG-13).

    The smaller of REQUESTS_MAX_TOKENS and a tenth of the trigger, in bytes.
    """
    tokens = REQUESTS_MAX_TOKENS if budget <= 0 else min(REQUESTS_MAX_TOKENS, budget // 10)
    return tokens * CHARS_PER_TOKEN


def summarizer_part(body: str) -> str:
    """The summarizer's own text of a summary message's body: everything before the first carried part (R-LONG-13)."""
    cut = len(body)
    for header in (RECALL_NOTE.split("{", 1)[0], REQUESTS_HEADER, PLAN_HEADER):
        at = body.find("\n\n" + header)
        if at != -1:
            cut = min(cut, at)
    return body[:cut]


def carried_requests(body: str) -> list[str]:
    """The requests a summary message's body quotes, oldest first (R-LONG-13); none when it quotes none."""
    at = body.find("\n\n" + REQUESTS_HEADER + "\n")
    if at == -1:
        return []
    found: list[str] = []
    for line in body[at + len(REQUESTS_HEADER) + 3 :].split("\n"):
        if not line.startswith(_ITEM):
            break
        try:
            text = json.loads(line[len(_ITEM) :])
        except ValueError:
            break
        if not isinstance(text, str):
            break
        found.append(text)
    return found


def _is_request(msg: Message) -> bool:
    """A message the user typed: a user message that is neither a result nor a summary, with text."""
    return msg.role == ROLE_USER and not msg.tool_call_id and bool(msg.content) and not is_summary(msg)


def recent_requests(previous: Sequence[str], head: Sequence[Message], budget_bytes: int) -> list[str]:
    """The newest requests of ``previous`` then ``head`` whose bytes fit ``budget_bytes``, oldest first (R-LONG-13).

    Taken newest first while the next one fits; when even the newest does not fit alone, it is
    kept shortened (R-TRIM-2) to ``budget_bytes``.
    """
    every = [*previous, *(msg.content for msg in head if _is_request(msg))]
    kept: list[str] = []
    used = 0
    for text in reversed(every):
        size = utf8_len(text)
        if used + size > budget_bytes:
            if not kept and budget_bytes > 0:
                kept.append(shorten_text(text, budget_bytes))
            break
        kept.append(text)
        used += size
    return kept[::-1]


def summary_body(summary: str, requests: Sequence[str], last_covered: int | None, plan: str) -> str:
    """The body of a summary message: the summary, the recall note, the quoted requests, the plan (R-LONG-13, R-LONG-14).

    ``last_covered`` is the position of the last summarised message, or None to leave the recall
    note out (the engine offers no recall tool); ``plan`` is the rendered plan, "" for none.
    """
    parts = [summary]
    if last_covered is not None:
        parts.append(RECALL_NOTE.replace("{last}", str(last_covered), 1))
    if requests:
        lines = [_ITEM + canonical_json(text) for text in requests]
        parts.append("\n".join([REQUESTS_HEADER, *lines]))
    if plan:
        parts.append(plan)
    return "\n\n".join(parts)
