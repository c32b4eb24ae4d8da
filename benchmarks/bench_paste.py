"""A paste into the input box: time by paste length, ours against the editor before R-TUI-31.

Run by hand from the repository root: ``python benchmarks/bench_paste.py`` (``--sizes`` takes
other lengths in characters). For each length, a one-line paste goes the way the screen takes
it: every character through ``KeyDecoder`` (bracketed, R-TUI-29), the paste into ``LineEditor``
in one edit, then one redraw of an 80-cell input box, then 100 typed keys each followed by a
redraw (a frame per key, the worst case). The baseline, ``OldEditor`` below, is the editor as
it was: each pasted character a key, each key a redraw that measured the whole line again per
cell. It is timed in the same run up to ``OLD_LIMIT`` characters (its time grows with the cube
of the length); the last column is its time divided by ours.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness9_ref.text import cell_width, char_cells
from harness9_ref.tui import LineEditor
from harness9_ref.tui._keys import KeyDecoder

SIZES = (500, 1_000, 2_000, 4_000, 100_000, 1_000_000)
WIDTH = 80
TYPED = 100
OLD_LIMIT = 4_000  # characters: beyond this the old editor takes minutes


class OldEditor:
    """The baseline: the one-line editor before R-TUI-31, reduced to inserting and drawing."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.cursor = 0

    def insert(self, ch: str) -> None:
        self.chars.insert(self.cursor, ch)
        self.cursor += 1

    def view(self, width: int) -> tuple[str, int]:
        before = self.chars[: self.cursor]
        start = 0
        while cell_width("".join(before[start:])) > width - 1:
            start += 1
        shown: list[str] = []
        cells = 0
        for ch in self.chars[start:]:
            if cells + char_cells(ch) > width:
                break
            shown.append(ch)
            cells += char_cells(ch)
        return "".join(shown), cell_width("".join(before[start:]))


def ours(text: str) -> float:
    started = time.perf_counter()
    decoder, editor = KeyDecoder(), LineEditor()
    for ch in "\x1b[200~" + text + "\x1b[201~":
        for item in decoder.feed(ch):
            editor.paste(getattr(item, "text", ""))
    editor.view(WIDTH - 2, 5)
    for _ in range(TYPED):
        editor.insert("y")
        editor.view(WIDTH - 2, 5)
    return time.perf_counter() - started


def old(text: str) -> float:
    started = time.perf_counter()
    editor = OldEditor()
    for ch in text + "y" * TYPED:
        editor.insert(ch)
        editor.view(WIDTH - 2)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    sizes = parser.parse_args().sizes
    print(f"{'characters':>10}  {'ours (s)':>9}  {'old (s)':>9}  {'old / ours':>10}")
    for size in sizes:
        text = ("0123456789" * (size // 10 + 1))[:size]
        mine = ours(text)
        if size <= OLD_LIMIT:
            baseline = old(text)
            print(f"{size:>10}  {mine:>9.3f}  {baseline:>9.3f}  {baseline / mine:>10.0f}")
        else:
            print(f"{size:>10}  {mine:>9.3f}  {'-':>9}  {'-':>10}")


if __name__ == "__main__":
    main()
