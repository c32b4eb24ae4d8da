"""The curses screen: the only module of harness9-ref that imports curses (SPEC R-TUI-13).

Layout, top to bottom: the conversation pane, the status bar, the input line. The UI thread
runs ``_Screen.loop``: apply the worker's events (``App.poll``), redraw when something
changed, read one key with a short timeout. The engine runs on the worker thread of
``App`` (``RunWorker``) and never touches curses.

Keys: Enter sends, Tab completes a command, Up/Down walk the input history, Left/Right/Home/End
(Ctrl+A, Ctrl+E) move, Backspace/Delete, Ctrl+U/Ctrl+K cut, PageUp/PageDown scroll the pane,
Ctrl+L redraws, Ctrl+C cancels the running turn or ends the program when idle, Ctrl+D on an
empty line ends the program. While a command waits for approval (R-APPR-2), y, n and a answer,
Enter and Esc mean no, Ctrl+C means no and cancels the turn, and other keys do nothing (so
PageUp cannot scroll then; the question is the newest line anyway). The
terminal is in raw mode, so Ctrl+C arrives as a key; a
SIGINT from elsewhere (KeyboardInterrupt) is treated the same way.
"""

from __future__ import annotations

import curses
import locale
import os
from collections.abc import Callable, Mapping
from typing import Final

from ..text import COLOUR_HIGH, COLOUR_OK, COLOUR_WARN, LineKind, TableSaid, cut_cells
from ._app import App
from ._screen_error import ScreenError

__all__ = ["run_screen"]

FRAME_MS: Final = 30  # how long one key read waits, so streamed text shows within a frame
ESCDELAY_MS: Final = "25"  # a lone Esc should not freeze input for curses' default second
FALLBACK_LOCALE: Final = "C.UTF-8"  # R-LANG-1: when the environment names a locale the system lacks

_BASIC_COLOURS: Final = {COLOUR_OK: curses.COLOR_GREEN, COLOUR_WARN: curses.COLOR_YELLOW, COLOUR_HIGH: curses.COLOR_RED}


def run_screen(app: App) -> None:
    """Run the UI until the user leaves it (/exit, Ctrl+C when idle, Ctrl+D).

    Raises:
        ScreenError: the terminal cannot be used by curses.
    """
    _set_locale()
    os.environ.setdefault("ESCDELAY", ESCDELAY_MS)
    try:
        curses.wrapper(_Screen(app).loop)
    except curses.error as exc:
        raise ScreenError(TableSaid("err_screen", reason=exc)) from None


def _set_locale() -> None:
    """The user's locale, which lets ncursesw read and write UTF-8; ``C.UTF-8`` when the system
    lacks the one the environment names (``LANG=zh_CN.UTF-8`` with only ``C.UTF-8`` installed),
    so that the language it chose (R-LANG-1) is drawn rather than refused."""
    try:
        locale.setlocale(locale.LC_ALL, "")
    except locale.Error:
        try:
            locale.setlocale(locale.LC_ALL, FALLBACK_LOCALE)
        except locale.Error:
            pass  # curses then draws what the C locale can


