"""Turning bytes into observation text, with the output cap (SPEC R-TOOL-4, R-TOOL-5, R-MSG-6)."""

from __future__ import annotations

from typing import Final

from ..schema import replace_lone_surrogates

__all__ = ["DEFAULT_OUTPUT_CAP", "TRUNCATED_NOTE"]

DEFAULT_OUTPUT_CAP: Final = 65536  # R-TOOL-4: bytes of a file or of a command's output shown
TRUNCATED_NOTE: Final = "\n[truncated: showing the first {cap} of {total} bytes]"  # R-TOOL-4


def _sequence_length(lead: int) -> int:
    """Bytes of the UTF-8 sequence a lead byte starts; 1 for ASCII and for bytes no sequence starts with."""
    if lead >= 0xF0:
        return 4 if lead <= 0xF4 else 1
    if lead >= 0xE0:
        return 3
    if lead >= 0xC2:
        return 2
    return 1


def utf8_prefix(data: bytes) -> bytes:
    """``data`` without a multi-byte UTF-8 sequence cut off at its end (at most three bytes go).

    Only a sequence that the end of ``data`` splits is dropped; invalid bytes before it stay
    and are replaced when decoded.
    """
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # not a continuation byte: the last sequence starts here
            return data[:-back] if _sequence_length(byte) > back else data
    return data


def clean_text(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD, so a message can hold it (R-MSG-6)."""
    return replace_lone_surrogates(text)


def capped_text(head: bytes, total: int, cap: int) -> str:
    """Decode ``head`` (the first bytes of ``total``) as UTF-8 with U+FFFD for invalid bytes.

    When ``total`` exceeds ``cap`` the text is the first ``cap`` bytes cut back to a character
    boundary followed by ``TRUNCATED_NOTE`` (R-TOOL-4).
    """
    if total <= cap:
        return head.decode("utf-8", "replace")
    text = utf8_prefix(head[:cap]).decode("utf-8", "replace")
    return text + TRUNCATED_NOTE.format(cap=cap, total=total)
