"""A deterministic provider that needs no network (SPEC R-CLI-9).

It lives above the provider, memory and tools packages, not in ``harness9_ref.provider``: it
recognises a summarizer request (R-SUM-7), counts tokens as memory does (R-TOK-1), and offers
the calls of the registry's tools, and the provider layer imports none of those.

``harness9-ref`` falls back to it when no API key is set (R-CLI-4), so the program, its tools,
its sessions and its compaction can be tried on a fresh machine. It answers from the
conversation, by the first rule that applies:

1. a summarizer request (the system message is ``SUMMARY_SYSTEM_PROMPT``, R-SUM-7): a summary
   under the five headings of ``SUMMARY_TEMPLATE``, merged with the previous summary when the
   request carries one;
2. the last message is a tool result: a reply reporting every result of the last step;
3. the last user message starts with ``read `` or ``run `` (and the tool is offered): a
   ``read_file`` call with the rest as ``path``, or a ``bash`` call with the rest as
   ``command``; ``edit <path> <old> => <new>`` is an ``edit_file`` call and
   ``write <path> <content>`` a ``write_file`` call (the path is the first word, the texts
   are taken as typed);
4. anything else: a reply that quotes the prompt and says how many messages the conversation
   holds.

The same request always gives the same reply, call ids included. Replies are deliberately
wordy, so that a small ``--context-window`` (2000, say) fills and compacts within a few turns.
Usage is ``input_tokens = estimate_tokens(messages) + estimate_tool_tokens(tools)`` and
``output_tokens = estimate_tokens([reply])``.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Final

from .memory.context import (
    CHARS_PER_TOKEN,
    SHORTENED_MARKER,
    SUMMARY_MARKER,
    SUMMARY_SYSTEM_PROMPT,
    cut_to,
    estimate_tokens,
    estimate_tool_tokens,
    size_text,
)
from .schema import (
    CHUNK_DONE,
    CHUNK_TEXT,
    ROLE_ASSISTANT,
    ROLE_SYSTEM,
    Message,
    StreamChunk,
    ToolCall,
    ToolDefinition,
    Usage,
    strict_json,
)
from .text import OFFLINE_LABEL
from .tools import BASH_TOOL, EDIT_FILE_TOOL, READ_FILE_TOOL, WRITE_FILE_TOOL

__all__ = ["OFFLINE_PROVIDER", "OfflineProvider"]

OFFLINE_PROVIDER: Final = OFFLINE_LABEL  # its name is its whole label (R-TUI-25)
READ_PREFIX: Final = "read "  # R-CLI-9: "read <path>" -> read_file
RUN_PREFIX: Final = "run "  # R-CLI-9: "run <command>" -> bash
EDIT_PREFIX: Final = "edit "  # R-CLI-9: "edit <path> <old> => <new>" -> edit_file
WRITE_PREFIX: Final = "write "  # R-CLI-9: "write <path> <content>" -> write_file
EDIT_ARROW: Final = " => "  # R-CLI-9: between the old and the new text of "edit"
READ_TOOL: Final = READ_FILE_TOOL.name
RUN_TOOL: Final = BASH_TOOL.name
EDIT_TOOL: Final = EDIT_FILE_TOOL.name
WRITE_TOOL: Final = WRITE_FILE_TOOL.name
QUOTE_LIMIT: Final = 160  # characters of the prompt quoted in a reply
FACT_LIMIT: Final = 60  # characters of a path, command or request kept in a summary
FACT_ITEMS: Final = 5  # paths and commands kept in a summary

REPLY_HEAD: Final = 'Offline reply to "{quote}".'
REPLY_CONTEXT: Final = (
    "This conversation holds {count} messages, about {tokens} tokens by the char\u00f74 "
    "estimate{summary}. Message by message:"
)
REPLY_ITEM: Final = "  {n}. {role}, {tokens}: {preview}"
REPLY_ABOUT: Final = (
    "I am the offline provider of harness9-ref: I need no network and answer from the "
    "conversation itself, the same way every time. Type `read <path>` and I call the read_file "
    "tool on that file; type `run <command>` and I call the bash tool with that command; "
    "`edit <path> <old> => <new>` and `write <path> <content>` call edit_file and write_file; a "
    "summarizer request gets a summary under the five headings of the summary template. My "
    "replies are long on purpose, so that a small --context-window fills within a few turns and "
    "you can watch the status bar change colour and the older messages being summarized. Set "
    "OPENAI_API_KEY or ANTHROPIC_API_KEY to talk to a real model. In the terminal UI, /new starts "
    "a new session, /resume lists the saved ones, /exit leaves, Tab completes a command, Up and "
    "Down recall earlier input, and Ctrl+C interrupts a turn."
)
PREVIEW_LIMIT: Final = 200  # characters of each message shown in a reply
SUMMARY_NOTE: Final = ", one of them a summary of older ones"
CALL_TEXT: Final = {
    READ_TOOL: "Reading {arg}.",
    RUN_TOOL: "Running `{arg}`.",
    EDIT_TOOL: "Editing {arg}.",
    WRITE_TOOL: "Writing {arg}.",
}
RESULT_LINE: Final = '{name} {arg}: {lines}, {size}{shortened}; first line: "{first}"'
# R-TUI-24: a result the request carries shortened (R-TRIM-2) is said to be, with its whole size,
# so that the tool line's figures (the whole result's) and the reply's differ only where the request did.
RESULT_SHORTENED: Final = ", shortened from {total} to fit the context window"
_SHORTENED: Final = re.compile(
    re.escape(SHORTENED_MARKER).replace(re.escape("{omitted}"), r"\d+").replace(re.escape("{total}"), r"(\d+)")
)
RESULTS_HEAD: Final = "The tool calls of the last step returned:"
RESULTS_TAIL: Final = "That is all the offline provider can say about them; ask for another file or command."
SUMMARY: Final = (
    "**Goal:** {goal}\n"
    "**Progress:** {messages} earlier messages summarized: {requests} user requests and {calls} tool calls.\n"
    "**Key Decisions:** Older messages were replaced by this summary; the newest messages are kept verbatim.\n"
    "**Next Steps:** Continue with the user's latest request.\n"
    "**Critical Context:** {facts}"
)
NO_GOAL: Final = "Not stated yet."
NO_FACTS: Final = "No files or commands yet."

_ITEM: Final = re.compile(r"^\[(user|assistant|system|tool_call [^\]]*|tool_result [^\]]*)\]: ", re.M)
_TOOL_CALL: Final = re.compile(r"^\[tool_call (\w+)\([^)]*\)\]: (.*)$", re.M)
_PREVIOUS: Final = re.compile(r"\A<previous-summary>\n(.*)\n</previous-summary>\n", re.S)
_GOAL: Final = re.compile(r"^\*\*Goal:\*\* (.*)$", re.M)
_COUNTS: Final = re.compile(
    r"^\*\*Progress:\*\* (\d+) earlier messages summarized: (\d+) user requests and (\d+) tool calls", re.M
)
_FACTS: Final = re.compile(r"^\*\*Critical Context:\*\* (.*)$", re.M)
_WORD: Final = re.compile(r"\s*\S+\s*")


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _argument(arguments: str, key: str) -> str:
    try:
        value = strict_json.loads(arguments, finite=False)
    except strict_json.JSONError:
        return arguments
    return str(value.get(key, "")) if isinstance(value, dict) else arguments


def _key(name: str) -> str:
    """The argument that names what a call of tool ``name`` works on: its command or its path."""
    return "command" if name == RUN_TOOL else "path"


def _call_id(messages: Sequence[Message]) -> str:
    digest = hashlib.sha256(json.dumps([m.to_dict() for m in messages], ensure_ascii=False).encode())
    return "call_offline_" + digest.hexdigest()[:16]


class OfflineProvider:
    """Answers from the conversation without a network; see the module docstring (R-CLI-9).

    Args:
        chunk_delay: seconds to wait before each text chunk, so a terminal shows the text
            streaming; 0 streams at once. It never changes what is sent.
        sleep: the function that waits (tests pass a fake).
        reply_limit: when positive, a reply is cut to the bytes of that many estimated tokens,
            as a server cuts a reply at its ``max_tokens`` (R-PRV-29); the summarizer's is set
            so (R-FOLD-7).
    """

    def __init__(
        self, *, chunk_delay: float = 0.0, sleep: Callable[[float], None] = time.sleep, reply_limit: int = 0
    ) -> None:
        self.chunk_delay = chunk_delay
        self._sleep = sleep
        self.reply_limit = reply_limit

    def __repr__(self) -> str:
        return f"OfflineProvider(chunk_delay={self.chunk_delay!r})"

    @property
    def reserved_output_tokens(self) -> int:
        """0: a request keeps nothing of the window for the reply, as none sends ``max_tokens`` (R-PRV-26)."""
        return 0

    def reply(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> Message:
        """The assistant message for a request (pure: the same request gives the same reply)."""
        if messages and messages[0].role == ROLE_SYSTEM and messages[0].content == SUMMARY_SYSTEM_PROMPT:
            summary = _summary(messages[-1].content if len(messages) > 1 else "")
            if self.reply_limit > 0:
                summary = cut_to(summary, CHARS_PER_TOKEN * self.reply_limit)
            return Message(ROLE_ASSISTANT, summary)
        if messages and messages[-1].tool_call_id:
            return Message(ROLE_ASSISTANT, _report(messages))
        prompt = messages[-1].content if messages else ""
        offered = {tool.name for tool in available_tools}
        request = _tool_request(prompt)
        if request is not None and request[0] in offered:
            tool, arguments = request
            arg = arguments["path" if "path" in arguments else "command"]
            call = ToolCall(_call_id(messages), tool, json.dumps(arguments, ensure_ascii=False))
            return Message(ROLE_ASSISTANT, CALL_TEXT[tool].format(arg=arg), (call,))
        return Message(ROLE_ASSISTANT, _answer(messages, prompt))

    def usage(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition], reply: Message) -> Usage:
        """R-CLI-9: the estimate of the request in, the estimate of the reply out."""
        return Usage(estimate_tokens(messages) + estimate_tool_tokens(available_tools), estimate_tokens([reply]))

    def generate(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> tuple[Message, Usage | None]:
        """The reply and its usage (R-PRV-1); never raises."""
        reply = self.reply(messages, available_tools)
        return reply, self.usage(messages, available_tools, reply)

    def generate_stream(
        self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamChunk]:
        """The reply's text in word-sized chunks, then one ``done`` chunk with the usage (R-PRV-19)."""
        reply, usage = self.generate(messages, available_tools)
        for piece in _WORD.findall(reply.content):
            if self.chunk_delay > 0:
                self._sleep(self.chunk_delay)
            yield StreamChunk(CHUNK_TEXT, delta=piece)
        yield StreamChunk(CHUNK_DONE, message=reply, usage=usage)


