"""An incremental Server-Sent Events decoder (SPEC R-PRV-15, R-PRV-16, R-PRV-30).

Sans-I/O in the manner of h11: ``feed`` takes bytes in whatever pieces the socket delivered and
returns the events those bytes completed; ``close`` flushes what is left at the end of the body.
The result is the same for every way of splitting the body (R-PRV-16).

Theory of operation:

1. Bytes are decoded with an incremental UTF-8 decoder, so a character split across chunks is
   joined, and invalid bytes become U+FFFD. A byte-order mark at the very start is dropped.
2. Text is cut into lines at CRLF, LF or CR (with ``str.split`` when the text holds no CR, which
   is the common case and several times faster than a regular expression). A CR that ends the
   text seen so far is a line end already; ``_after_cr`` remembers it so that an LF at the start
   of the next text is not a second (empty) line end. Only the new text is cut: the unfinished
   line is kept as a list of its pieces, joined once when its line end arrives, so a line that
   comes in many chunks costs time linear in its length, not quadratic (R-PRV-30).
3. Each line is interpreted as the WHATWG HTML "event stream interpretation" says: an empty
   line dispatches, ``:`` starts a comment, ``data`` lines accumulate, the last ``event`` wins,
   other fields (``id``, ``retry``) are ignored.
4. A line longer than ``line_max`` characters, or an event whose data buffer grows beyond
   ``event_max``, raises ``SSELimitExceeded`` as soon as it does: a server that never ends a
   line cannot make the decoder hold more than that (R-PRV-30). The error carries the events
   the same text completed before it, so what comes before the bound is the same whatever the
   chunking (R-PRV-16).
"""

from __future__ import annotations

import codecs
import re
from typing import ClassVar, Final, NamedTuple

from .._harness9_error import Harness9Error
from ._bounds import EVENT_MAX_CHARS, LINE_MAX_CHARS

__all__ = ["SSEDecoder", "SSEEvent", "SSELimitExceeded"]

_LINE_END: Final = re.compile("\r\n|\r|\n")
_BOM: Final = "\ufeff"
FIELD_DATA: Final = "data"  # R-PRV-15
FIELD_EVENT: Final = "event"  # R-PRV-15
COMMENT_START: Final = ":"  # R-PRV-15
_DATA_PREFIX: Final = FIELD_DATA + ": "  # a data line with its one optional space


class SSEEvent(NamedTuple):
    """One dispatched event: its ``event`` field (``""`` when the stream gave none) and its data.

    A named tuple rather than a frozen dataclass: a stream makes one per token, and a tuple is
    made three times faster.
    """

    event: str
    data: str


class SSELimitExceeded(Harness9Error, ValueError):
    """A line or an event's data beyond the decoder's bounds (R-PRV-30); the message says which,
    and ``events`` are those the fed text completed before it. Of the code of the stream error
    a provider raises for it (R-ERR-1), for a caller of the decoder alone."""

    code: ClassVar[str] = "malformed_stream"

    def __init__(self, message: str, events: list[SSEEvent]) -> None:
        super().__init__(message)
        self.events = events


class SSEDecoder:
    """Decode an SSE body incrementally (R-PRV-15).

    Feed every chunk of the body to ``feed`` in order, then call ``close`` once at the end of
    the body; the concatenation of all returned lists is the body's events. ``line_max`` and
    ``event_max`` bound a line and an event's data in characters (R-PRV-30).
    """

    def __init__(self, *, line_max: int = LINE_MAX_CHARS, event_max: int = EVENT_MAX_CHARS) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line_max = line_max
        self._event_max = event_max
        self._pending: list[str] = []  # the pieces of the unfinished line (no line end in them)
        self._pending_len = 0
        self._after_cr = False  # the text so far ended with a CR: a leading LF is part of it
        self._started = False  # the byte-order mark check has been made
        self._data: list[str] = []
        self._data_len = 0  # the data buffer's characters: each value and its "\n"
        self._event = ""
        self._closed = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return the events it completed (possibly none).

        Raises:
            SSELimitExceeded: a line or an event's data went beyond its bound (R-PRV-30).
        """
        if self._closed:
            raise ValueError("SSEDecoder.feed() called after close()")
        return self._text(self._utf8.decode(chunk))

    def close(self) -> list[SSEEvent]:
        """End of body: flush an incomplete character, the last line and a pending event.

        A pending event is dispatched as if an empty line followed, even when the last line has
        no line end (R-PRV-15). Further calls return an empty list.
        """
        if self._closed:
            return []
        events = self._text(self._utf8.decode(b"", final=True))
        self._closed = True
        if self._pending:
            self._interpret("".join(self._pending), events)
            self._pending = []
        self._interpret("", events)
        return events

    def _text(self, text: str) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if not text:
            return events
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        self._after_cr = text.endswith("\r")
        lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
        tail = lines.pop()  # the unfinished last line ("" after a line end)
        if lines and self._pending:
            self._pending.append(lines[0])
            lines[0] = "".join(self._pending)
            self._pending = []
            self._pending_len = 0
        # Only the first line (joined with the pieces before it) can be longer than the text;
        # the others need a look only when the text itself is longer than a line may be.
        check = bool(lines) and (len(lines[0]) > self._line_max or len(text) > self._line_max)
        for line in lines:  # the two common lines first: "data: <value>" and the empty line
            if check and len(line) > self._line_max:
                raise SSELimitExceeded(self._long_line(), events)
            if line.startswith(_DATA_PREFIX):
                self._add_data(line[len(_DATA_PREFIX) :], events)
            elif not line:
                self._dispatch(events)
            else:
                self._interpret(line, events)
        if tail:
            self._pending.append(tail)
            self._pending_len += len(tail)
            if self._pending_len > self._line_max:
                raise SSELimitExceeded(self._long_line(), events)
        return events

    def _long_line(self) -> str:
        return f"a line longer than {self._line_max} characters"

    def _add_data(self, value: str, events: list[SSEEvent]) -> None:
        """A ``data`` value joins the buffer, which may not grow beyond ``event_max`` (R-PRV-30)."""
        self._data_len += len(value) + 1
        if self._data_len > self._event_max:
            raise SSELimitExceeded(f"an event's data longer than {self._event_max} characters", events)
        self._data.append(value)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        """An empty line: the event so far, if it has data, is complete (R-PRV-15)."""
        if self._data:
            events.append(SSEEvent(self._event, "\n".join(self._data)))
            self._data = []
        self._event = ""
        self._data_len = 0

    def _interpret(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line.startswith(COMMENT_START):
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == FIELD_DATA:
            self._add_data(value, events)
        elif name == FIELD_EVENT:
            self._event = value
