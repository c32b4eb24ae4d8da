"""The state of an open /resume or /search listing between its page and the typed answer
(SPEC R-TUI-8, R-TUI-18).

The listing fetches one page at a time with one item more than it shows, which says whether a
next page exists without counting every session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..text import PAGE_SIZE
from ._resume import Choice, listing_lines, parse_listing_choice

__all__ = ["Listing", "PageSource"]

PageSource = Callable[[int, int], Sequence[Any]]
"""``fetch(limit, offset)``: up to ``limit`` sessions from position ``offset`` of the listing."""


@dataclass
class Listing:
    """One listing: where its sessions come from and the page on screen."""

    kind: Literal["resume", "search"]
    fetch: PageSource
    page: int = 1
    fetched: Sequence[Any] = ()  # the page's sessions and, when another page follows, one more

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
        return listing_lines(self.fetched, page=self.page, now=now, search=self.kind == "search", lang=lang)

    @property
    def empty(self) -> bool:
        return not self.items

    def choose(self, typed: str) -> Choice:
        return parse_listing_choice(typed, page=self.page, count=len(self.items), has_next=self.has_next)

    def item(self, k: int) -> Any:
        """The session numbered ``k`` (a number ``choose`` returned)."""
        return self.items[k - 1 - (self.page - 1) * PAGE_SIZE]
