"""Raw keys to keys and pastes, without curses (SPEC R-TUI-29).

curses decodes the escape sequences its terminal description knows (arrows, PageUp, …) and hands
the others over one character at a time. This decoder takes that stream and finds in it a
bracketed paste (``ESC [200~`` … ``ESC [201~``, which the screen asks the terminal for), Alt+Enter
(``ESC`` then Enter), and sequences nobody asked for, which it drops. It is a state machine fed
one key at a time, so the screen can feed it whatever arrives, and tests can feed it anything.
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = ["ALT_ENTER", "ANSWER_GRACE", "ESCAPE", "PASTE_MAX_CHARS", "Decoded", "KeyDecoder", "Paste"]

ESCAPE: Final = "\x1b"
ALT_ENTER: Final = "alt+enter"  # the key a newline in the prompt is typed with (R-TUI-29)
PASTE_START: Final = "\x1b[200~"
PASTE_END: Final = "\x1b[201~"
ANSWER_GRACE: Final = 0.5  # R-TUI-34: seconds of quiet before a key can answer a new question
PASTE_MAX_CHARS: Final = 1 << 20  # R-TUI-29: a paste keeps its first MiB of characters; the rest is dropped
_ENTERS: Final = ("\r", "\n")


class Paste(NamedTuple):
    """A bracketed paste: its text as the terminal sent it."""

    text: str


Decoded = str | int | Paste  # a key as curses gives it (a character or a KEY_* code), or a paste


class KeyDecoder:
    """Feed raw keys, get keys and pastes back.

    States: plain keys; after ``ESC`` (collecting a sequence); inside a paste (collecting until
    its end marker). ``flush`` ends a sequence cut short (a lone Esc is the key Esc); an open
    paste stays open, since its end is still coming.
    """

    def __init__(self) -> None:
        self._sequence = ""  # the escape sequence being read, "" when none
        self._paste: list[str] | None = None  # the paste being read
        self._held = ""  # its last characters, which may be the start of its end marker

    @property
    def in_paste(self) -> bool:
        return self._paste is not None

    def feed(self, key: str | int) -> list[Decoded]:
        if self._paste is not None:
            return self._in_paste(key)
        if self._sequence:
            return self._in_sequence(key)
        if key == ESCAPE:
            self._sequence = ESCAPE
            return []
        return [key]

    def flush(self) -> list[Decoded]:
        """No key came for a while: a pending ``ESC`` is the Esc key; a partial sequence is dropped."""
        sequence, self._sequence = self._sequence, ""
        return [ESCAPE] if sequence == ESCAPE else []

    def _in_sequence(self, key: str | int) -> list[Decoded]:
        if not isinstance(key, str):  # a decoded key interrupts a sequence: Esc, then the key
            return [*self.flush(), key]
        sequence = self._sequence + key
        if sequence == PASTE_START:
            self._sequence, self._paste, self._held = "", [], ""
            return []
        if PASTE_START.startswith(sequence):
            self._sequence = sequence
            return []
        if len(sequence) == 2:
            if key in _ENTERS:
                self._sequence = ""
                return [ALT_ENTER]
            if key not in ("[", "O"):  # Esc, then an ordinary key
                self._sequence = ""
                return [ESCAPE, *self.feed(key)]
        # CSI or SS3: ends at its final byte; nothing asked for it, so it is dropped whole.
        if (len(sequence) > 2 and "\x40" <= key <= "\x7e") or len(sequence) > 32:
            self._sequence = ""
        else:
            self._sequence = sequence
        return []

    def _in_paste(self, key: str | int) -> list[Decoded]:
        if not isinstance(key, str):
            return []  # a key code inside a paste: the terminal decoded part of the text; dropped
        held = self._held + key  # the characters that may still be the start of the end marker
        if held.endswith(PASTE_END):
            self._keep(held[: -len(PASTE_END)])
            text, self._paste, self._held = "".join(self._paste or []), None, ""
            return [Paste(text)]
        keep = max(0, len(held) - (len(PASTE_END) - 1))
        self._keep(held[:keep])
        self._held = held[keep:]
        return []

    def _keep(self, text: str) -> None:
        if self._paste is not None:
            self._paste.extend(text[: PASTE_MAX_CHARS - len(self._paste)])
