"""Shared test doubles and message builders for the tests and the benchmarks.

Only the standard library and harness9_ref are imported here, so that
``benchmarks/bench_memory.py`` can build its histories with the same code.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Final

from harness9_ref.memory.context import STUB_TEXT, SUMMARY_MARKER
from harness9_ref.schema import (
    CHUNK_DONE,
    CHUNK_TEXT,
    ROLE_ASSISTANT,
    ROLE_SYSTEM,
    ROLE_USER,
    Message,
    StreamChunk,
    ToolCall,
    ToolDefinition,
    Usage,
)

__all__ = [
    "START",
    "Clock",
    "HeldBack",
    "RecordingSummarizer",
    "SummaryReply",
    "assistant",
    "call",
    "ctrl_c_default",
    "is_stub",
    "padded",
    "realistic_history",
    "result",
    "stub",
    "summary_message",
    "system",
    "user",
]


START: Final = 1_700_000_000  # a Clock's first reading unless told otherwise


class Clock:
    """A settable clock to inject where the package reads the time: ``clock.now`` is what it reads."""

    def __init__(self, now: float = START) -> None:
        self.now = float(now)

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: int = 10) -> int:
        self.now += seconds
        return int(self.now)


def system(content: str = "You are a coding agent.") -> Message:
    return Message(ROLE_SYSTEM, content)


def user(content: str) -> Message:
    return Message(ROLE_USER, content)


def padded(text: str, tokens: int) -> Message:
    """A user message of exactly ``tokens`` estimated tokens: ``text`` padded with dots to 4 bytes a token."""
    size = tokens * 4 - len(text.encode("utf-8"))
    if size < 0:
        raise ValueError(f"{text!r} is longer than {tokens} tokens")
    return user(text + "." * size)


def call(call_id: str, name: str = "bash", arguments: str = '{"command":"ls"}') -> ToolCall:
    return ToolCall(call_id, name, arguments)


def assistant(content: str = "", *calls: ToolCall) -> Message:
    return Message(ROLE_ASSISTANT, content, calls)


def result(call_id: str, content: str = "ok") -> Message:
    """A tool result (an observation): a user message answering ``call_id``."""
    return Message(ROLE_USER, content, tool_call_id=call_id)


def stub(call_id: str) -> Message:
    """The result repair inserts for a call that has none."""
    return result(call_id, STUB_TEXT)


def is_stub(msg: Message) -> bool:
    return msg.tool_call_id != "" and msg == stub(msg.tool_call_id)


def summary_message(summary: str) -> Message:
    """The message a successful summarization puts after the system prompt."""
    return user(f"{SUMMARY_MARKER}\n{summary}")


# A reply of RecordingSummarizer's script: the summary text, None for "no message", or an
# exception to raise.
SummaryReply = str | None | Exception


class RecordingSummarizer:
    """A Summarizer that records every request and answers from a script, one reply per call.

    Args:
        replies: what to answer, in order; a str becomes an assistant message with that content.
        delay: seconds to sleep before answering, to exercise the compactor's timeout.

    A request beyond the end of the script raises LookupError, which the compactor records
    as a failure, so a test that expects success also checks ``compactor.failures``.
    """

    def __init__(self, *replies: SummaryReply, delay: float = 0.0) -> None:
        self.requests: list[tuple[list[Message], list[ToolDefinition]]] = []
        self._replies = list(replies)
        self._delay = delay

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message | None, Usage | None]:
        self.requests.append((list(messages), list(available_tools)))
        if self._delay:
            time.sleep(self._delay)
        if not self._replies:
            raise LookupError(f"no scripted reply for request {len(self.requests)}")
        reply = self._replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if reply is None:
            return None, None
        return Message(ROLE_ASSISTANT, reply), None


_PROMPTS = (
    "Fix the failing test in tests/test_parser.py",
    "把 README 里的安装步骤改成中文",
    "Why does `make build` fail on macOS? 🍎",
    "Add a --verbose flag to the CLI and document it",
)
_TOOLS = ("bash", "read_file", "write_file", "grep")


def _tool_output(rng: random.Random) -> str:
    line = rng.choice(("src/parser.py:12: def parse(text):", "错误：找不到文件 config.yaml", "PASS 42 tests"))
    return "\n".join([line] * rng.randint(1, 40))


def realistic_history(n: int, seed: int = 0) -> list[Message]:
    """A system prompt and ``n - 1`` messages shaped like a coding agent's work.

    Each turn is a user prompt, one to four assistant steps each making one to three parallel
    tool calls answered in order, and a closing assistant text. The last turn is cut off at
    ``n`` messages, so it may end with calls that have no results, as after an interruption.
    """
    rng = random.Random(seed)
    msgs = [system("You are harness9, a coding agent. Use the tools to inspect and change files.")]
    next_id = 0
    while len(msgs) < n:
        msgs.append(user(rng.choice(_PROMPTS)))
        for _ in range(rng.randint(1, 4)):
            calls = []
            for _ in range(rng.randint(1, 3)):
                next_id += 1
                command = rng.choice(("ls -la", "pytest -q", "cat pyproject.toml", "git diff"))
                calls.append(call(f"call_{next_id:06d}", rng.choice(_TOOLS), f'{{"command":"{command}"}}'))
            msgs.append(assistant(rng.choice(("", "Let me look.", "I'll run the tests.")), *calls))
            msgs.extend(result(c.id, _tool_output(rng)) for c in calls)
        msgs.append(assistant("Done: the change is in place and the tests pass."))
    return msgs[:n]


def ctrl_c_default() -> None:
    """Give a child process Ctrl+C's default action (a ``preexec_fn``).

    A shell without job control starts background jobs with SIGINT ignored, and a child
    inherits that; a test that stops a program with Ctrl+C must not depend on how its own
    run was started.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class HeldBack:
    """A provider whose streamed reply comes only once ``release`` is set, as a local server's
    after it has read a long prompt; ``asked`` is set when the request is made. Summaries
    (``generate``) come at once."""

    def __init__(self, reply: str = "late") -> None:
        self.reply = reply
        self.asked = threading.Event()
        self.release = threading.Event()

    def generate(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> tuple[Message, None]:
        return assistant("summary"), None

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        self.asked.set()
        self.release.wait(30)
        yield StreamChunk(CHUNK_TEXT, delta=self.reply)
        yield StreamChunk(CHUNK_DONE, message=assistant(self.reply))
