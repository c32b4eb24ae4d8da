"""The input box: editing, history and completion, without curses (SPEC R-TUI-6, R-TUI-11, R-TUI-29,
R-TUI-30, R-TUI-31, R-TUI-33).

The text may hold several lines (a paste, Alt+Enter): a prompt is sent as typed, newlines
included. Every edit costs time in proportion to the line it changes, and drawing costs time
in proportion to what is drawn, so a 100 KB paste stays instant (R-TUI-31): the text is kept
as lines of characters edited in place, and ``view`` only walks the cells it shows.
"""

from __future__ import annotations

import unicodedata
from typing import Final, NamedTuple

from ..text import char_cells
from ._commands import command_candidates, complete_command

__all__ = ["InputView", "LineEditor", "paste_text"]

_KEPT_CONTROLS: Final = ("\n", "\t")


def paste_text(text: str) -> str:
    """What a paste inserts (R-TUI-29): line ends (CR LF, CR) become LF; LF and tab are kept;
    every other control or format character is dropped, so nothing pasted can reach the
    terminal as an escape."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(
        ch for ch in text if ch in _KEPT_CONTROLS or unicodedata.category(ch) not in ("Cc", "Cf")
    )


class InputView(NamedTuple):
    """The input box as drawn: its rows (each within the width) and the cursor's row and cell."""

    rows: list[str]
    row: int
    column: int