class _Screen:
    def __init__(self, app: App) -> None:
        self.app = app
        self.kinds: dict[LineKind, int] = {}
        self.colours: dict[int, int] = {}
        self.keys: Mapping[object, Callable[[], None]] = {}

    def loop(self, stdscr: curses.window) -> None:
        self.stdscr = stdscr
        curses.raw()  # Ctrl+C arrives as a key, not as a signal
        stdscr.keypad(True)
        stdscr.timeout(FRAME_MS)
        self._styles()
        self.keys = self._key_table()
        dirty = True
        while not self.app.exiting:
            try:
                dirty = self.app.poll() or dirty
                if dirty:
                    self.draw()
                    dirty = False
                dirty = self.read_key()
            except KeyboardInterrupt:
                self.app.interrupt()
                dirty = True
        self.app.shutdown()

    def read_key(self) -> bool:
        try:
            key = self.stdscr.get_wch()
        except curses.error:  # no key within FRAME_MS
            return False
        if self.app.asking is not None and key in (curses.KEY_PPAGE, curses.KEY_NPAGE):
            self.keys[key]()  # R-APPR-11: a command taller than the pane is read before answering
            return True
        if self.app.asking is not None:  # R-APPR-2: only the keys of approval_answer count
            self.app.approval_key("\n" if key == curses.KEY_ENTER else key if isinstance(key, str) else "")
            return True
        action = self.keys.get(key)
        if action is not None:
            action()
        elif isinstance(key, str) and key.isprintable():
            self.app.editor.insert(key)
        return True

    def _key_table(self) -> Mapping[object, Callable[[], None]]:
        app, editor = self.app, self.app.editor
        return {
            "\x03": app.interrupt,
            "\n": app.submit,
            "\r": app.submit,
            curses.KEY_ENTER: app.submit,
            "\t": editor.complete,
            "\x7f": editor.backspace,
            "\x08": editor.backspace,
            curses.KEY_BACKSPACE: editor.backspace,
            curses.KEY_DC: editor.delete,
            "\x04": self._ctrl_d,
            curses.KEY_LEFT: editor.left,
            "\x02": editor.left,
            curses.KEY_RIGHT: editor.right,
            "\x06": editor.right,
            curses.KEY_HOME: editor.home,
            "\x01": editor.home,
            curses.KEY_END: editor.end,
            "\x05": editor.end,
            "\x15": editor.kill_before,
            "\x0b": editor.kill_after,
            curses.KEY_UP: editor.up,
            "\x10": editor.up,
            curses.KEY_DOWN: editor.down,
            "\x0e": editor.down,
            curses.KEY_PPAGE: self._page_up,
            curses.KEY_NPAGE: self._page_down,
            "\x0c": self.stdscr.clear,
            curses.KEY_RESIZE: lambda: None,
        }

    def _page_up(self) -> None:
        self.app.page(max(1, self.stdscr.getmaxyx()[0] - 3))

    def _page_down(self) -> None:
        self.app.page(-max(1, self.stdscr.getmaxyx()[0] - 3))

    def _ctrl_d(self) -> None:
        if self.app.editor.text:
            self.app.editor.delete()
        else:
            self.app.request_exit()

    def _styles(self) -> None:
        self.kinds = {
            "user": curses.A_BOLD,
            "assistant": curses.A_NORMAL,
            "tool": curses.A_DIM,
            "notice": curses.A_NORMAL,
            "command": curses.A_BOLD,
            "error": curses.A_BOLD,
        }
        self.colours = {c: curses.A_BOLD for c in _BASIC_COLOURS}
        if not curses.has_colors():
            return
        try:
            curses.start_color()
            try:
                curses.use_default_colors()
                background = -1
            except curses.error:
                background = curses.COLOR_BLACK
            for pair, colour in enumerate(_BASIC_COLOURS, start=1):
                # R-TUI-3: the 256-colour number itself when the terminal has it, else its basic colour.
                fg = colour if colour < curses.COLORS else _BASIC_COLOURS[colour]
                curses.init_pair(pair, fg, background)
                self.colours[colour] = curses.color_pair(pair) | curses.A_BOLD
            curses.init_pair(len(_BASIC_COLOURS) + 1, curses.COLOR_CYAN, background)
            self.kinds["tool"] = curses.color_pair(len(_BASIC_COLOURS) + 1)
            self.kinds["notice"] = self.colours[COLOUR_WARN]
            self.kinds["error"] = self.colours[COLOUR_HIGH]
        except curses.error:  # a terminal that refuses colours still gets the text
            pass

    def put(self, y: int, x: int, text: str, attr: int) -> int:
        """Draw ``text`` cut to the row; returns the column after it."""
        width = self.stdscr.getmaxyx()[1]
        text = cut_cells(text, width - x)
        try:
            self.stdscr.addstr(y, x, text, attr)
        except curses.error:  # writing the bottom-right cell moves the cursor off the screen
            pass
        return self.stdscr.getyx()[1] if text else x

    def draw(self) -> None:
        height, width = self.stdscr.getmaxyx()
        self.stdscr.erase()
        if height < 3 or width < 4:
            self.stdscr.refresh()
            return
        for y, (text, kind) in enumerate(self.app.pane_rows(width, height - 2)):
            self.put(y, 0, text, self.kinds.get(kind, curses.A_NORMAL))
        x = 0
        for text, colour in self.app.status_segments(width):
            x = self.put(height - 2, x, text, curses.A_BOLD if colour is None else self.colours.get(colour, curses.A_BOLD))
        prompt = self.app.input_prompt
        shown, cursor = self.app.editor.view(width - len(prompt))
        self.put(height - 1, 0, prompt, curses.A_BOLD)
        self.put(height - 1, len(prompt), shown, curses.A_NORMAL)
        try:
            self.stdscr.move(height - 1, min(width - 1, len(prompt) + cursor))
        except curses.error:
            pass
        self.stdscr.refresh()
