"""Measure long sessions in a small context window: the document's literal engine against long-session mode.

Run from the repository root (the standard library is all it needs; part 3 also needs git):

    python benchmarks/bench_long_session.py [--prompts 500] [--baseline-prompts 500] [--window 10000]
    python benchmarks/bench_long_session.py --tiers [--prompts 500] [--window 32000] [--baseline 85b9761]

Part 1 plays a scripted session of ``--prompts`` prompts through ``AgentEngine`` with a real
``SQLiteSession`` on a temporary file, a new Manager and a new engine for every prompt (as
``harness9-ref run --resume`` does). The prompts are a coding agent's mix: questions answered in
a few hundred bytes, files read (about 3 KB), a grep followed by a read, a diff, and every tenth
prompt a verbose test run whose result is 40 KB. A deterministic provider answers the chat
requests and the summarizer's (recognised by ``SUMMARY_SYSTEM_PROMPT``); a wrapper records every
request: its estimate (messages plus tool definitions), whether it was a summarizer request and
whether it used the incremental prompt. The session is played twice, in a fresh database each:

- literal: ``compactor=new_summarization_compactor(provider, window)``, long-session mode off
  (SPEC R-ENG, R-SUM: every turn over budget summarises the whole stored history again);
- long-session: as ``harness9_ref.cli._wiring.build_engine`` wires it,
  ``new_summarization_compactor(provider, window, request_limit=window // 2)`` and the
  ``LongSession`` context part (SPEC sections 4.5, 4.6, 5.4 and 8).

Part 2 stores ``--stored`` messages of the same mix in a session with a checkpoint covering all
but the newest ~20, and times runs of one prompt of ``--turns`` provider calls with an instant
provider, the provider's time subtracted (as bench_engine.py does), in both modes on copies of
the same database file.

Part 3 (``--tiers``, alone) compares this tree's long-session tiers (SPEC R-LONG-10 … R-LONG-17:
stale tool results cleared before any summary, figures anchored on the provider's last count)
with the long-session mode of ``--baseline`` (default 85b9761, the mode before them). It plays
a tool-heavy session (most prompts grep, read files, edit and run tests; about nine tenths of
the stored bytes are tool results) through ``AgentEngine`` with a real ``SQLiteSession``, with a
new engine per prompt and with one engine (``--engine``). The baseline's ``harness9_ref/`` is
extracted with ``git archive`` and each session runs in its own process, whose ``harness9_ref``
is that tree's; a third run gives the current engine the server's count as its token counter.
The provider counts ``usage.input_tokens`` as a server would (``server_count``: a regex split into
words, numbers and punctuation, a per-message overhead and the tools' definitions), and a probe
records, per request, that count, the token update the engine announced before it, whether it
starts with the previous chat request's messages, and whether its turn compacted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import functools
import importlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness9_ref
from harness9_ref.engine import AgentEngine, Event, EventType
from harness9_ref.memory.context import (
    SUMMARY_SYSTEM_PROMPT,
    estimate_tokens,
    estimate_tool_tokens,
    new_summarization_compactor,
)
from harness9_ref.memory.storage import Checkpoint, Manager, Session, message_anchor
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
from harness9_ref.tools import BASH_TOOL, READ_FILE_TOOL

DEFAULT_PROMPTS = 500
DEFAULT_BASELINE_PROMPTS = 500
DEFAULT_WINDOW = 10_000
DEFAULT_STORED = 10_000
DEFAULT_TURNS = 10
UNCOVERED = 20  # part 2: stored messages the checkpoint leaves out (about)
REPEATS = 5  # part 2: runs per mode; the fastest is reported
LARGE_RESULT_BYTES = 40 * 1024  # every tenth prompt's test run
INCREMENTAL_OPENING = "<previous-summary>"
TOOLS = [READ_FILE_TOOL, BASH_TOOL]
TARGET_INPUT_RATIO = 3.0  # summarizer input at most 3x the stored history
TARGET_OVERHEAD_SECONDS = 0.002  # 2 ms per turn at 10,000 stored messages

# ---------------------------------------------------------------------------------------------
# The scripted session: prompts, tool results, replies and summaries, all deterministic.

MODULES = ("parser", "lexer", "session", "render", "config", "cache", "cli", "engine", "tokens", "repair")


def module(i: int) -> str:
    return MODULES[i % len(MODULES)]


@dataclass(frozen=True)
class Plan:
    """One prompt: its text and the tool calls of each step before the final answer."""

    text: str
    steps: tuple[tuple[tuple[str, str], ...], ...]  # per step: (tool name, arguments JSON) pairs


def read(path: str) -> tuple[str, str]:
    return ("read_file", json.dumps({"path": path}))


def bash(command: str) -> tuple[str, str]:
    return ("bash", json.dumps({"command": command}))


def plan(i: int) -> Plan:
    """The i-th prompt of part 1's session (0-based); the mix repeats every ten prompts."""
    name = module(i)
    kind = i % 10
    if kind in (1, 5, 8):
        text = f"Open src/{name}.py and tell me how {name}_step handles an empty input (prompt {i})."
        return Plan(text, ((read(f"src/{name}.py"),),))
    if kind == 3:
        text = f"Where is {name}_step called from? Show me the caller (prompt {i})."
        return Plan(text, ((bash(f"grep -rn {name}_step src tests"),), (read(f"src/{module(i + 3)}.py"),)))
    if kind == 6:
        text = f"Show me what changed in src/{name}.py since the last commit (prompt {i})."
        return Plan(text, ((bash("git diff"),),))
    if kind == 9:
        return Plan(f"Run the whole test suite verbosely and tell me what fails (prompt {i}).", ((bash("pytest -v"),),))
    return Plan(question(i), ())


