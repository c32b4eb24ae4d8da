"""Raw keys to keys and pastes (harness9_ref/tui/_keys.py; SPEC R-TUI-29)."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given
from hypothesis import strategies as st

from harness9_ref.tui._keys import ALT_ENTER, ESCAPE, PASTE_MAX_CHARS, Decoded, KeyDecoder, Paste


def decode(keys: Iterable[str | int], decoder: KeyDecoder | None = None) -> list[Decoded]:
    decoder = decoder or KeyDecoder()
    out: list[Decoded] = []
    for key in keys:
        out.extend(decoder.feed(key))
    return out + decoder.flush()


def test_a_bracketed_paste_is_one_item_with_its_text_whole() -> None:
    keys = "a\x1b[200~line 1\r\nline 2\x1b[Aend\x1b[201~b"
    assert decode(keys) == ["a", Paste("line 1\r\nline 2\x1b[Aend"), "b"]


def test_alt_enter_a_lone_escape_and_sequences_nobody_asked_for() -> None:
    assert decode("x\x1b\ry\x1b\nz") == ["x", ALT_ENTER, "y", ALT_ENTER, "z"]
    assert decode("\x1b") == [ESCAPE]
    assert decode("\x1bq") == [ESCAPE, "q"]
    assert decode("\x1b[1;5Cx\x1bOPy") == ["x", "y"]  # Ctrl+Right and F1 as raw text: dropped
    assert decode(["\x1b", 260]) == [ESCAPE, 260]  # a decoded key after Esc


def test_a_paste_stays_open_until_its_end_arrives() -> None:
    decoder = KeyDecoder()
    assert decode("\x1b[200~half", decoder) == []
    assert decoder.in_paste
    assert decode([265, *"of it\x1b[201~"], decoder) == [Paste("halfof it")]  # key codes inside are dropped


def test_a_paste_keeps_its_first_mebibyte() -> None:
    keys = "\x1b[200~" + "x" * (PASTE_MAX_CHARS + 10) + "\x1b[201~"
    assert decode(keys) == [Paste("x" * PASTE_MAX_CHARS)]


@given(st.text(alphabet=st.sampled_from("ab\x1b[2001~\r\n"), max_size=40))
def test_any_pasted_text_but_the_end_marker_comes_back_whole(text: str) -> None:
    if "\x1b[201~" in text:
        return
    assert decode("\x1b[200~" + text + "\x1b[201~") == [Paste(text)]