def _tool_request(prompt: str) -> tuple[str, dict[str, str]] | None:
    """The tool and arguments a prompt asks for (R-CLI-9), or None for an ordinary prompt."""
    for prefix, tool, key in ((READ_PREFIX, READ_TOOL, "path"), (RUN_PREFIX, RUN_TOOL, "command")):
        arg = prompt[len(prefix) :].strip() if prompt.startswith(prefix) else ""
        if arg:
            return tool, {key: arg}
    for prefix, tool in ((EDIT_PREFIX, EDIT_TOOL), (WRITE_PREFIX, WRITE_TOOL)):
        if not prompt.startswith(prefix):
            continue
        path, _, text = prompt[len(prefix) :].lstrip().partition(" ")
        if not path:
            return None
        if tool == WRITE_TOOL:
            return tool, {"path": path, "content": text}
        old, arrow, new = text.partition(EDIT_ARROW)
        return (tool, {"path": path, "old_text": old, "new_text": new}) if arrow else None
    return None


def _role(msg: Message) -> str:
    if msg.tool_call_id:
        return "tool result"
    if msg.tool_calls:
        return f"{msg.role} calling {', '.join(call.name for call in msg.tool_calls)}"
    return msg.role


def _answer(messages: Sequence[Message], prompt: str) -> str:
    summarized = any(m.content.startswith(SUMMARY_MARKER) for m in messages)
    lines = [
        REPLY_HEAD.format(quote=_cut(prompt, QUOTE_LIMIT)),
        REPLY_CONTEXT.format(
            count=len(messages), tokens=estimate_tokens(messages), summary=SUMMARY_NOTE if summarized else ""
        ),
    ]
    for n, msg in enumerate(messages, start=1):
        preview = _cut(msg.content, PREVIEW_LIMIT) or "(no text)"
        lines.append(
            REPLY_ITEM.format(n=n, role=_role(msg), tokens=_count(estimate_tokens([msg]), "token"), preview=preview)
        )
    lines.append(REPLY_ABOUT)
    return "\n".join(lines)


