"""The /rewind listing, the choice that follows it, and the question about the files (SPEC R-FORK-4, R-FORK-5, R-TUI-50).

Pure: the UI hands over the session's stored messages and these functions list its prompts a
page at a time, newest page first, and read the typed answer. Numbers and page keys are those
of /resume's listing (R-TUI-18), so ``parse_listing_choice`` reads the answer; only the items
and the wording differ. The choice becomes a fork at the chosen prompt's position: the messages
before it, never a cut between a call and its result, since a prompt is not a result. When the
turns it drops changed files, the rewind first waits for the answer to ``undo_question``
(``UndoQuestion``): the files are put back only on a yes (R-TUI-50).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..memory.storage import make_title
from ..schema import ROLE_USER, Message
from ..text import DEFAULT_LANG, PAGE_SIZE, REWIND_ITEM, PaneLine, strings_for
from ..tools import Restore
from ._resume import Choice, parse_listing_choice

__all__ = ["YES_ANSWERS", "Prompt", "Rewind", "UndoQuestion", "rewind_lines", "session_prompts"]

YES_ANSWERS: Final = ("y", "yes")  # R-TUI-50b: any case, white space around ignored

# The prompt after a page names only the page keys that work there: (previous page?, next page?).
_PROMPTS = {
    (False, False): "rewind_prompt",
    (False, True): "rewind_prompt_next",
    (True, False): "rewind_prompt_previous",
    (True, True): "rewind_prompt_pages",
}


@dataclass(frozen=True, slots=True)
class Prompt:
    """One prompt of a session: its stored position (0 is the first message) and its text."""

    position: int
    text: str


def session_prompts(messages: Sequence[Message]) -> list[Prompt]:
    """The user's prompts among ``messages``: role user and no ``tool_call_id`` (R-FORK-4, as R-FIND-3 counts them)."""
    return [Prompt(i, m.content) for i, m in enumerate(messages) if m.role == ROLE_USER and not m.tool_call_id]


def last_page(count: int) -> int:
    """The page the listing opens on: the one holding the newest prompt (1 when there is none)."""
    return max(1, -(-count // PAGE_SIZE))


def rewind_lines(prompts: Sequence[Prompt], page: int, lang: str = DEFAULT_LANG) -> list[str]:
    """The lines of page ``page`` of the /rewind listing (R-FORK-4): header, items, prompt; or ``rewind_empty``."""
    texts = strings_for(lang)
    if not prompts:
        return [texts["rewind_empty"]]
    pages = last_page(len(prompts))
    first = (page - 1) * PAGE_SIZE
    listed = prompts[first : first + PAGE_SIZE]
    header = texts["rewind_header_page" if pages > 1 else "rewind_header"].format(page=page, n=len(listed))
    items = [REWIND_ITEM.format(k=k, preview=make_title(p.text)).rstrip() for k, p in enumerate(listed, start=first + 1)]
    return [header, *items, texts[_PROMPTS[page > 1, page < pages]]]


@dataclass
class Rewind:
    """An open /rewind listing: the prompts of the current session and the page on screen."""

    prompts: Sequence[Prompt]
    page: int = 0

    def __post_init__(self) -> None:
        self.page = self.page or last_page(len(self.prompts))

    @property
    def empty(self) -> bool:
        return not self.prompts

    def lines(self, lang: str) -> list[str]:
        return rewind_lines(self.prompts, self.page, lang)

    def choose(self, typed: str) -> Choice:
        first = (self.page - 1) * PAGE_SIZE
        count = len(self.prompts[first : first + PAGE_SIZE])
        return parse_listing_choice(typed, page=self.page, count=count, has_next=self.page < last_page(len(self.prompts)))

    def item(self, k: int) -> Prompt:
        """The prompt numbered ``k`` (a number ``choose`` returned)."""
        return self.prompts[k - 1]


@dataclass(frozen=True)
class UndoQuestion:
    """A rewind waiting for the answer about its files (R-TUI-50): the listing and prompt chosen,
    the files that can be put back, and the lines saying why the others are left as they are."""

    rewind: Rewind
    choice: int
    restores: Sequence[Restore]
    left: Sequence[PaneLine] = ()

    @staticmethod
    def agreed(typed: str) -> bool:
        """Whether the typed line is a yes (R-TUI-50b); anything else, the empty line included, is no."""
        return typed.strip().lower() in YES_ANSWERS
