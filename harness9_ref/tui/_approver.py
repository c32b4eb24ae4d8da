"""The UI's side of approval: asking the user before a command runs, from the engine's worker thread
(SPEC R-APPR-1, R-APPR-2, R-APPR-8).

The tool registry calls its ``approve`` callback on the worker thread, in the middle of a run,
and needs the answer before it can go on; only the UI thread may touch the screen. So the
callback (``Approver``) hands an ``ApprovalRequest`` to the UI thread through the App's queue
and blocks until the UI answers it from a key. Whatever happens to the UI (it exits, the turn
is cancelled), every request is answered, by "no" if nobody else does: a command never runs
without a yes, and the worker never hangs.

``a`` to a command asks a second question (R-APPR-8): which allow rule to keep, among the
command itself or its first words and the wildcard ``*`` (``allow_line``, ``allow_answer``),
or every command of this session.

A command is shown whole and as it runs (R-APPR-11, ``command_rows``): every line on rows of its
own behind a numbered gutter, control characters as escapes, and the question on a row after
it, so no line of a command can pass for the question's own text or hide behind it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final, Literal

from ..engine import one_line
from ..text import DEFAULT_LANG, DIFF_PANE_LINES, char_cells, diff_pane_lines, strings_for
from ..tools import AllowRule, FileChange, Rule, command_lines, rule_text, visible

__all__ = [
    "DIFF_PANE_LINES",
    "GUTTER",
    "AllowKey",
    "ApprovalRequest",
    "Approver",
    "KeyAnswer",
    "allow_answer",
    "allow_line",
    "approval_answer",
    "approval_header",
    "approval_line",
    "command_rows",
    "diff_lines",
]

GUTTER: Final = " | "  # R-APPR-11: after a command line's number on each of its rows

Answer = Literal["yes", "no", "always"] | AllowRule
KeyAnswer = Literal["yes", "no", "always", "cancel"]
"""What a key means while a command waits: an answer, or "cancel" (no, and cancel the turn)."""

# R-APPR-2: y, n and a answer; Enter and Esc mean no; Ctrl+C means no and cancels the turn.
_KEYS: Final[dict[str, KeyAnswer]] = {
    "y": "yes",
    "n": "no",
    "a": "always",
    "\n": "no",
    "\r": "no",
    "\x1b": "no",
    "\x03": "cancel",
}


AllowKey = Rule | Literal["session", "back", "cancel"]
"""What a key means while the rule question waits (R-APPR-8): a rule's words, every command of
this session, back to the first question, or no and cancel the turn."""

# R-APPR-8: the keys of the rule question besides the offers' digits.
_ALLOW_KEYS: Final[dict[str, AllowKey]] = {
    "s": "session",
    "\n": "back",
    "\r": "back",
    "\x1b": "back",
    "\x03": "cancel",
}


def approval_answer(key: str) -> KeyAnswer | None:
    """What ``key`` answers while a command waits for approval (R-APPR-2); None: the key is
    ignored and the question stays (a stray key must not decide whether a command runs)."""
    return _KEYS.get(key)


def approval_line(request: str | FileChange, lang: str = DEFAULT_LANG) -> str:
    """The question shown after a command (R-APPR-11: ``approve_prompt``, the command being on the
    rows above it) or a change (R-APPR-5: ``approve_change_prompt`` with the subject made one line)."""
    if isinstance(request, FileChange):
        return strings_for(lang)["approve_change_prompt"].format(subject=one_line(request.subject))
    return strings_for(lang)["approve_prompt"]


def approval_header(command: str, lang: str = DEFAULT_LANG) -> str:
    """The row above a command's rows (R-APPR-11): ``approve_header`` with its number of lines."""
    return strings_for(lang)["approve_header"].format(n=len(command_lines(command)))


def command_rows(command: str, width: int | None = None) -> list[str]:
    """The rows showing ``command`` (R-APPR-11): each line of ``command_lines`` after its number
    (1 first, right-aligned to the widest) and ``GUTTER``; with a ``width``, a line longer than
    the rest of the row goes on over more rows, every character kept, each such row's number
    left blank. A row of the command always starts with a gutter, so it never reads as a
    question, and a new line of the shell always has a number of its own."""
    lines = command_lines(command)
    digits = len(str(len(lines)))
    rows: list[str] = []
    for number, line in enumerate(lines, 1):
        first, more = f"{number:>{digits}}{GUTTER}", " " * digits + GUTTER
        pieces = [line] if width is None else _cut(line, max(width - len(first), 2))
        rows.extend((more if k else first) + piece for k, piece in enumerate(pieces))
    return rows


