"""The curses screen: the only module of harness9-ref that imports curses (SPEC R-TUI-13).

Layout, top to bottom: the conversation pane, the status bar, the input line. The UI thread
runs ``_Screen.loop``: apply the worker's events (``App.poll``), redraw when something
changed, read one key with a short timeout. The engine runs on the worker thread of
``App`` (``RunWorker``) and never touches curses.

Keys: Enter sends, Tab completes a command, Up/Down walk the input history, Left/Right/Home/End
(Ctrl+A, Ctrl+E) move, Backspace/Delete, Ctrl+U/Ctrl+K cut, PageUp/PageDown scroll the pane,
Ctrl+L redraws, Ctrl+O shows the last tool result whole (R-TUI-41), Ctrl+C cancels the running turn or
ends the program when idle, Ctrl+D on an
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
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import Final

from ..text import COLOUR_HIGH, COLOUR_OK, COLOUR_WARN, LineKind, TableSaid, cut_cells
from ._app import App
from ._keys import ALT_ENTER, ANSWER_GRACE, ESCAPE, Decoded, KeyDecoder, Paste
from ._screen_error import ScreenError

__all__ = ["run_screen"]

FRAME_MS: Final = 30  # how long one key read waits, so streamed text shows within a frame
ESCDELAY_MS: Final = "25"  # a lone Esc should not freeze input for curses' default second
KEYS_PER_FRAME: Final = 1 << 16  # keys acted on before the screen is drawn again (R-TUI-31)
INPUT_SHARE: Final = 3  # the input box grows to at most a third of the screen's rows
BRACKETED_PASTE_ON: Final = "\x1b[?2004h"
BRACKETED_PASTE_OFF: Final = "\x1b[?2004l"
DEFAULT_EDITOR: Final = "vi"
FALLBACK_LOCALE: Final = "C.UTF-8"  # R-LANG-1: when the environment names a locale the system lacks

# R-TUI-34: keys that decline at once, so they answer even within the grace (no accident can approve).
_ALWAYS_ANSWERS: Final = ("\x03", ESCAPE, curses.KEY_PPAGE, curses.KEY_NPAGE)
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
        self.decoder = KeyDecoder()
        self.asked: object = None  # the approval request last drawn, and when (R-TUI-34)
        self.asked_at = 0.0
        self.last_key = 0.0  # when keys last arrived
        self.prefix = False  # Ctrl+X was pressed: Ctrl+E opens the editor

    def loop(self, stdscr: curses.window) -> None:
        self.stdscr = stdscr
        curses.raw()  # Ctrl+C arrives as a key, not as a signal
        stdscr.keypad(True)
        stdscr.timeout(FRAME_MS)
        self._styles()
        self.keys = self._key_table()
        _terminal_mode(BRACKETED_PASTE_ON)
        try:
            dirty = True
            while not self.app.exiting:
                try:
                    dirty = self.app.poll() or dirty
                    if self.app.asking is not self.asked:  # a new question: drawn now (R-TUI-34)
                        self.asked, self.asked_at = self.app.asking, time.monotonic()
                        dirty = True
                    if dirty:
                        self.draw()
                        dirty = False
                    dirty = self.read_keys()
                except KeyboardInterrupt:
                    self.app.interrupt()
                    dirty = True
        finally:
            _terminal_mode(BRACKETED_PASTE_OFF)
        self.app.shutdown()

    def _raw_keys(self, wait: bool) -> list[str | int]:
        """The keys that have arrived: the first waiting up to a frame when ``wait``, then all
        that are already there (a paste arrives at once), up to KEYS_PER_FRAME."""
        keys: list[str | int] = []
        self.stdscr.timeout(FRAME_MS if wait else 0)
        try:
            while len(keys) < KEYS_PER_FRAME:
                keys.append(self.stdscr.get_wch())
                self.stdscr.timeout(0)
        except curses.error:  # nothing more for now
            pass
        return keys

    def read_keys(self) -> bool:
        """Read and act on the keys that arrived; True when there were any."""
        decoded: list[Decoded] = []
        raw = self._raw_keys(wait=True)
        now = time.monotonic()
        # R-TUI-34: keys of a burst of typing that began before the question, or that come
        # within ANSWER_GRACE of its drawing, are text for the input box, not answers.
        early = now - self.last_key < ANSWER_GRACE or now - self.asked_at < ANSWER_GRACE
        if raw:
            self.last_key = now
        for raw_key in raw:
            decoded.extend(self.decoder.feed(raw_key))
        if not raw or (not self.decoder.in_paste and len(raw) < KEYS_PER_FRAME):
            decoded.extend(self.decoder.flush())
        for i, key in enumerate(decoded):
            if early and self.app.asking is not None and key not in _ALWAYS_ANSWERS:
                self.type_ahead(key)
                continue
            more = any(isinstance(k, str) and k.isprintable() for k in decoded[i + 1 :])
            self.act(key, more_follows=more)
        return bool(raw)

    def act(self, key: Decoded, more_follows: bool = False) -> None:
        """One key or paste. ``more_follows``: typed text came in the same read after it, so an
        Enter there is a line of a paste the terminal did not bracket (R-TUI-29)."""
        app, editor = self.app, self.app.editor
        if isinstance(key, Paste):
            app.paste(key.text)  # R-TUI-29: never an answer, never sent by itself
            return
        if app.asking is not None:
            if key in (curses.KEY_PPAGE, curses.KEY_NPAGE):
                self.keys[key]()  # R-APPR-11: a command taller than the pane is read before answering
            else:  # R-APPR-2: only the keys of approval_answer count
                app.approval_key("\n" if key in (curses.KEY_ENTER, ALT_ENTER) else key if isinstance(key, str) else "")
            return
        if self.prefix:  # Ctrl+X, then Ctrl+E: the prompt in $EDITOR (R-TUI-32)
            self.prefix = False
            if key == "\x05":
                self.edit_externally()
                return
        if key in ("\r", "\n", curses.KEY_ENTER) and (more_follows or editor.text[editor.cursor - 1 : editor.cursor] == "\\"):
            if not more_follows:
                editor.backspace()  # the backslash typed before Enter asks for a new line
            editor.newline()
            return
        action = self.keys.get(key)
        if action is not None:
            action()
        elif isinstance(key, str) and key.isprintable():
            editor.insert(key)

    def type_ahead(self, key: Decoded) -> None:
        """R-TUI-34: a key that cannot answer the question yet: its text goes to the input box
        as typed (a paste whole), any other key is dropped."""
        if isinstance(key, Paste):
            self.app.editor.paste(key.text)
        elif isinstance(key, str) and key.isprintable():
            self.app.editor.insert(key)

    def edit_externally(self) -> None:
        """R-TUI-32: the prompt in ``$VISUAL`` or ``$EDITOR`` (else ``vi``); what the editor saved
        becomes the prompt, the final newline taken off. The file is private and removed."""
        curses.def_prog_mode()
        curses.endwin()
        try:
            self.app.edit_prompt(run_editor)
        finally:
            curses.reset_prog_mode()
            _terminal_mode(BRACKETED_PASTE_ON)  # the editor may have turned it off on leaving
            self.stdscr.clear()

    def _key_table(self) -> Mapping[object, Callable[[], None]]:
        app, editor = self.app, self.app.editor
        return {
            "\x03": app.ctrl_c,
            "\n": app.submit,
            "\r": app.submit,
            curses.KEY_ENTER: app.submit,
            ALT_ENTER: editor.newline,
            "\t": app.complete,
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
            "\x17": editor.delete_word,
            "\x18": self._ctrl_x,
            curses.KEY_UP: editor.up,
            "\x10": editor.up,
            curses.KEY_DOWN: editor.down,
            "\x0e": editor.down,
            curses.KEY_PPAGE: self._page_up,
            curses.KEY_NPAGE: self._page_down,
            "\x0c": self.stdscr.clear,
            "\x0f": app.show_result,  # Ctrl+O: the last tool result whole (R-TUI-41)
            curses.KEY_RESIZE: lambda: None,
        }

    def _ctrl_x(self) -> None:
        self.prefix = True

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
            # R-TUI-42: a diff shown whole: added lines green, removed red, hunk headers cyan
            self.kinds["hunk"] = self.kinds["tool"] | curses.A_BOLD
            self.kinds["added"] = curses.color_pair(1 + list(_BASIC_COLOURS).index(COLOUR_OK))
            self.kinds["removed"] = curses.color_pair(1 + list(_BASIC_COLOURS).index(COLOUR_HIGH))
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
        prompt = self.app.input_prompt
        box = self.app.editor.view(width - len(prompt), max(1, (height - 1) // INPUT_SHARE))
        top = height - len(box.rows)  # the input box's first row; the status bar above it
        for y, (text, kind) in enumerate(self.app.pane_rows(width, top - 1)):
            self.put(y, 0, text, self.kinds.get(kind, curses.A_NORMAL))
        x = 0
        for text, colour in self.app.status_segments(width):
            x = self.put(top - 1, x, text, curses.A_BOLD if colour is None else self.colours.get(colour, curses.A_BOLD))
        self.put(top, 0, prompt, curses.A_BOLD)
        for y, row in enumerate(box.rows):
            self.put(top + y, len(prompt), row, curses.A_NORMAL)
        try:
            self.stdscr.move(top + box.row, min(width - 1, len(prompt) + box.column))
        except curses.error:
            pass
        self.stdscr.refresh()


def _terminal_mode(sequence: str) -> None:
    """Ask the terminal for (or stop) a mode curses has no call for: bracketed paste."""
    sys.stdout.write(sequence)
    sys.stdout.flush()


def run_editor(path: str) -> bool:
    """Run the user's editor on ``path`` in this terminal (R-TUI-32); True when it ended well.

    Raises:
        OSError: the editor could not be started.
    """
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or DEFAULT_EDITOR
    return subprocess.run([*shlex.split(command), path], check=False).returncode == 0
