"""SSE decoding throughput by line length: flat for ours, falling for a decoder that rebuilds the line.

Run by hand from the repository root: ``python benchmarks/bench_sse.py`` (``--sizes`` takes
other line lengths in bytes). For each line length it decodes a body of one ``data:`` line of
that length per event (at least ``BODY_BYTES`` in all, one line when the line is longer), fed
in reads of 64 KiB as the transport delivers them, with ``SSEDecoder`` (R-PRV-30, its bounds
raised above the longest line) and with ``QuadraticDecoder`` below, the decoder as it was
before R-PRV-30, which joins the unfinished line to each new piece. Both are timed in the same
run, alternating, the best of ``REPEATS`` kept; a run slower than ``SLOW`` seconds is timed once.

The columns: MB/s of ours, ours relative to its own speed on the shortest lines (flat means
close to 1), MB/s of the rebuilding decoder, and its time divided by ours.
"""

from __future__ import annotations

import argparse
import codecs
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness9_ref.provider import SSEDecoder

READ_SIZE = 64 * 1024  # what one read of the transport asks for
BODY_BYTES = 16 * 1000 * 1000
SIZES = (1_000, 10_000, 100_000, 1_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000)
REPEATS = 3
SLOW = 2.0  # seconds: a run this slow is not repeated


class QuadraticDecoder:
    """The baseline: the line splitting of the decoder before R-PRV-30 (UTF-8, LF line ends,
    ``data:`` lines and dispatch), which rebuilt the unfinished line at every piece."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[str]:
        lines = self._utf8.decode(chunk).split("\n")
        lines[0] = self._line + lines[0]
        self._line = lines.pop()
        events = []
        for line in lines:
            if line.startswith("data: "):
                self._data.append(line[6:])
            elif not line and self._data:
                events.append("\n".join(self._data))
                self._data = []
        return events


def body_of(line_bytes: int) -> list[bytes]:
    """Events of one ``data:`` line of ``line_bytes`` bytes (its line end included), in reads."""
    event = b"data: " + b"x" * (line_bytes - 8) + b"\n\n"
    body = event * max(1, BODY_BYTES // len(event))
    return [body[i : i + READ_SIZE] for i in range(0, len(body), READ_SIZE)]


def ours(chunks: list[bytes], longest: int) -> int:
    decoder = SSEDecoder(line_max=longest, event_max=longest)
    return sum(len(decoder.feed(c)) for c in chunks) + len(decoder.close())


def quadratic(chunks: list[bytes], longest: int) -> int:
    """``longest`` is not needed: the baseline has no bounds."""
    decoder = QuadraticDecoder()
    return sum(len(decoder.feed(c)) for c in chunks)


def best_seconds(chunks: list[bytes], longest: int, *runs: Callable[[list[bytes], int], int]) -> list[float]:
    """The best time of each run on ``chunks``, the runs alternating; one that takes SLOW
    seconds runs once."""
    best = [float("inf")] * len(runs)
    done = [False] * len(runs)
    for _ in range(REPEATS):
        for i, run in enumerate(runs):
            if done[i]:
                continue
            start = time.perf_counter()
            events = run(chunks, longest)
            took = time.perf_counter() - start
            assert events >= 1
            best[i] = min(best[i], took)
            done[i] = took >= SLOW
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES, help="line lengths in bytes")
    sizes = parser.parse_args().sizes
    longest = max(sizes)
    print(f"reads of {READ_SIZE} bytes; bodies of at least {BODY_BYTES / 1e6:g} MB")
    print(f"{'line':>12} {'body MB':>8} {'ours MB/s':>10} {'vs shortest':>12} {'rebuild MB/s':>13} {'rebuild/ours':>13}")
    first = 0.0
    for size in sizes:
        chunks = body_of(size)
        mb = sum(map(len, chunks)) / 1e6
        ours_s, old_s = best_seconds(chunks, longest, ours, quadratic)
        first = first or mb / ours_s
        print(
            f"{size:>12,} {mb:>8.1f} {mb / ours_s:>10.1f} {mb / ours_s / first:>12.2f}"
            f" {mb / old_s:>13.1f} {old_s / ours_s:>13.1f}"
        )


if __name__ == "__main__":
    main()
