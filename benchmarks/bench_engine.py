"""Time what the engine's run loop costs per turn, apart from the provider call.

Run from the repository root (the standard library is all it needs):

    python benchmarks/bench_engine.py [--sizes 100 1000 10000] [--turns 10]

For each size it stores that many messages in a MemorySession, then runs one prompt of
``--turns`` provider calls (each but the last making one tool call) with a ScriptedProvider and a
ScriptedRegistry. The time spent inside the provider's stream is measured and subtracted, so what
remains is the loop itself: loading the history, estimating tokens, compacting, building events,
running the (scripted) tool and saving. It is shown per turn and as a fraction of a 500 ms provider
call, a fast answer from a hosted model.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness9_ref.engine import AgentEngine, EventType, LiteralContext
from harness9_ref.memory.context import Compactor, new_token_budget_compactor
from harness9_ref.memory.storage import MemorySession
from harness9_ref.schema import Message, StreamChunk, ToolCall, ToolDefinition, Usage
from harness9_ref.testing import Reply, ScriptedProvider, ScriptedRegistry
from harness9_ref.tools import BASH_TOOL, READ_FILE_TOOL
from tests.fakes import realistic_history

DEFAULT_SIZES = (100, 1_000, 10_000)
DEFAULT_TURNS = 10
PROVIDER_CALL_SECONDS = 0.5  # the provider call the overhead is compared with
REPEATS = 5  # runs per setting; the fastest is reported
CONTEXT_WINDOW = 128_000


class TimedProvider:
    """Wraps a provider and adds up the time spent inside its streams."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.seconds = 0.0

    def generate(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        return self.inner.generate(messages, tools)

    def generate_stream(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        started = time.perf_counter()
        chunks = iter(self.inner.generate_stream(messages, tools))
        self.seconds += time.perf_counter() - started
        while True:
            started = time.perf_counter()
            try:
                chunk = next(chunks)
            except StopIteration:
                self.seconds += time.perf_counter() - started
                return
            self.seconds += time.perf_counter() - started
            yield chunk


def script(turns: int) -> list[Reply]:
    calls = [(ToolCall(f"call_{i}", "bash", '{"command":"ls -la"}'),) for i in range(turns - 1)]
    steps = [Reply(Message("assistant", "Let me look.", c), Usage(5000, 20)) for c in calls]
    return [*steps, Reply(Message("assistant", "Done: the change is in place."), Usage(5000, 10))]


def overhead_per_turn(stored: list[Message], turns: int, make_compactor: Callable[[], Compactor | None]) -> float:
    """Seconds per turn spent outside the provider, fastest of REPEATS runs."""
    best = float("inf")
    for _ in range(REPEATS):
        session = MemorySession()
        session.add_messages(stored)
        provider = TimedProvider(ScriptedProvider(script(turns)))
        registry = ScriptedRegistry([READ_FILE_TOOL, BASH_TOOL], {"bash": "total 8\n-rw-r--r-- 1 me me 42 README.md"})
        engine = AgentEngine(
            provider,
            registry,
            session=session,
            compactor=make_compactor(),
            context=LiteralContext(CONTEXT_WINDOW),
            max_turns=turns,
        )
        started = time.perf_counter()
        events = list(engine.run_stream("Fix the failing test in tests/test_parser.py"))
        elapsed = time.perf_counter() - started
        if events[-1].type is not EventType.DONE:
            raise SystemExit(f"the run failed: {events[-1].to_dict()}")
        best = min(best, (elapsed - provider.seconds) / turns)
    return best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="stored messages")
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS, help="provider calls per run")
    args = parser.parse_args(argv)
    settings: list[tuple[str, Callable[[], Compactor | None]]] = [
        ("none", lambda: None),
        (f"token budget ({CONTEXT_WINDOW // 1000}K window)", lambda: new_token_budget_compactor(CONTEXT_WINDOW)),
    ]
    print(f"{args.turns} turns per run, fastest of {REPEATS} runs; provider time subtracted")
    print(f"{'messages':>9}  {'compactor':<26} {'per turn':>10}  {'of a 500 ms call':>16}")
    for size in args.sizes:
        stored = realistic_history(size + 1)[1:]  # the system prompt is never stored
        for name, make in settings:
            seconds = overhead_per_turn(stored, args.turns, make)
            share = seconds / PROVIDER_CALL_SECONDS
            print(f"{size:>9,}  {name:<26} {seconds * 1000:>8.3f} ms  {share:>15.3%}")


if __name__ == "__main__":
    main()
