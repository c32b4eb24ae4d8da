"""The one root of every error the package raises on purpose, the English words of the errors
the core raises (SPEC R-LANG-3), and the operating system's words that messages about files
and processes give as their reason (``os_reason``).

Why one root: a caller (the command line, an adapter, a user's own program) catches
``Harness9Error`` once and reports ``code`` and ``str(error)``; anything else that escapes is a
bug, not a user mistake. ``code`` is the conformance error code, a class attribute of each class.

Why ``Said``: an error a user can cause (an unknown session, a bad option value) is worded by a
key of the strings table and its fields rather than by a finished English sentence, so the
program can write it in the chosen language where it prints it (``harness9_ref.text.in_language``),
once, while ``str(error)`` stays the English text every library caller and the conformance
protocol see. Every other error keeps its text as received (a provider's body, an operating
system's words).

Why ``CORE_ERROR_TEXTS`` here: the core imports nothing of the product, whose ``text`` package
holds the strings table of both languages; so the English texts of the keys the core itself
raises live beside the core's errors, and the table repeats them verbatim (a test holds the
two equal). The product's errors are worded by ``text.TableSaid``, whose English is the table's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar, Final

__all__ = ["CORE_ERROR_TEXTS", "Harness9Error", "Said", "os_reason"]

# R-LANG-3: the English text of each key the core raises (R-FIND-1, R-SRCH-1, R-FORK-2, R-PG-13,
# R-LONG-9, R-PG-9), exactly as the strings table's "en" column words it.
CORE_ERROR_TEXTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "err_no_session": "no session with id {id}",
        "err_no_prefix": "no session id starts with {prefix}",
        "err_ambiguous": "{prefix} matches {count} sessions: {ids}",
        "err_not_ref": "{text} is not a session id or prefix",
        "err_not_prefix": "{text} is not a session id or a prefix of one (4 to 35 characters of 0-9, a-f and -)",
        "err_query_empty": "the search query is empty",
        "err_nothing_to_compact": "nothing is old enough to summarise yet",
        "err_fork_beyond": "session {id}: a fork keeps at most its message count, {count}, not {at}",
        "err_fork_result": (
            "message {k} of session {id} is a tool result;"
            " a fork of its first {at} messages would end between a call and its result"
        ),
        "err_copy_taken": "{name} already holds {n} of these sessions ({ids}); nothing was copied (--overwrite replaces them)",
        "err_pool_timeout": "{db}: no connection of the pool came free within {seconds} s",
    }
)


class Said:
    """A message by its key of the strings table and its fields (R-LANG-3); ``str`` is its English text.

    ``english`` maps each key this class words to its English template: the core's keys here,
    the whole table in ``text.TableSaid``.
    """

    __slots__ = ("fields", "key")
    english: ClassVar[Mapping[str, str]] = CORE_ERROR_TEXTS

    def __init__(self, key: str, /, **fields: object) -> None:
        self.key = key
        self.fields = fields

    def __str__(self) -> str:
        return self.english[self.key].format(**self.fields)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.key!r}, **{self.fields!r})"


class Harness9Error(Exception):
    """Base of every error of harness9_ref; ``code`` names the kind of failure (SPEC's error codes)."""

    code: ClassVar[str] = "error"

    @property
    def said(self) -> Said | None:
        """The key and fields of the message, when it is one a user can cause (R-LANG-3)."""
        first = self.args[0] if self.args else None
        return first if isinstance(first, Said) else None


def os_reason(exc: OSError) -> str:
    """The operating system's words for a failure (``No such file or directory``), the reason
    every message about a file, folder or process gives: its ``strerror``, or its whole text
    when it has none (an ``OSError`` raised by Python itself rather than by a system call)."""
    return exc.strerror or str(exc)
