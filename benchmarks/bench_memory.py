"""Time the memory core against the design document's literal algorithms.

Run from the repository root (the standard library is all it needs):

    python benchmarks/bench_memory.py [--sizes 1000 10000 100000]

For each history size it times estimate_tokens, repair_orphaned_tool_pairs,
TokenBudgetCompactor.compact (with a budget of half the history's estimate, so it truncates) and
SlidingWindowCompactor.compact (a window of half the messages), then the same operation as
tests/literal_seed.py transcribes it from the design document, in the same run, after checking
that both give the same output. The literal repair is quadratic, and both literal compactors
call it, so above QUADRATIC_LIMIT messages those baselines are not run: their time is
extrapolated from the largest size that was run, times the square of the size ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness9_ref.memory.context import (
    SlidingWindowCompactor,
    TokenBudgetCompactor,
    estimate_tokens,
    repair_orphaned_tool_pairs,
)
from harness9_ref.schema import Message
from tests import literal_seed
from tests.fakes import realistic_history

DEFAULT_SIZES = (1_000, 10_000, 100_000)
QUADRATIC_LIMIT = 20_000  # the literal repair and compactors are not run on longer histories
MIN_LOOP_SECONDS = 0.2  # each timed loop runs at least this long
REPEATS = 3  # loops per measurement; the fastest is reported
SLOW_CALL_SECONDS = 1.0  # a call this slow is timed once, not REPEATS times


# A pair of zero-argument calls on one history: ours, then the literal seed's.
Calls = tuple[Callable[[], object], Callable[[], object]]


class Operation(NamedTuple):
    name: str
    prepare: Callable[[list[Message]], Calls]  # settings are computed here, outside the timed calls
    quadratic: bool  # the literal version is quadratic in the history length


def _estimate(msgs: list[Message]) -> Calls:
    return lambda: estimate_tokens(msgs), lambda: literal_seed.estimate_tokens(msgs)


def _repair(msgs: list[Message]) -> Calls:
    return lambda: repair_orphaned_tool_pairs(msgs), lambda: literal_seed.repair_orphaned_tool_pairs(msgs)


def _token_budget(msgs: list[Message]) -> Calls:
    budget = estimate_tokens(msgs) // 2
    compactor = TokenBudgetCompactor(budget, 6)
    return lambda: compactor.compact(msgs), lambda: literal_seed.token_budget_compact(msgs, budget, 6)


def _sliding_window(msgs: list[Message]) -> Calls:
    compactor = SlidingWindowCompactor(len(msgs) // 2)
    return lambda: compactor.compact(msgs), lambda: literal_seed.sliding_window_compact(msgs, len(msgs) // 2)


OPERATIONS = (
    Operation("estimate_tokens", _estimate, False),
    Operation("repair_orphaned_tool_pairs", _repair, True),
    Operation("TokenBudgetCompactor.compact", _token_budget, True),
    Operation("SlidingWindowCompactor.compact", _sliding_window, True),
)


def _loop(fn: Callable[[], object], number: int) -> float:
    started = time.perf_counter()
    for _ in range(number):
        fn()
    return time.perf_counter() - started


def seconds_per_call(fn: Callable[[], object]) -> float:
    """The fastest of REPEATS loops, each at least MIN_LOOP_SECONDS long, divided by its calls."""
    number = 1
    elapsed = _loop(fn, number)
    while elapsed < MIN_LOOP_SECONDS:
        number = max(number * 2, int(number * MIN_LOOP_SECONDS / max(elapsed, 1e-9) * 1.1))
        elapsed = _loop(fn, number)
    if elapsed / number >= SLOW_CALL_SECONDS:
        return elapsed / number
    return min([elapsed, *(_loop(fn, number) for _ in range(REPEATS - 1))]) / number


def format_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def run(sizes: Sequence[int]) -> None:
    # The largest size at which each quadratic literal baseline was run, and its time per call.
    measured: dict[str, tuple[int, float]] = {}
    footnotes: list[str] = []
    print(f"{'messages':>9}  {'operation':<31} {'ours':>10} {'literal':>12} {'literal/ours':>13}")
    for n in sizes:
        msgs = realistic_history(n)
        for op in OPERATIONS:
            ours_call, literal_call = op.prepare(msgs)
            ours = seconds_per_call(ours_call)
            if op.quadratic and n > QUADRATIC_LIMIT:
                if op.name not in measured:
                    print(f"{n:>9}  {op.name:<31} {format_seconds(ours):>10} {'not run':>12} {'':>13}")
                    continue
                n0, t0 = measured[op.name]
                literal = t0 * (n / n0) ** 2
                marker = "~"
                footnotes.append(
                    f"~ {op.name} at {n}: the literal version is quadratic, so it was not run above "
                    f"{QUADRATIC_LIMIT} messages; its time is {format_seconds(t0)} at {n0} x ({n}/{n0})^2."
                )
            else:
                if ours_call() != literal_call():
                    raise AssertionError(f"{op.name} differs from the literal seed on {n} messages")
                literal = seconds_per_call(literal_call)
                marker = ""
                if op.quadratic:
                    measured[op.name] = (n, literal)
            print(
                f"{n:>9}  {op.name:<31} {format_seconds(ours):>10} {marker + format_seconds(literal):>12} "
                f"{marker + f'{literal / ours:.1f}x':>13}",
                flush=True,
            )
    for note in footnotes:
        print(note)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES, help="history lengths in messages")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; best of {REPEATS} loops of >= {MIN_LOOP_SECONDS} s; times are per call.")
    run(args.sizes)


if __name__ == "__main__":
    main()
