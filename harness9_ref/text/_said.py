"""The product's errors worded by the strings table, and any error written in a language (SPEC R-LANG-3).

The core's ``Said`` knows only the English of the keys the core raises (it imports nothing of
the product); the product's own errors (the command line's refusals, the allow-rules file, the
screen) use ``TableSaid``, whose English is the table's. ``in_language`` converts either, once,
where the program writes the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from .._harness9_error import Harness9Error, Said
from ._strings import STRINGS, strings_for

__all__ = ["TableSaid", "in_language"]


class TableSaid(Said):
    """A ``Said`` of any key of the strings table; ``str`` is the table's English text (R-LANG-3)."""

    __slots__ = ()
    english: ClassVar[Mapping[str, str]] = STRINGS["en"]


def in_language(error: BaseException, lang: str) -> str:
    """``error``'s message for the screen in ``lang``: its ``Said`` in that language, else as received (R-LANG-3).

    Raises:
        ValueError: ``lang`` is not a language of the table.
    """
    said = error.said if isinstance(error, Harness9Error) else None
    return strings_for(lang)[said.key].format(**said.fields) if said is not None else str(error)
