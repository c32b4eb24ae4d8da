"""Lone surrogates, the one way a Python ``str`` can fail to be Unicode text (SPEC R-MSG-6)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["replace_lone_surrogates"]

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so that a message can hold it (R-MSG-6)."""
    return _LONE_SURROGATE.sub("\ufffd", text)