def _cut(text: str, width: int) -> list[str]:
    """``text`` in rows of at most ``width`` cells, broken between any two characters (no space
    dropped, unlike the pane's word wrapping: the command is shown exactly)."""
    rows: list[str] = []
    row: list[str] = []
    cells = 0
    for char in text:
        size = char_cells(char)
        if row and cells + size > width:
            rows.append("".join(row))
            row, cells = [], 0
        row.append(char)
        cells += size
    rows.append("".join(row))
    return rows


def allow_answer(key: str, offers: list[Rule]) -> AllowKey | None:
    """What ``key`` means while the rule question waits (R-APPR-8): the digit of one of
    ``offers`` is that rule; None: the key is ignored and the question stays."""
    if len(key) == 1 and "1" <= key <= "9" and int(key) <= len(offers):
        return offers[int(key) - 1]
    return _ALLOW_KEYS.get(key)


def allow_line(offers: list[Rule], workdir: str, lang: str = DEFAULT_LANG) -> str:
    """The rule question (R-APPR-8): ``allow_prompt`` with the numbered offers in the
    directory ``workdir``, or ``allow_prompt_none`` for a command no rule can cover."""
    texts = strings_for(lang)
    if not offers:
        return texts["allow_prompt_none"]
    choices = "  ".join(texts["allow_choice"].format(k=k, rule=visible(rule_text(rule))) for k, rule in enumerate(offers, 1))
    return texts["allow_prompt"].format(workdir=workdir, choices=choices)


def diff_lines(change: FileChange, lang: str = DEFAULT_LANG) -> list[str]:
    """The pane lines showing a change's diff before its question (R-APPR-5): ``diff_pane_lines``'s texts."""
    return [line.text for line in diff_pane_lines(change.diff, lang)]


class ApprovalRequest:
    """One question to the user: may the command run (the change be made)? The first answer counts."""

    __slots__ = ("_answer", "_done", "command")

    def __init__(self, command: str | FileChange) -> None:
        self.command = command
        self._answer: Answer = "no"
        self._done = threading.Event()

    @property
    def answered(self) -> bool:
        return self._done.is_set()

    def answer(self, answer: Answer) -> None:
        """Give the answer; later answers are ignored."""
        if not self._done.is_set():
            self._answer = answer
            self._done.set()

    def wait(self) -> Answer:
        """Block until answered, then return the answer."""
        self._done.wait()
        return self._answer

    def __repr__(self) -> str:
        return f"ApprovalRequest({self.command!r})"


class Approver:
    """The ``approve(request)`` callback of ``Registry`` (R-APPR-1, R-APPR-4) for the terminal UI.

    Create it before the registry, pass it as ``Registry(workdir, approve=approver)`` and to
    ``App(…, approver=approver)``, which attaches it to its queue. Unattached or closed, it
    answers "no" at once (R-APPR-1: no answer is no run).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._post: Callable[[ApprovalRequest], None] | None = None
        self._pending: list[ApprovalRequest] = []
        self._closed = False

    def attach(self, post: Callable[[ApprovalRequest], None]) -> None:
        """Send requests to ``post`` (the UI queue's ``put``) from now on."""
        with self._lock:
            self._post = post
            self._closed = False

    def close(self) -> None:
        """Answer "no" to every open request and to every later one (the UI is going away)."""
        with self._lock:
            self._closed = True
            pending, self._pending = self._pending, []
        for request in pending:
            request.answer("no")

    def __call__(self, command: str | FileChange) -> Answer:
        request = ApprovalRequest(command)
        with self._lock:
            post = self._post
            if post is None or self._closed:
                return "no"
            self._pending.append(request)
        try:
            post(request)
            return request.wait()
        finally:
            with self._lock:
                if request in self._pending:
                    self._pending.remove(request)
