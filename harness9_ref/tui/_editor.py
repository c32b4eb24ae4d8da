"""The input line: editing, history and completion, without curses (SPEC R-TUI-6, R-TUI-11)."""

from __future__ import annotations

from ..text import cell_width, char_cells
from ._commands import complete_command

__all__ = ["LineEditor"]


class LineEditor:
    """A one-line editor with a cursor, a history of submitted lines and Tab completion.

    Up and Down walk the history (R-TUI-11); the line being typed is kept as a draft and
    comes back after the newest entry. A line equal to the previous entry is stored once.
    """

    def __init__(self) -> None:
        self._chars: list[str] = []
        self._cursor = 0
        self._history: list[str] = []
        self._index = 0  # == len(history) when not browsing
        self._draft = ""

    @property
    def text(self) -> str:
        return "".join(self._chars)

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def history(self) -> list[str]:
        return list(self._history)

    def set_text(self, text: str) -> None:
        self._chars = list(text)
        self._cursor = len(self._chars)

    def insert(self, text: str) -> None:
        for ch in text:
            if ch.isprintable() or ch == " ":
                self._chars.insert(self._cursor, ch)
                self._cursor += 1

    def backspace(self) -> None:
        if self._cursor > 0:
            self._cursor -= 1
            del self._chars[self._cursor]

    def delete(self) -> None:
        if self._cursor < len(self._chars):
            del self._chars[self._cursor]

    def left(self) -> None:
        self._cursor = max(0, self._cursor - 1)

    def right(self) -> None:
        self._cursor = min(len(self._chars), self._cursor + 1)

    def home(self) -> None:
        self._cursor = 0

    def end(self) -> None:
        self._cursor = len(self._chars)

    def kill_before(self) -> None:
        del self._chars[: self._cursor]
        self._cursor = 0

    def kill_after(self) -> None:
        del self._chars[self._cursor :]

    def complete(self) -> None:
        """Tab: complete a command (R-TUI-6); the cursor goes to the end when the text changed."""
        completed = complete_command(self.text)
        if completed != self.text:
            self.set_text(completed)

    def up(self) -> None:
        if self._index == 0:
            return
        if self._index == len(self._history):
            self._draft = self.text
        self._index -= 1
        self.set_text(self._history[self._index])

    def down(self) -> None:
        if self._index >= len(self._history):
            return
        self._index += 1
        self.set_text(self._history[self._index] if self._index < len(self._history) else self._draft)

    def submit(self, remember: bool = True) -> str:
        """Take the line, clear the editor and (when ``remember``) add the line to the history."""
        line = self.text
        if remember and line.strip() and (not self._history or self._history[-1] != line):
            self._history.append(line)
        self._index = len(self._history)
        self._draft = ""
        self.set_text("")
        return line

    def view(self, width: int) -> tuple[str, int]:
        """The part of the line to draw in ``width`` cells and the cursor's cell in it.

        The line scrolls horizontally so that the cursor is always visible.
        """
        if width <= 1:
            return "", 0
        before = self._chars[: self._cursor]
        start = 0
        # Keep the cursor inside the row: drop characters from the left until it fits.
        while cell_width("".join(before[start:])) > width - 1:
            start += 1
        shown: list[str] = []
        cells = 0
        for ch in self._chars[start:]:
            w = char_cells(ch)
            if cells + w > width:
                break
            shown.append(ch)
            cells += w
        return "".join(shown), cell_width("".join(before[start:]))
