"""The one root of every error the package raises on purpose, and how a user-facing error is
worded in the user's language (SPEC R-LANG-3).

Why one root: a caller (the command line, an adapter, a user's own program) catches
``Harness9Error`` once and reports ``code`` and ``str(error)``; anything else that escapes is a
bug, not a user mistake. ``code`` is the conformance error code, a class attribute of each class.

Why ``Said``: an error a user can cause (an unknown session, a bad option value) is worded by a
key of the strings table and its fields rather than by a finished English sentence, so the
program can write it in the chosen language where it prints it (``in_language``), once, while
``str(error)`` stays the English text every library caller and the conformance protocol see.
Every other error keeps its text as received (a provider's body, an operating system's words).
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["Harness9Error", "Said", "in_language"]


class Said:
    """A message by its key of ``STRINGS_TABLE`` and its fields (R-LANG-3); ``str`` is its English text."""

    __slots__ = ("fields", "key")

    def __init__(self, key: str, /, **fields: object) -> None:
        self.key = key
        self.fields = fields

    def text(self, lang: str) -> str:
        """The message in ``lang`` (R-LANG-3).

        Raises:
            ValueError: ``lang`` is not a language of the table.
            KeyError: ``key`` is not in the table (a bug, caught by the tests of every key used).
        """
        # Imported here, not with the module: the text package imports the packages whose
        # errors these are, so a module-level import would be circular.
        from .text._strings import strings_for

        return strings_for(lang)[self.key].format(**self.fields)

    def __str__(self) -> str:
        return self.text("en")

    def __repr__(self) -> str:
        return f"Said({self.key!r}, **{self.fields!r})"


class Harness9Error(Exception):
    """Base of every error of harness9_ref; ``code`` names the kind of failure (SPEC's error codes)."""

    code: ClassVar[str] = "error"

    @property
    def said(self) -> Said | None:
        """The key and fields of the message, when it is one a user can cause (R-LANG-3)."""
        first = self.args[0] if self.args else None
        return first if isinstance(first, Said) else None


def in_language(error: BaseException, lang: str) -> str:
    """``error``'s message for the screen in ``lang``: its ``Said`` in that language, else as received (R-LANG-3)."""
    said = error.said if isinstance(error, Harness9Error) else None
    return said.text(lang) if said is not None else str(error)
