"""The /resume and /search listings and the choice that follows them (SPEC R-TUI-8, R-TUI-18,
R-TUI-19).

Pure: the UI fetches one page of ``recent_sessions`` or ``search`` and these functions turn it
into lines and read the typed answer, so a port can check both byte for byte. Items are
numbered across pages (page 2 lists [11] … [20]), so a number always names one session.

``Listing`` is the state of an open listing between its page and the typed answer: it fetches
one page at a time with one item more than it shows, which says whether a next page exists
without counting every session.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..text import DEFAULT_LANG, LIST_FOLDER, LIST_ITEM, LIST_TITLE, PAGE_SIZE, folder_shown, strings_for

__all__ = ["Choice", "ListedSession", "format_age", "listing_lines", "parse_listing_choice"]

ListedSession = Mapping[str, Any] | Any
"""A ``SessionSummary`` or ``SearchHit`` (R-FIND-3, R-SRCH-1), or its JSON object with at least
``id``, ``updated_at``, ``message_count`` and ``title`` (``snippet`` for a search)."""

Choice = int | Literal["next", "previous"] | None
"""What a typed answer asks for: the item number to open, a page, or None (cancel)."""

MINUTE: Final = 60
HOUR: Final = 3600
DAY: Final = 86400
NEXT_PAGE: Final = "n"
PREVIOUS_PAGE: Final = "p"
# The prompt after a page names only the page keys that work there: (previous page?, next page?).
_PROMPTS: Final = {
    (False, False): "resume_prompt",
    (False, True): "resume_prompt_next",
    (True, False): "resume_prompt_previous",
    (True, True): "resume_prompt_pages",
}
_DIGITS: Final = re.compile(r"[0-9]+")
_MAX_DIGITS: Final = 9  # more digits than this cannot name a listed item


def _get(item: ListedSession, name: str) -> Any:
    return item[name] if isinstance(item, Mapping) else getattr(item, name)


def format_age(now: int, updated_at: int, lang: str = DEFAULT_LANG) -> str:
    """How long ago ``updated_at`` was, in whole units (R-TUI-19); a time in the future is "now"."""
    texts = strings_for(lang)
    d = now - updated_at
    if d < MINUTE:
        return texts["age_now"]
    if d < HOUR:
        return texts["age_minutes"].format(n=d // MINUTE)
    if d < DAY:
        return texts["age_hours"].format(n=d // HOUR)
    return texts["age_days"].format(n=d // DAY)


def listing_lines(
    fetched: Sequence[ListedSession],
    *,
    page: int,
    now: int,
    search: bool = False,
    lang: str = DEFAULT_LANG,
    here: str | None = None,
) -> list[str]:
    """The lines of one page of the /resume or /search listing (R-TUI-8, R-TUI-18).

    Args:
        fetched: the page's sessions in listing order, as fetched: up to PAGE_SIZE + 1 of
            them, from position ``(page - 1) * PAGE_SIZE`` of the listing; one more than
            PAGE_SIZE says that another page follows, and is not shown.
        page: the page's number, 1 for the first.
        now: the time the ages are counted to, in Unix seconds (R-TUI-19).
        search: a /search listing: the snippet instead of the title, and its own header and
            empty line.
        lang: the language of R-TUI-17.
        here: the folder the UI works in (R-FIND-4's form), or None: a /resume item whose
            ``workdir`` (absent: unknown) is another folder shows it after its count,
            ``folder_shown``'s form (R-TUI-43).

    Returns:
        The header (``*_header``, or ``*_header_page`` when there is more than one page), one
        ``LIST_ITEM`` per session (numbered from ``(page - 1) * PAGE_SIZE + 1``, followed by
        ``LIST_TITLE`` when the title or snippet is not empty; the count is followed by
        ``message_word`` when it is 1, else ``messages_word``), then the prompt that names the
        page keys that work on this page (``resume_prompt``, ``resume_prompt_next``,
        ``resume_prompt_previous`` or ``resume_prompt_pages``); or the single line
        ``no_sessions`` (``search_empty``) when the first page is empty.
    """
    texts = strings_for(lang)
    kind = "search" if search else "resume"
    listed = list(fetched[:PAGE_SIZE])
    has_next = len(fetched) > PAGE_SIZE
    if not listed and page <= 1:
        return [texts["search_empty" if search else "no_sessions"]]
    paged = page > 1 or has_next
    header = texts[f"{kind}_header_page" if paged else f"{kind}_header"]
    lines = [header.format(page=page, n=len(listed))]
    first = (page - 1) * PAGE_SIZE + 1
    for k, item in enumerate(listed, start=first):
        line = LIST_ITEM.format(
            k=k,
            id8=str(_get(item, "id"))[:8],
            age=format_age(now, int(_get(item, "updated_at")), lang),
            count=int(_get(item, "message_count")),
            messages=texts["message_word" if int(_get(item, "message_count")) == 1 else "messages_word"],
        )
        if here is not None and not search:
            folder = str(_get(item, "workdir")) if not isinstance(item, Mapping) or "workdir" in item else ""
            line += LIST_FOLDER.format(folder=folder_shown(folder, lang)) if folder != here else ""
        title = str(_get(item, "snippet" if search else "title"))
        lines.append(line + LIST_TITLE.format(title=title) if title else line)
    lines.append(texts[_PROMPTS[page > 1, has_next]])
    return lines


def parse_listing_choice(text: str, *, page: int, count: int, has_next: bool) -> Choice:
    """What the line typed after a listing page asks for (R-TUI-8, R-TUI-18).

    Args:
        text: the typed line.
        page: the page shown, 1 for the first.
        count: how many items that page lists.
        has_next: whether another page follows.

    Returns:
        The item number ``k`` when ``text``, without surrounding white space, is ASCII digits
        (leading zeros allowed) naming an item of this page; ``"next"`` for ``n`` when another
        page follows; ``"previous"`` for ``p`` after the first page; None, meaning "cancel",
        for anything else (other characters, 0, a number not on this page, an empty line).
    """
    typed = text.strip()
    if typed == NEXT_PAGE:
        return "next" if has_next else None
    if typed == PREVIOUS_PAGE:
        return "previous" if page > 1 else None
    if _DIGITS.fullmatch(typed) is None:
        return None
    digits = typed.lstrip("0")
    if not digits or len(digits) > _MAX_DIGITS:
        return None
    k = int(digits)
    first = (page - 1) * PAGE_SIZE + 1
    return k if first <= k < first + count else None


PageSource = Callable[[int, int], Sequence[Any]]
"""``fetch(limit, offset)``: up to ``limit`` sessions from position ``offset`` of the listing."""


@dataclass
class Listing:
    """One listing: where its sessions come from and the page on screen."""

    kind: Literal["resume", "search"]
    fetch: PageSource
    page: int = 1
    fetched: Sequence[Any] = ()  # the page's sessions and, when another page follows, one more
    here: str | None = None  # the UI's folder: /resume shows the folder of a session of another (R-TUI-43)

    def load(self, page: int) -> None:
        """Fetch ``page`` (1 for the first)."""
        self.page, self.fetched = page, list(self.fetch(PAGE_SIZE + 1, (page - 1) * PAGE_SIZE))

    @property
    def items(self) -> Sequence[Any]:
        return self.fetched[:PAGE_SIZE]

    @property
    def has_next(self) -> bool:
        return len(self.fetched) > PAGE_SIZE

    def lines(self, now: int, lang: str) -> list[str]:
        return listing_lines(
            self.fetched, page=self.page, now=now, search=self.kind == "search", lang=lang, here=self.here
        )

    @property
    def empty(self) -> bool:
        return not self.items

    def choose(self, typed: str) -> Choice:
        return parse_listing_choice(typed, page=self.page, count=len(self.items), has_next=self.has_next)

    def item(self, k: int) -> Any:
        """The session numbered ``k`` (a number ``choose`` returned)."""
        return self.items[k - 1 - (self.page - 1) * PAGE_SIZE]
