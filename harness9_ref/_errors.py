"""The one root of every error the package raises on purpose.

Why one root: a caller (the command line, an adapter, a user's own program) catches
``Harness9Error`` once and reports ``code`` and ``str(error)``; anything else that escapes is a
bug, not a user mistake. ``code`` is the conformance error code, a class attribute of each class.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["Harness9Error"]


class Harness9Error(Exception):
    """Base of every error of harness9_ref; ``code`` names the kind of failure (SPEC's error codes)."""

    code: ClassVar[str] = "error"
