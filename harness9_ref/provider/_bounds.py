"""The bounds of one provider call's I/O, in one place (SPEC R-PRV-30 … R-PRV-33).

A server, a proxy or a looping model can send without end; these figures keep what one call
reads, holds and waits for bounded, each well above what a real reply needs:

- a real reply is at most some hundred kilobytes of text (64,000 tokens, the largest output
  of R-LIM-4's models, are some 256 KB), so ``REPLY_MAX_CHARS`` keeps sixteen times that;
- one SSE line or event carries one token's JSON (some hundred bytes), or at most a whole
  reply from a server that sends it in one event, so ``LINE_MAX_CHARS`` and
  ``EVENT_MAX_CHARS`` are twice the reply's bound;
- a whole (unstreamed) success body is the reply in JSON, whose escapes can make it several
  times its text, so ``BODY_MAX_BYTES`` is four times the reply's bound;
- an error body is read for its message, of which 500 characters are quoted (R-ERR-4), so
  ``ERROR_BODY_MAX_BYTES`` is plenty and the rest is never read;
- the per-read timeout (R-PRV-3) does not end a server that drips one byte within each
  timeout, so a whole call has ``DEADLINE_FACTOR`` times the timeout: with the official
  endpoint's 120 s (R-CLI-22) an hour, in which 64,000 tokens arrive at 18 a second; with a
  local server's 600 s five hours, at 4 a second.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BODY_MAX_BYTES",
    "DEADLINE_FACTOR",
    "ERROR_BODY_MAX_BYTES",
    "EVENT_MAX_CHARS",
    "LINE_MAX_CHARS",
    "REPLY_CUT_NOTE",
    "REPLY_MAX_CHARS",
    "deadline_for",
]

REPLY_MAX_CHARS: Final = 4 * 1024 * 1024  # R-PRV-31: characters of text and arguments one reply holds
LINE_MAX_CHARS: Final = 8 * 1024 * 1024  # R-PRV-30: characters of one SSE line, without its line end
EVENT_MAX_CHARS: Final = 8 * 1024 * 1024  # R-PRV-30: characters of one SSE event's data buffer
BODY_MAX_BYTES: Final = 16 * 1024 * 1024  # R-PRV-32: bytes of a whole success body
ERROR_BODY_MAX_BYTES: Final = 64 * 1024  # R-PRV-32: bytes of an error body read; the rest is not
DEADLINE_FACTOR: Final = 30  # R-PRV-33: a call's deadline is this many per-read timeouts

# R-PRV-31: what ends a reply cut at its bound, in the form of R-ENG-24's marker.
REPLY_CUT_NOTE: Final = "\n\n[reply cut off: longer than {limit} characters]"


def deadline_for(timeout: float) -> float:
    """The deadline of one call for a per-read ``timeout`` when none is given (R-PRV-33)."""
    return DEADLINE_FACTOR * timeout
