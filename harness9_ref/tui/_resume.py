"""The /resume listing and the choice that follows it (SPEC R-TUI-8; seed 10.3)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Final, Mapping, Sequence, Union

from ..memory import SessionInfo
from ._text import NO_SESSIONS, RESUME_HEADER, RESUME_ITEM, RESUME_LIMIT, RESUME_PROMPT, RESUME_TIME_FORMAT

__all__ = ["SessionLike", "parse_resume_choice", "resume_listing"]  # gets re-exported

SessionLike = Union[SessionInfo, Mapping[str, Any]]
"""A ``SessionInfo`` or its JSON object ``{"id", "created_at", "updated_at", "message_count"}``."""

_DIGITS: Final = re.compile(r"[0-9]+")
_MAX_DIGITS: Final = 9  # more digits than this cannot name one of RESUME_LIMIT items


def _get(info: SessionLike, name: str) -> Any:
    return info[name] if isinstance(info, Mapping) else getattr(info, name)


def _zone(tz: tzinfo | int | None) -> tzinfo | None:
    if isinstance(tz, int):
        return timezone(timedelta(minutes=tz))
    return tz


def resume_listing(infos: Sequence[SessionLike], tz: tzinfo | int | None = None) -> list[str]:
    """The lines /resume shows (R-TUI-8).

    Args:
        infos: sessions in the order of ``Manager.list_sessions()``; the first RESUME_LIMIT
            are listed.
        tz: the time zone of the times shown: a ``tzinfo``, a fixed offset in minutes east of
            UTC (JSON-friendly; ``480`` for UTC+8), or None for the local time zone.

    Returns:
        ``RESUME_HEADER``, one ``RESUME_ITEM`` per listed session (``[k]`` from 1, the
        session's ``updated_at`` as ``YYYY-MM-DD HH:MM``), then ``RESUME_PROMPT``; or the
        single line ``NO_SESSIONS`` when ``infos`` is empty.
    """
    listed = list(infos[:RESUME_LIMIT])
    if not listed:
        return [NO_SESSIONS]
    zone = _zone(tz)
    lines = [RESUME_HEADER.format(n=len(listed))]
    for k, info in enumerate(listed, start=1):
        when = datetime.fromtimestamp(int(_get(info, "updated_at")), zone).strftime(RESUME_TIME_FORMAT)
        lines.append(RESUME_ITEM.format(k=k, id=_get(info, "id"), time=when, count=int(_get(info, "message_count"))))
    lines.append(RESUME_PROMPT)
    return lines


def parse_resume_choice(text: str, count: int) -> int | None:
    """Which listed session a typed line names (R-TUI-8).

    Args:
        text: the line the user typed after the listing.
        count: how many sessions were listed.

    Returns:
        The item number ``k`` (1 … count) when ``text``, without surrounding white space, is
        ASCII digits naming a listed item (leading zeros allowed); None, meaning "cancel",
        for anything else: other characters, 0, a number beyond the list, an empty line.
    """
    digits = text.strip()
    if _DIGITS.fullmatch(digits) is None:
        return None
    digits = digits.lstrip("0")
    if not digits or len(digits) > _MAX_DIGITS:
        return None
    k = int(digits)
    return k if 1 <= k <= count else None