def _report(messages: Sequence[Message]) -> str:
    calls: dict[str, ToolCall] = {}
    results: list[Message] = []
    for msg in reversed(messages):
        if not msg.tool_call_id:
            calls = {call.id: call for call in msg.tool_calls}
            break
        results.append(msg)
    lines = [RESULTS_HEAD]
    for result in reversed(results):
        call = calls.get(result.tool_call_id)
        name = call.name if call is not None else "tool"
        arg = _cut(_argument(call.arguments, _key(name)), FACT_LIMIT) if call is not None else result.tool_call_id
        body = result.content.splitlines()
        first = _cut(body[0], QUOTE_LIMIT) if body else ""
        size = size_text(len(result.content.encode("utf-8")))
        marker = _SHORTENED.search(result.content)
        shortened = RESULT_SHORTENED.format(total=size_text(int(marker.group(1)))) if marker else ""
        lines.append(
            "- "
            + RESULT_LINE.format(
                name=name, arg=arg, lines=_count(len(body), "line"), size=size, shortened=shortened, first=first
            )
        )
    lines.append(RESULTS_TAIL)
    return "\n".join(lines)


def _summary(prompt: str) -> str:
    previous = _PREVIOUS.match(prompt)
    old = previous.group(1) if previous else ""
    conversation = prompt[previous.end() :] if previous else prompt
    goal_match = _GOAL.search(old)
    goal = goal_match.group(1) if goal_match else ""
    counts_match = _COUNTS.search(old)
    counts = [int(n) for n in counts_match.groups()] if counts_match else [0, 0, 0]
    facts_match = _FACTS.search(old)
    facts = facts_match.group(1).split("; ") if facts_match and facts_match.group(1) != NO_FACTS else []
    items = _ITEM.findall(conversation)
    counts[0] += len(items)
    counts[1] += sum(1 for tag in items if tag == "user")
    counts[2] += sum(1 for tag in items if tag.startswith("tool_call "))
    if not goal or goal == NO_GOAL:
        first = re.search(r"^\[user\]: (.*)$", conversation, re.M)
        goal = _cut(first.group(1), FACT_LIMIT) if first else NO_GOAL
    for name, arguments in _TOOL_CALL.findall(conversation):
        fact = f"{name} {_cut(_argument(arguments, _key(name)), FACT_LIMIT)}"
        if fact in facts:
            facts.remove(fact)
        facts.append(fact)
    return SUMMARY.format(
        goal=goal,
        messages=counts[0],
        requests=counts[1],
        calls=counts[2],
        facts="; ".join(facts[-FACT_ITEMS:]) or NO_FACTS,
    )