def question(i: int) -> str:
    """A prompt answered without tools."""
    name = module(i)
    questions = (
        f"Why does {name}_step copy its input before sorting it? Keep it short (prompt {i}).",
        f"Rename the helper _{name}_key to _sort_key in src/{name}.py and keep the behaviour (prompt {i}).",
        f"Is there a cheaper way to test {name}_step than building the whole fixture (prompt {i})?",
        f"Summarise where we are with the {name} refactor before I go to lunch (prompt {i}).",
    )
    return questions[(i // 10) % len(questions)]


def tool_heavy_plan(i: int) -> Plan:
    """The i-th prompt of part 3's session: most prompts read, grep and run tests, as an agent works."""
    name, other = module(i), module(i + 3)
    kind = i % 10
    if kind in (0, 4, 7):  # a fix: find the code, read it, edit it, run its tests
        text = f"Make {name}_step keep duplicate items and check that its tests still pass (prompt {i})."
        edit = bash(f"sed -i 's/set(items)/list(items)/' src/{name}.py")
        find, run = bash(f"grep -rn {name}_step src tests"), bash(f"pytest tests/test_{name}.py")
        return Plan(text, ((find,), (read(f"src/{name}.py"),), (edit,), (run,)))
    if kind == 2:  # a failing suite: the verbose run, the test, the code
        text = f"The suite fails since this morning; find out why (prompt {i})."
        return Plan(text, ((bash("pytest -v"),), (read(f"tests/test_{name}.py"),), (read(f"src/{name}.py"),)))
    if kind in (1, 8):  # two files side by side, read in one step
        text = f"Compare how src/{name}.py and src/{other}.py sort their items (prompt {i})."
        return Plan(text, ((read(f"src/{name}.py"), read(f"src/{other}.py")),))
    if kind in (3, 6):  # a review of the work so far
        text = f"Review what we changed today before I commit it (prompt {i})."
        return Plan(text, ((bash("git diff"),), (bash("git log --oneline -20"),)))
    return Plan(question(i), ())


@dataclass(frozen=True)
class Outputs:
    """The sizes of the tool results a session gets, in bytes (about: whole lines)."""

    source: int  # a file of src/ read
    test_file: int  # a file of tests/ read
    verbose_run: int  # `pytest -v`


PART1_OUTPUTS = Outputs(3000, 3000, LARGE_RESULT_BYTES)
TOOL_HEAVY_OUTPUTS = Outputs(6000, 4000, 16 * 1024)


def source_file(path: str, salt: int, size: int) -> str:
    stem = Path(path).stem
    lines = [f'"""The {stem} module (revision {salt})."""', "", "from __future__ import annotations", ""]
    k = 0
    while sum(len(line) + 1 for line in lines) < size:
        lines += [
            f"def {stem}_step_{k}(items: list[str], limit: int = {k + 8}) -> list[str]:",
            f'    """Step {k} of the {stem} pipeline: keep the first {k + 8} items, sorted."""',
            "    if not items:",
            "        return []",
            f"    return sorted(items, key=_{stem}_key)[:limit]",
            "",
        ]
        k += 1
    return "\n".join(lines)


def pytest_output(salt: int, size: int, verbose: bool) -> str:
    """pytest's output: a line per test when verbose, else a line of dots per file."""
    out = ["============================= test session starts ==============================", ""]
    length = sum(len(line) + 1 for line in out)
    n = 0
    while length < size:
        if verbose:
            status = "FAILED" if (n * 7 + salt) % 97 == 0 else "PASSED"
            line = f"tests/test_{module(n // 20)}.py::test_{module(n)}_case_{n:04d} {status}  [{n % 100:3d}%]"
        else:
            line = f"tests/test_{module(n)}.py {'.' * (20 + (n + salt) % 40)}  [{min(100, 10 * n + 10):3d}%]"
        out.append(line)
        length += len(line) + 1
        n += 1
    cases = n if verbose else n * 40
    out.append(f"=========== {cases - cases // 97} passed, {cases // 97} failed in {salt % 50 + 10}.42s ===========")
    return "\n".join(out)


def tool_result(name: str, arguments: str, salt: int, outputs: Outputs = PART1_OUTPUTS) -> str:
    """The observation of one call: a test run, a file, a grep, a diff or a log, sized by ``outputs``."""
    args = json.loads(arguments)
    if name == "read_file":
        path = str(args["path"])
        return source_file(path, salt, outputs.test_file if path.startswith("tests/") else outputs.source)
    command = str(args["command"])
    if command.startswith("pytest"):
        verbose = command == "pytest -v"
        return pytest_output(salt, outputs.verbose_run if verbose else 2000, verbose)
    if command.startswith("grep"):
        word = command.split()[2]
        hits = (f"src/{module(salt + k)}.py:{40 + 7 * k}:    result = {word}(items, limit={k})" for k in range(12))
        return "\n".join(hits)
    if command.startswith("sed"):
        return "(no output)"
    if command.startswith("git log"):
        return "\n".join(f"{(salt * 7919 + k * 104729) % 16**7:07x} Sort {module(salt + k)} items by one key" for k in range(20))
    hunks = []
    for k in range(14):
        hunks += [
            f"@@ -{10 + 20 * k},6 +{10 + 20 * k},7 @@",
            f"-    return sorted(items)[:{k}]",
            f"+    return sorted(items, key=_sort_key)[:{k}]",
        ]
    return "diff --git a/src/x.py b/src/x.py\n" + "\n".join(hunks)


def answer(prompt: str, after_tools: bool, salt: int) -> str:
    """A final reply of a few hundred bytes."""
    what = "the output above" if after_tools else "the code we have looked at"
    return (
        f"Looking at {what}: the function copies its input so that the caller's list is never "
        f"reordered, then sorts with the module's key function and cuts at the limit. An empty "
        f"input returns early with an empty list, so there is no special case further down. I "
        f"would keep the copy: it costs O(n) next to the O(n log n) sort, and three callers rely "
        f"on their list staying as it was. Next I can add a regression test for the empty case "
        f"(note {salt}). You asked: {prompt[:80]}"
    )


def summarize(prompt: str) -> str:
    """A summarizer's reply: the five headings, about 1.5 KB whatever the input (a real summary's size)."""
    incremental = prompt.startswith(INCREMENTAL_OPENING)
    previous = 0
    if incremental:
        marker = "**Progress:** "
        start = prompt.find(marker)
        if start >= 0:
            digits = prompt[start + len(marker) :].split(" ", 1)[0]
            previous = int(digits) if digits.isdigit() else 0
    items = prompt.count("\n[") + (1 if "]: " in prompt else 0)
    total = previous + items
    files = ", ".join(f"src/{m}.py" for m in MODULES)
    return (
        "**Goal:** Refactor the sorting helpers of the project so that every module uses one key "
        "function, without changing behaviour, and keep the test suite green.\n"
        f"**Progress:** {total} messages summarised so far. The helpers were read in {files}; "
        "callers were found with grep; the diff renames _<module>_key to _sort_key; the verbose "
        "test runs pass except a few cases that depend on the old key order.\n"
        "**Key Decisions:** Keep the defensive copy of the input (callers rely on their list "
        "staying as it was); return early on an empty input; rename one module at a time and run "
        "the suite after each.\n"
        "**Next Steps:** Fix the failing cases that depend on the old order, add a regression test "
        "for the empty input, then remove the old key functions.\n"
        "**Critical Context:** Run the tests with `pytest -v`; the project uses Python 3.11 and "
        "no new dependencies; limits default to the step number plus 8; the user wants short "
        "answers and one module per change; failing tests so far are the ones whose case number "
        "is a multiple of 97 in the verbose output. " + "The files are " + files + "."
    )


def is_summarizer_request(messages: Sequence[Message]) -> bool:
    return bool(messages) and messages[0].role == ROLE_SYSTEM and messages[0].content == SUMMARY_SYSTEM_PROMPT


class SessionProvider:
    """Plays the scripted session: finds the prompt in the view and answers its next step."""

    def __init__(self, plans: dict[str, tuple[int, Plan]]) -> None:
        self.plans = plans

    def reply(self, messages: Sequence[Message]) -> Message:
        if is_summarizer_request(messages):
            return Message(ROLE_ASSISTANT, summarize(messages[-1].content if len(messages) > 1 else ""))
        steps_done = 0
        for msg in reversed(messages):
            if msg.role == ROLE_ASSISTANT and msg.tool_calls:
                steps_done += 1
            elif msg.role == ROLE_USER and not msg.tool_call_id and msg.content in self.plans:
                i, p = self.plans[msg.content]
                if steps_done < len(p.steps):
                    calls = tuple(
                        ToolCall(f"call_{i}_{steps_done}_{k}", name, args)
                        for k, (name, args) in enumerate(p.steps[steps_done])
                    )
                    return Message(ROLE_ASSISTANT, f"Let me check that (step {steps_done + 1}).", calls)
                return Message(ROLE_ASSISTANT, answer(msg.content, bool(p.steps), i))
        return Message(ROLE_ASSISTANT, answer("(the prompt is no longer in view)", False, len(messages)))

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        reply = self.reply(messages)
        return reply, Usage(estimate_tokens(messages) + estimate_tool_tokens(available_tools), estimate_tokens([reply]))

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        reply, usage = self.generate(messages, available_tools)
        words = reply.content.split(" ")
        for start in range(0, len(words), 16):  # a few text deltas, as a real stream
            piece = " ".join(words[start : start + 16])
            yield StreamChunk(CHUNK_TEXT, delta=piece + (" " if start + 16 < len(words) else ""))
        yield StreamChunk(CHUNK_DONE, message=reply, usage=usage)


class SessionRegistry:
    """``read_file`` and ``bash``, answered by ``tool_result``."""

    def __init__(self, outputs: Outputs = PART1_OUTPUTS) -> None:
        self.calls = 0
        self.outputs = outputs

    def available_tools(self) -> list[ToolDefinition]:
        return list(TOOLS)

    def execute(self, name: str, arguments: str) -> str:
        self.calls += 1
        return tool_result(name, arguments, self.calls, self.outputs)


def session_plans(prompts: int, planner: Callable[[int], Plan] = plan) -> dict[str, tuple[int, Plan]]:
    plans: dict[str, tuple[int, Plan]] = {}
    for i in range(prompts):
        p = planner(i)
        plans[p.text] = (i, p)
    return plans


def prompt_messages(i: int, provider: SessionProvider, registry: SessionRegistry) -> list[Message]:
    """The messages the engine stores for prompt ``i`` (without running the engine)."""
    msgs = [Message(ROLE_USER, plan(i).text)]
    while True:
        reply = provider.reply(msgs)
        msgs.append(reply)
        if not reply.tool_calls:
            return msgs
        for call in reply.tool_calls:
            msgs.append(Message(ROLE_USER, registry.execute(call.name, call.arguments), tool_call_id=call.id))


# ---------------------------------------------------------------------------------------------
# Recording


@dataclass(frozen=True)
class Request:
    estimate: int
    summarizer: bool
    incremental: bool


@dataclass
class Recorder:
    """Wraps a provider: records every request and adds up the time spent inside it."""

    inner: SessionProvider | InstantProvider
    requests: list[Request] = field(default_factory=list)
    seconds: float = 0.0

    def _record(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        summarizer = is_summarizer_request(messages)
        incremental = summarizer and len(messages) > 1 and messages[1].content.startswith(INCREMENTAL_OPENING)
        self.requests.append(Request(estimate_tokens(messages) + estimate_tool_tokens(tools), summarizer, incremental))

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        started = time.perf_counter()
        self._record(messages, available_tools)
        try:
            return self.inner.generate(messages, available_tools)
        finally:
            self.seconds += time.perf_counter() - started

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        started = time.perf_counter()
        self._record(messages, available_tools)
        chunks = iter(self.inner.generate_stream(messages, available_tools))
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


def make_engine(
    provider: Recorder | Probe,
    registry: SessionRegistry | InstantRegistry,
    session: Session,
    window: int,
    long: bool,
    max_turns: int = 50,
    counter: Probe | None = None,
) -> AgentEngine:
    """Literal mode (the document's engine) or long-session mode as the CLI wires it.

    ``counter`` is the token counter of R-LONG-10. A baseline tree whose engine predates its
    parts (no ``LongSession`` to give it) takes the mode as flags, and the counter only with one.
    """
    if long:  # harness9_ref.cli._wiring.build_engine
        compactor = new_summarization_compactor(provider, window, request_limit=window // 2)
    else:
        compactor = new_summarization_compactor(provider, window)
    engine_package = importlib.import_module("harness9_ref.engine")
    parts: dict[str, Any]
    if hasattr(engine_package, "LongSession"):
        context = engine_package.LongSession(window, counter=counter) if long else engine_package.LiteralContext(window)
        parts = {"context": context}
    else:
        parts = {"context_window": window, "long_session": long, **({} if counter is None else {"token_counter": counter})}
    return AgentEngine(provider, registry, session=session, compactor=compactor, max_turns=max_turns, **parts)


# ---------------------------------------------------------------------------------------------
# Part 1: the scripted session


@dataclass
class SessionResult:
    mode: str
    prompts: int
    stored_messages: int
    stored_tokens: int
    requests: list[Request]
    cumulative: list[int]  # summarizer input tokens after each prompt
    wall: float

    @property
    def summaries(self) -> list[Request]:
        return [r for r in self.requests if r.summarizer]

    @property
    def summary_input(self) -> int:
        return sum(r.estimate for r in self.summaries)

    @property
    def input_ratio(self) -> float:
        return self.summary_input / self.stored_tokens if self.stored_tokens else 0.0

    @property
    def incremental(self) -> tuple[int, int]:
        later = self.summaries[1:]
        return sum(1 for r in later if r.incremental), len(later)

    @property
    def largest(self) -> int:
        return max((r.estimate for r in self.requests), default=0)


def play_session(prompts: int, window: int, long: bool, folder: Path) -> SessionResult:
    plans = session_plans(prompts)
    provider = Recorder(SessionProvider(plans))
    registry = SessionRegistry()
    db = folder / ("long.db" if long else "literal.db")
    with Manager(db) as manager:
        session_id = manager.new_session().session_id
    cumulative: list[int] = []
    total = 0
    seen = 0
    started = time.perf_counter()
    for i in range(prompts):
        with Manager(db) as manager:  # as `harness9-ref run --resume`: a new process per prompt
            engine = make_engine(provider, registry, manager.open_session(session_id), window, long)
            events = list(engine.run_stream(plan(i).text))
        if events[-1].type is not EventType.DONE:
            raise SystemExit(f"prompt {i} failed: {events[-1].to_dict()}")
        total += sum(r.estimate for r in provider.requests[seen:] if r.summarizer)
        seen = len(provider.requests)
        cumulative.append(total)
    wall = time.perf_counter() - started
    with Manager(db) as manager:
        stored = manager.open_session(session_id).get_messages(0)
    mode = "long-session" if long else "literal"
    return SessionResult(mode, prompts, len(stored), estimate_tokens(stored), provider.requests, cumulative, wall)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def part1(args: argparse.Namespace, folder: Path) -> None:
    window = args.window
    print(f"Part 1: a scripted session in a {window:,}-token window (budget {window * 80 // 100:,}), SQLiteSession,")
    print("        a new engine per prompt; every 10th prompt returns a 40 KB tool result")
    if args.baseline_prompts < args.prompts:
        only = args.baseline_prompts
        print(f"        (the literal baseline plays only the first {only} prompts: see --baseline-prompts)")
    literal = play_session(args.baseline_prompts, window, False, folder)
    long = play_session(args.prompts, window, True, folder)
    print()
    print(
        f"{'mode':<13} {'prompts':>7} {'stored history':>21} {'summaries':>9} {'summ. input':>15} {'/stored':>8}"
        f" {'incremental':>13} {'largest':>8} {'>window summ+chat':>19} {'wall':>7}"
    )
    for r in (literal, long):
        inc, later = r.incremental
        over_summ = sum(1 for q in r.requests if q.estimate > window and q.summarizer)
        over_chat = sum(1 for q in r.requests if q.estimate > window and not q.summarizer)
        stored = f"{r.stored_messages:,} msg {r.stored_tokens:,} tok"
        share = f"{inc / later:.0%}" if later else "-"
        print(
            f"{r.mode:<13} {r.prompts:>7} {stored:>21} {len(r.summaries):>9} {r.summary_input:>11,} tok"
            f" {r.input_ratio:>7.2f}x {f'{inc}/{later}':>8} {share:>4} {r.largest / window:>7.2f}w"
            f" {f'{over_summ}+{over_chat} of {len(r.requests)}':>19} {r.wall:>5.1f} s"
        )
    print("  stored history: what the session holds at the end (estimate_tokens); summ. input: the estimates")
    print("  of all summarizer requests; incremental: summaries after the first that used <previous-summary>;")
    print("  largest: the largest request (messages + tools) in windows; >window: requests above the window")
    n = min(literal.prompts, long.prompts)
    lit_n, long_n = literal.cumulative[n - 1], long.cumulative[n - 1]
    print()
    print(
        f"summarizer input over the first {n} prompts: literal {lit_n:,} tok, long-session {long_n:,} tok;"
        f" long/literal = {long_n / lit_n if lit_n else 0:.4f} (1/{lit_n / long_n if long_n else 0:,.0f})"
    )
    print()
    inc, later = long.incremental
    above = sum(1 for q in long.requests if q.estimate > window)
    print(f"targets (long-session, {long.prompts} prompts):")
    print(
        f"  summarizer input <= {TARGET_INPUT_RATIO:g}x stored history:  {long.summary_input:,}"
        f" / {long.stored_tokens:,} = {long.input_ratio:.2f}x  {verdict(long.input_ratio <= TARGET_INPUT_RATIO)}"
    )
    print(f"  every summary after the first incremental: {inc}/{later}  {verdict(inc == later)}")
    print(
        f"  no request above the window:               {above} of {len(long.requests)},"
        f" largest {long.largest:,} tok  {verdict(above == 0)}"
    )


# ---------------------------------------------------------------------------------------------
# Part 2: engine overhead per turn at 10,000 stored messages


class InstantProvider:
    """Answers at once: ``turns - 1`` steps calling ``bash``, then a final answer; summaries fixed."""

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.chat = 0

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        if is_summarizer_request(messages):
            return Message(ROLE_ASSISTANT, SUMMARY_TEXT), Usage(5000, 400)
        self.chat += 1
        if self.chat < self.turns:
            call = ToolCall(f"call_bench_{self.chat}", "bash", '{"command":"ls -la"}')
            return Message(ROLE_ASSISTANT, "Let me look.", (call,)), Usage(5000, 20)
        return Message(ROLE_ASSISTANT, "Done: the change is in place."), Usage(5000, 10)

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        reply, usage = self.generate(messages, available_tools)
        if reply.content:
            yield StreamChunk(CHUNK_TEXT, delta=reply.content)
        yield StreamChunk(CHUNK_DONE, message=reply, usage=usage)


class InstantRegistry:
    def available_tools(self) -> list[ToolDefinition]:
        return list(TOOLS)

    def execute(self, name: str, arguments: str) -> str:
        return "total 8\n-rw-r--r-- 1 me me 42 README.md"


SUMMARY_TEXT = summarize("")


def build_stored(count: int, db: Path) -> tuple[int, int, int]:
    """A session of about ``count`` messages of the mix, and a checkpoint leaving ~UNCOVERED out.

    Returns the number of messages, their estimate and ``covered``.
    """
    msgs: list[Message] = []
    provider = SessionProvider(session_plans((count // 2) + 10))
    registry = SessionRegistry()
    i = 0
    while len(msgs) < count:
        msgs.extend(prompt_messages(i, provider, registry))
        i += 1
    covered = len(msgs) - UNCOVERED
    while msgs[covered].tool_call_id:  # R-CKP-5: the first uncovered message is not a result
        covered -= 1
    with Manager(db) as manager:
        session = manager.new_session()
        for start in range(0, len(msgs), 1000):
            session.add_messages(msgs[start : start + 1000])
        session.save_checkpoint(Checkpoint(covered, message_anchor(msgs[covered - 1]), SUMMARY_TEXT))
    return len(msgs), estimate_tokens(msgs), covered


def overhead(db: Path, folder: Path, window: int, turns: int, long: bool, repeats: int) -> tuple[float, int, int]:
    """Seconds per turn outside the provider, fastest of ``repeats`` runs, each on a fresh copy of ``db``.

    Also the summarizer requests and compaction events of the last run.
    """
    best = float("inf")
    summaries = compactions = 0
    for n in range(repeats):
        copy = folder / f"copy-{'long' if long else 'literal'}-{n}.db"
        shutil.copyfile(db, copy)
        with Manager(copy) as manager:
            session = manager.list_sessions()[0].id
            provider = Recorder(InstantProvider(turns))
            stored = manager.open_session(session)
            engine = make_engine(provider, InstantRegistry(), stored, window, long, max_turns=turns)
            started = time.perf_counter()
            events = list(engine.run_stream("Fix the failing test in tests/test_parser.py"))
            elapsed = time.perf_counter() - started
        copy.unlink()
        if events[-1].type is not EventType.DONE:
            raise SystemExit(f"the run failed: {events[-1].to_dict()}")
        best = min(best, (elapsed - provider.seconds) / turns)
        summaries = sum(1 for r in provider.requests if r.summarizer)
        compactions = sum(1 for e in events if e.type is EventType.COMPACTION)
    return best, summaries, compactions


def part2(args: argparse.Namespace, folder: Path) -> None:
    db = folder / "stored.db"
    started = time.perf_counter()
    count, tokens, covered = build_stored(args.stored, db)
    built = time.perf_counter() - started
    print(f"Part 2: engine overhead per turn, {count:,} stored messages of the same mix ({tokens:,} tokens),")
    print(f"        a checkpoint covering {covered:,} (built in {built:.1f} s); one prompt of {args.turns} provider")
    print(
        f"        calls, instant provider, provider time subtracted, fastest of {args.repeats} runs, each on a"
        " fresh copy of the file"
    )
    literal = overhead(db, folder, args.window, args.turns, False, args.repeats)
    long = overhead(db, folder, args.window, args.turns, True, args.repeats)
    print()
    print(f"{'mode':<13} {'per turn':>12} {'summarizer requests':>20} {'compaction events':>18}")
    for name, (seconds, summaries, compactions) in (("literal", literal), ("long-session", long)):
        print(f"{name:<13} {seconds * 1000:>9.3f} ms {summaries:>20} {compactions:>18}")
    print(f"literal/long-session: {literal[0] / long[0]:,.0f}x")
    print()
    print(
        f"target: long-session overhead <= {TARGET_OVERHEAD_SECONDS * 1000:g} ms per turn: {long[0] * 1000:.3f} ms"
        f"  {verdict(long[0] <= TARGET_OVERHEAD_SECONDS)}"
    )


# ---------------------------------------------------------------------------------------------
# Part 3: the tiers of the current tree against the long-session mode of --baseline

# A server's count: words cut into pieces of at most 8 letters, numbers into groups of three
# digits, each run of up to three punctuation marks, line break and run of spaces one token; 4 tokens per message and
# 3 per request on top, and the tools' definitions counted as their JSON. Not bytes / 4: code and
# test output count denser than prose.
SERVER_TOKEN = re.compile(r"[A-Za-z]{1,8}|[0-9]{1,3}|\n| {2,}|[^\sA-Za-z0-9]{1,3}")
SERVER_MESSAGE_OVERHEAD = 4
SERVER_REQUEST_OVERHEAD = 3
DEFAULT_BASELINE_REV = "85b9761"  # the long-session mode before the tiers (R-LONG-1 … R-LONG-9)
DEFAULT_TIERS_WINDOW = 32_000
TARGET_SUMMARY_INPUT = 0.5  # tiered summarizer input at most half the baseline's
TARGET_PREFIX_STABLE = 0.9  # chat requests outside compaction turns that extend the previous one
TARGET_ESTIMATE_ERROR = 0.02  # |announced - server count| / server count, after the first call
ENGINE_KINDS = {"per-prompt": "a new engine per prompt, as --resume", "one": "one engine for the whole session"}
# A worker imports harness9_ref from the tree it is given (sys.argv[1]) before this module puts
# the current tree on the path: submodules then resolve through that package.
WORKER_BOOT = (
    "import sys; sys.path[:0] = sys.argv[1:3]; import harness9_ref, bench_long_session; "
    "bench_long_session.tiers_worker(sys.argv[3:])"
)


@functools.cache
def server_tokens(text: str) -> int:
    return len(SERVER_TOKEN.findall(text))


def server_count(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
    """The input tokens a server reports for a request: its messages and its tools' definitions."""
    total = SERVER_REQUEST_OVERHEAD + sum(server_tokens(json.dumps(t.to_dict(), sort_keys=True)) for t in tools)
    for msg in messages:
        total += SERVER_MESSAGE_OVERHEAD + server_tokens(msg.content) + server_tokens(msg.tool_call_id)
        total += sum(server_tokens(call.name) + server_tokens(call.arguments) for call in msg.tool_calls)
    return total


class ServerProvider(SessionProvider):
    """The scripted session, its ``usage.input_tokens`` counted as a server counts (``server_count``)."""

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        reply = self.reply(messages)
        return reply, Usage(server_count(messages, available_tools), server_tokens(reply.content))


@dataclass(frozen=True)
class Sent:
    """One request as the server saw it, and what the engine had announced for it."""

    summarizer: bool
    tokens: int  # the server's count (usage.input_tokens)
    announced: int = 0  # chat: the token update before the request
    stable: bool | None = None  # chat: starts with the previous chat request's messages (None: the first)
    compacted: bool = False  # chat: its turn had a compaction event
    uncached: int = 0  # the tokens after the longest prefix of messages shared with the previous chat request
    opening: bool = False  # chat: the first request of its prompt


@dataclass
class Probe:
    """Wraps the provider and records every request.

    The engine announces a chat request (a compaction event when its turn compacted, then a token
    update) before it sends it; ``drain`` passes both on in ``announced`` and ``compacted``, and the
    next chat request takes them. It also counts as the server does, for an engine given it as
    its token counter (R-LONG-10).
    """

    inner: ServerProvider
    sent: list[Sent] = field(default_factory=list)
    announced: int = 0
    compacted: bool = False
    previous: tuple[Message, ...] | None = None
    opening: bool = False  # the next chat request is the first of its prompt
    counts: int = 0  # count_tokens calls

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        self.counts += 1
        return server_count(messages, tools)

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        reply, usage = self.inner.generate(messages, available_tools)
        tokens = usage.input_tokens if usage is not None else 0
        if is_summarizer_request(messages):
            self.sent.append(Sent(True, tokens, uncached=tokens))
            return reply, usage
        request = tuple(messages)
        if self.previous is None:
            stable, uncached = None, tokens
        else:
            pairs = enumerate(zip(request, self.previous))
            shared = next((k for k, (a, b) in pairs if a != b), min(len(request), len(self.previous)))
            stable, uncached = shared == len(self.previous), tokens - server_count(request[:shared], available_tools)
        self.sent.append(Sent(False, tokens, self.announced, stable, self.compacted, uncached, self.opening))
        self.previous, self.compacted, self.opening = request, False, False
        return reply, usage

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        reply, usage = self.generate(messages, available_tools)
        yield StreamChunk(CHUNK_TEXT, delta=reply.content)
        yield StreamChunk(CHUNK_DONE, message=reply, usage=usage)


def drain(events: Iterator[Event], probe: Probe, tiers: dict[str, int]) -> dict[str, Any]:
    """Runs a prompt, handing each announcement to the probe before the request it announces; the last event."""
    last: dict[str, Any] = {}
    probe.opening = True
    for event in events:
        last = event.to_dict()
        if event.type is EventType.TOKEN_UPDATE:
            probe.announced = int(last["data"]["estimated_tokens"])
        elif event.type is EventType.COMPACTION:
            probe.compacted = True
            tier = str(last["data"].get("tier", "-"))  # the baseline's events name no tier
            tiers[tier] = tiers.get(tier, 0) + 1
    return last


def play_tool_heavy(prompts: int, window: int, engine_kind: str, db: Path, count: bool) -> dict[str, Any]:
    """Plays part 3's session against the imported ``harness9_ref``, long-session mode as the CLI wires it.

    With ``count`` the engine is given the server's count as its token counter (R-LONG-10).
    """
    probe = Probe(ServerProvider(session_plans(prompts, tool_heavy_plan)))
    registry = SessionRegistry(TOOL_HEAVY_OUTPUTS)
    tiers: dict[str, int] = {}
    failed = ""
    played = 0
    counter = probe if count else None
    with Manager(db) as manager:
        session_id = manager.new_session().session_id
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        shared = None
        if engine_kind == "one":
            manager = stack.enter_context(Manager(db))
            shared = make_engine(probe, registry, manager.open_session(session_id), window, True, counter=counter)
        for i in range(prompts):
            text = tool_heavy_plan(i).text
            if shared is None:  # as `harness9-ref run --resume`: a new process per prompt
                with Manager(db) as manager:
                    engine = make_engine(probe, registry, manager.open_session(session_id), window, True, counter=counter)
                    last = drain(engine.run_stream(text), probe, tiers)
            else:
                last = drain(shared.run_stream(text), probe, tiers)
            if last.get("type") != EventType.DONE.value:
                failed = f"prompt {i} failed: {json.dumps(last.get('data'))}"
                break
            played += 1
    wall = time.perf_counter() - started
    with Manager(db) as manager:
        stored = manager.open_session(session_id).get_messages(0)
    result_bytes = sum(len(m.content.encode()) for m in stored if m.tool_call_id)
    return {
        "tree": str(Path(harness9_ref.__file__).resolve().parent.parent),
        "wall": wall,
        "failed": failed,
        "prompts": played,
        "sent": [dataclasses.astuple(s) for s in probe.sent],
        "tiers": tiers,
        "counts": probe.counts,
        "stored": len(stored),
        "result_share": result_bytes / max(1, sum(len(m.content.encode()) for m in stored)),
    }


def tiers_worker(argv: Sequence[str]) -> None:
    """A worker process of part 3 (see WORKER_BOOT): plays the session and writes what it saw as JSON."""
    prompts, window, engine_kind, count, db, out = argv
    result = play_tool_heavy(int(prompts), int(window), engine_kind, Path(db), count == "count")
    Path(out).write_text(json.dumps(result), encoding="utf-8")


def extract_tree(rev: str, folder: Path) -> tuple[Path, str]:
    """``harness9_ref/`` of commit ``rev`` under ``folder``, and the commit's short id; a one-line exit otherwise."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--verify", "--short", f"{rev}^{{commit}}"], capture_output=True, text=True
        )
        archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", rev, "harness9_ref"], capture_output=True)
    except OSError as exc:
        raise SystemExit(f"bench_long_session: the baseline needs git, which could not be run ({exc.strerror})") from None
    if commit.returncode != 0 or archive.returncode != 0:
        raise SystemExit(f"bench_long_session: no commit {rev!r} with harness9_ref/ in {root} (the baseline needs a git clone)")
    tree = folder / "baseline"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        for member in tar.getmembers():
            content = tar.extractfile(member) if member.isfile() else None
            if content is not None:
                target = tree / member.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content.read())
    return tree, commit.stdout.strip()


def run_worker(tree: Path, prompts: int, window: int, engine_kind: str, count: bool, folder: Path, name: str) -> dict[str, Any]:
    """One session in a fresh process whose ``harness9_ref`` is ``tree``'s."""
    db, out = folder / f"{name}.db", folder / f"{name}.json"
    here = Path(__file__).resolve().parent
    argv = [str(tree), str(here), str(prompts), str(window), engine_kind, "count" if count else "-", str(db), str(out)]
    done = subprocess.run([sys.executable, "-c", WORKER_BOOT, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise SystemExit(f"bench_long_session: the {name} run failed: {lines[-1]}")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if Path(result["tree"]) != tree.resolve():
        raise SystemExit(f"bench_long_session: the {name} run imported harness9_ref from {result['tree']}, not {tree}")
    return result


@dataclass(frozen=True)
class TierFigures:
    """What part 3 reports of one run."""

    prompts: int
    failed: str
    wall: float
    stored: int
    result_share: float
    tiers: dict[str, int]
    counts: int
    chat: list[Sent]
    summaries: list[Sent]

    @classmethod
    def of(cls, result: dict[str, Any]) -> TierFigures:
        sent = [Sent(*row) for row in result["sent"]]
        return cls(
            result["prompts"],
            result["failed"],
            result["wall"],
            result["stored"],
            result["result_share"],
            result["tiers"],
            result["counts"],
            [s for s in sent if not s.summarizer],
            [s for s in sent if s.summarizer],
        )

    def stable(self, outside_compaction: bool) -> float:
        judged = [s for s in self.chat if s.stable is not None and not (outside_compaction and s.compacted)]
        return sum(1 for s in judged if s.stable) / len(judged) if judged else 1.0

    def errors(self, openings: bool = True) -> list[float]:
        """|announced - counted| / counted for the chat requests after the first (``openings``: also each prompt's first)."""
        later = (s for s in self.chat[1:] if s.tokens > 0 and (openings or not s.opening))
        return sorted(abs(s.announced - s.tokens) / s.tokens for s in later)

    def error_mean(self, openings: bool = True) -> float:
        errors = self.errors(openings)
        return sum(errors) / len(errors) if errors else 0.0

    def error_p95(self, openings: bool = True) -> float:
        errors = self.errors(openings)
        return errors[math.ceil(0.95 * len(errors)) - 1] if errors else 0.0


MODES = (("baseline", False), ("tiered", False), ("counted", True))  # part 3's runs: name, with the token counter


def part3(args: argparse.Namespace, folder: Path) -> None:
    window, prompts = args.window, args.prompts
    tree, commit = extract_tree(args.baseline, folder)
    current = Path(__file__).resolve().parents[1]
    kinds = list(ENGINE_KINDS) if args.engine == "both" else [args.engine]
    jobs = [(kind, mode, count) for kind in kinds for mode, count in MODES]
    print(f"Part 3: tiers (this tree) against long-session mode of {commit} (the baseline), a tool-heavy session")
    print(f"        of {prompts} prompts in a {window:,}-token window, SQLiteSession, a server-like token count")
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        trees = {"baseline": tree, "tiered": current, "counted": current}
        futures = [
            pool.submit(run_worker, trees[mode], prompts, window, kind, count, folder, f"{mode}-{kind}")
            for kind, mode, count in jobs
        ]
        figures = {(kind, mode): TierFigures.of(f.result()) for (kind, mode, _), f in zip(jobs, futures)}
    some = figures[(kinds[0], "tiered")]
    print(
        f"        ({some.stored:,} stored messages, {some.result_share:.0%} of their bytes in tool results;"
        f" {len(jobs)} runs in {time.perf_counter() - started:.0f} s, {os.cpu_count()} at a time)"
    )
    for kind in kinds:
        print()
        print(f"{ENGINE_KINDS[kind]}:")
        tier_table(figures[(kind, "baseline")], figures[(kind, "tiered")], figures[(kind, "counted")], window)
    print()
    print("  tiered: this tree's long-session mode with its defaults; +counter: the same with the server's count as")
    print("  its token counter (R-LONG-10); met: the goal for tiered, and for +counter. Uncached: the tokens after the")
    print("  longest prefix of messages a chat request shares with the previous one (summarizer requests: all).")
    print("  Estimate error: |announced - server count| / server count for every chat request but the first")
    print("  (then also leaving out the first request of each prompt, the first of a new engine per prompt).")


def tier_table(base: TierFigures, tiered: TierFigures, counted: TierFigures, window: int) -> None:
    """Part 3's table for one kind of engine: the figures of the three runs, the ratio and the goals."""
    rows: list[tuple[str, ...]] = []

    def add(
        name: str, values: tuple[float, float, float], style: str, goal: str = "", met: Callable[[float], bool] | None = None
    ) -> None:
        a, b, c = values
        ratio = f"{b / a:.2f}x" if style != "%" and a else ""
        cells = [f"{v:.1%}" if style == "%" else f"{v:{style}}" for v in values]
        judged = ("", "") if met is None else (verdict(met(b)), verdict(met(c)))
        rows.append((name, cells[0], cells[1], ratio, cells[2], goal, *judged))

    def each(figure: Callable[[TierFigures], float]) -> tuple[float, float, float]:
        return figure(base), figure(tiered), figure(counted)

    def summary_input(f: TierFigures) -> float:
        return sum(s.tokens for s in f.summaries)

    add("prompts played", each(lambda f: f.prompts), ",.0f")
    add("chat requests", each(lambda f: len(f.chat)), ",.0f")
    add("summarizer calls", each(lambda f: len(f.summaries)), ",.0f")
    cut = TARGET_SUMMARY_INPUT * summary_input(base)
    add("summarizer input tokens", each(summary_input), ",.0f", f"<= {TARGET_SUMMARY_INPUT:.2f}x", lambda v: v <= cut)
    add("chat input tokens", each(lambda f: sum(s.tokens for s in f.chat)), ",.0f")
    add("total input tokens", each(lambda f: sum(s.tokens for s in f.chat + f.summaries)), ",.0f")
    add("  of them uncached", each(lambda f: sum(s.uncached for s in f.chat + f.summaries)), ",.0f")
    add("compaction events", each(lambda f: sum(f.tiers.values())), ",.0f")
    add("token counter calls", each(lambda f: f.counts), ",.0f")
    stable = f">= {TARGET_PREFIX_STABLE:.0%}"
    add("prefix stable, no compaction", each(lambda f: f.stable(True)), "%", stable, lambda v: v >= TARGET_PREFIX_STABLE)
    add("prefix stable, all requests", each(lambda f: f.stable(False)), "%")
    close = f"<= {TARGET_ESTIMATE_ERROR:.0%}"
    add("estimate error, mean", each(lambda f: f.error_mean()), "%", close, lambda v: v <= TARGET_ESTIMATE_ERROR)
    add("estimate error, p95", each(lambda f: f.error_p95()), "%", close, lambda v: v <= TARGET_ESTIMATE_ERROR)
    add("  mean, not a prompt's first", each(lambda f: f.error_mean(False)), "%")
    add("  p95, not a prompt's first", each(lambda f: f.error_p95(False)), "%")
    add("largest chat request, windows", each(lambda f: max((s.tokens for s in f.chat), default=0) / window), ".2f")
    add("chat requests over the window", each(lambda f: sum(s.tokens > window for s in f.chat)), ",.0f")
    add("wall, s", each(lambda f: f.wall), ".1f")
    head = ("", "baseline", "tiered", "tiered/base", "+counter", "goal", "met", "met")
    for row in (head, *rows):
        name, *cells = row
        print(f"{name:<30} " + " ".join(f"{cell:>{width}}" for cell, width in zip(cells, (12, 12, 11, 12, 9, 4, 4))))
    for name, figures in (("tiered", tiered), ("+counter", counted)):
        print(f"  {name} compaction events by tier: " + ", ".join(f"{k} {v:,}" for k, v in sorted(figures.tiers.items())))
    for name, figures in (("baseline", base), ("tiered", tiered), ("+counter", counted)):
        if figures.failed:
            print(f"  {name} stopped early: {figures.failed}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--prompts", type=int, default=DEFAULT_PROMPTS, help="prompts of the long-session run")
    parser.add_argument(
        "--baseline-prompts",
        type=int,
        default=None,
        help=f"prompts of the literal run (default: --prompts, at most {DEFAULT_BASELINE_PROMPTS})",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=None,
        help=f"context window in tokens (default {DEFAULT_WINDOW:,}; {DEFAULT_TIERS_WINDOW:,} with --tiers)",
    )
    parser.add_argument("--stored", type=int, default=DEFAULT_STORED, help="part 2: stored messages")
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS, help="part 2: provider calls per run")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="part 2: runs per mode")
    parser.add_argument("--skip", choices=("1", "2"), help="leave out part 1 or part 2")
    parser.add_argument("--tiers", action="store_true", help="run part 3 only: the tiers against --baseline")
    parser.add_argument(
        "--baseline",
        default=DEFAULT_BASELINE_REV,
        metavar="REV",
        help=f"part 3: the commit whose long-session mode is the baseline (default {DEFAULT_BASELINE_REV})",
    )
    parser.add_argument(
        "--engine", choices=(*ENGINE_KINDS, "both"), default="both", help="part 3: a new engine per prompt, one, or both"
    )
    args = parser.parse_args(argv)
    if args.window is None:
        args.window = DEFAULT_TIERS_WINDOW if args.tiers else DEFAULT_WINDOW
    if args.baseline_prompts is None:
        args.baseline_prompts = min(args.prompts, DEFAULT_BASELINE_PROMPTS)
    args.baseline_prompts = min(args.baseline_prompts, args.prompts)
    if args.prompts < 1 or args.baseline_prompts < 1:
        parser.error("--prompts and --baseline-prompts must be at least 1")
    if args.window < 1:
        parser.error("--window must be at least 1")
    with tempfile.TemporaryDirectory(prefix="harness9-bench-long-") as tmp:
        folder = Path(tmp)
        if args.tiers:
            part3(args, folder)
            return
        if args.skip != "1":
            part1(args, folder)
        if args.skip is None:
            print()
        if args.skip != "2":
            part2(args, folder)

if __name__ == "__main__":
    main()