class LineEditor:
    """An editor of one prompt with a cursor, a history of submitted prompts and Tab completion.

    The prompt is kept as its lines, each a list of characters, and the cursor as a line and a
    column, so that finding where a line starts costs nothing however long the line is.
    Up and Down move between the prompt's lines, and past its first or last line walk the
    history (R-TUI-11); the prompt being typed is kept as a draft and comes back after the
    newest entry. A prompt equal to the previous entry is stored once.
    """

    def __init__(self) -> None:
        self._lines: list[list[str]] = [[]]
        self._row = 0
        self._col = 0
        self._history: list[str] = []
        self._index = 0  # == len(history) when not browsing
        self._draft = ""

    @property
    def text(self) -> str:
        return "\n".join("".join(line) for line in self._lines)

    @property
    def cursor(self) -> int:
        """The cursor as an index into ``text``."""
        return sum(len(line) + 1 for line in self._lines[: self._row]) + self._col

    @property
    def history(self) -> list[str]:
        return list(self._history)

    def set_text(self, text: str) -> None:
        self._lines = [list(line) for line in text.split("\n")]
        self._row = len(self._lines) - 1
        self._col = len(self._lines[-1])

    def insert(self, text: str) -> None:
        """Typed keys: printable characters only (a control key is never text)."""
        self._put("".join(ch for ch in text if ch.isprintable() or ch == " "))

    def paste(self, text: str) -> None:
        """A paste: the whole text at the cursor in one edit, newlines kept (R-TUI-29)."""
        self._put(paste_text(text))

    def newline(self) -> None:
        """Alt+Enter (or ``\\`` then Enter): a new line in the prompt instead of sending it."""
        self._put("\n")

    def _put(self, text: str) -> None:
        line = self._lines[self._row]
        before, after = line[: self._col], line[self._col :]
        parts = text.split("\n")
        if len(parts) == 1:
            line[self._col : self._col] = parts[0]
            self._col += len(parts[0])
            return
        new = [before + list(parts[0]), *(list(part) for part in parts[1:-1]), list(parts[-1]) + after]
        self._lines[self._row : self._row + 1] = new
        self._row += len(parts) - 1
        self._col = len(parts[-1])

    def backspace(self) -> None:
        if self._col > 0:
            self._col -= 1
            del self._lines[self._row][self._col]
        elif self._row > 0:  # at a line's start: join it to the line above
            above = self._lines[self._row - 1]
            self._col = len(above)
            above.extend(self._lines.pop(self._row))
            self._row -= 1

    def delete(self) -> None:
        line = self._lines[self._row]
        if self._col < len(line):
            del line[self._col]
        elif self._row + 1 < len(self._lines):
            line.extend(self._lines.pop(self._row + 1))

    def left(self) -> None:
        if self._col > 0:
            self._col -= 1
        elif self._row > 0:
            self._row -= 1
            self._col = len(self._lines[self._row])

    def right(self) -> None:
        if self._col < len(self._lines[self._row]):
            self._col += 1
        elif self._row + 1 < len(self._lines):
            self._row += 1
            self._col = 0

    def home(self) -> None:
        self._col = 0

    def end(self) -> None:
        self._col = len(self._lines[self._row])

    def kill_before(self) -> None:
        """Ctrl+U: delete from the start of the cursor's line to the cursor."""
        del self._lines[self._row][: self._col]
        self._col = 0

    def kill_after(self) -> None:
        """Ctrl+K: delete from the cursor to the end of its line."""
        del self._lines[self._row][self._col :]

    def delete_word(self) -> None:
        """Ctrl+W: delete the word before the cursor and the white space after it (R-TUI-33);
        at a line's start, join the line to the one above."""
        line = self._lines[self._row]
        start = self._col
        while start > 0 and line[start - 1] in (" ", "\t"):
            start -= 1
        while start > 0 and not line[start - 1].isspace():
            start -= 1
        if start == self._col:
            self.backspace()
            return
        del line[start : self._col]
        self._col = start

    def complete(self) -> list[str]:
        """Tab: complete a command (R-TUI-6); the cursor goes to the end when the text changed.
        Returns the candidates still open when there are several (R-TUI-33), else []."""
        text = self.text
        completed = complete_command(text)
        if completed != text:
            self.set_text(completed)
        candidates = command_candidates(completed)
        return candidates if len(candidates) > 1 else []

    def up(self) -> None:
        if self._row > 0:  # a line above in the prompt: the same column, or its end
            self._row -= 1
            self._col = min(self._col, len(self._lines[self._row]))
            return
        if self._index == 0:
            return
        if self._index == len(self._history):
            self._draft = self.text
        self._index -= 1
        self.set_text(self._history[self._index])

    def down(self) -> None:
        if self._row + 1 < len(self._lines):
            self._row += 1
            self._col = min(self._col, len(self._lines[self._row]))
            return
        if self._index >= len(self._history):
            return
        self._index += 1
        self.set_text(self._history[self._index] if self._index < len(self._history) else self._draft)

    def clear(self) -> None:
        """Ctrl+C on a non-empty input (R-TUI-33): the text goes, the history stays."""
        self.set_text("")
        self._index = len(self._history)

    def submit(self, remember: bool = True) -> str:
        """Take the text, clear the editor and (when ``remember``) add it to the history."""
        line = self.text
        if remember and line.strip() and (not self._history or self._history[-1] != line):
            self._history.append(line)
        self._index = len(self._history)
        self._draft = ""
        self.set_text("")
        return line

    def view(self, width: int, height: int = 1) -> InputView:
        """The input box in ``width`` cells and at most ``height`` rows: one row per line of the
        prompt, the rows around the cursor's line when there are more; the cursor's row
        scrolled sideways so that the cursor is visible, the other rows showing their start.

        Tabs are drawn as one space. The cost is the cells drawn, whatever the prompt's size
        (R-TUI-31).
        """
        if width <= 1 or height < 1:
            return InputView([""], 0, 0)
        line = self._lines[self._row]
        # The cursor's row: walk back from the cursor until the row is full (one cell is kept
        # for the cursor itself), then forward from there.
        start, cells = self._col, 0
        while start > 0 and cells + _cells(line[start - 1]) <= width - 1:
            start -= 1
            cells += _cells(line[start])
        first = last = self._row
        while last - first + 1 < min(height, len(self._lines)):
            if last + 1 < len(self._lines) and (first == 0 or last - self._row <= self._row - first):
                last += 1
            else:
                first -= 1
        rows = [_row(self._lines[i], start if i == self._row else 0, width) for i in range(first, last + 1)]
        return InputView(rows, self._row - first, cells)


def _cells(ch: str) -> int:
    return 1 if ch == "\t" else char_cells(ch)


def _row(line: list[str], start: int, width: int) -> str:
    """The characters of ``line`` from ``start`` that fit in ``width`` cells, tabs as spaces."""
    shown: list[str] = []
    cells = 0
    for i in range(start, len(line)):
        ch = line[i]
        w = _cells(ch)
        if cells + w > width:
            break
        shown.append(" " if ch == "\t" else ch)
        cells += w
    return "".join(shown)
