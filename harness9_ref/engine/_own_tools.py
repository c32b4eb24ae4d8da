"""The engine's own tools: ``recall`` and ``todo`` (SPEC R-RCL-1 … R-RCL-9, R-LONG-18).

Compaction takes detail out of the view (cleared results, shortened messages, summaries), but
every message stays in the session; ``recall`` lets the model read it back by its position, a
bounded page at a time, or find it by text. ``todo`` lets the model write the session's plan
(R-SES-7), which survives compaction because the summary message carries it (``plan_block``).
The engine answers both calls itself, so the registry never sees them. Everything here is a
function of its arguments: the history comes through ``HistorySource`` and the plan goes out
through a ``save`` callable, so no other session is ever within reach (R-RCL-4). ``OwnTools`` is
the part an engine is given to offer and answer them.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Protocol

from ..memory.storage import Session, StatefulSession, make_snippet, matches
from ..planning import TODO_STATUSES, TodoItem, plan_lines
from ..schema import (
    INVALID_ARGUMENTS,
    TOOL_FAILED,
    UNKNOWN_TOOL,
    ArgumentsError,
    Message,
    ToolDefinition,
    parse_object,
    replace_lone_surrogates,
    required_string,
)
from ..schema.strict_json import json_kind
from ._long_session import stateful
from ._run_errors import engine_error

__all__ = [
    "ENGINE_TOOLS",
    "RECALL_CALL_LINE",
    "RECALL_HIT",
    "RECALL_MATCHES",
    "RECALL_MAX_BYTES",
    "RECALL_NEXT_PAGE",
    "RECALL_NO_MATCH",
    "RECALL_NO_MESSAGES",
    "RECALL_NO_POSITION",
    "RECALL_PAGE",
    "RECALL_PAST_END",
    "RECALL_RESULT_LABEL",
    "RECALL_SEARCH_LIMIT",
    "RECALL_TOOL",
    "RECALL_TOOL_RESULT_LABEL",
    "TODO_CLEARED",
    "TODO_CONTENT_LIMIT",
    "TODO_ITEM_LIMIT",
    "TODO_SAVED",
    "TODO_TOOL",
    "HistorySource",
    "ListHistory",
    "OwnTools",
    "SessionHistory",
    "recall",
    "run_engine_tool",
    "write_todos",
]

RECALL_MAX_BYTES: Final = 8192  # R-RCL-2: UTF-8 bytes of a message's body on one page
RECALL_SEARCH_LIMIT: Final = 10  # R-RCL-3: hits one search shows
TODO_ITEM_LIMIT: Final = 50  # R-RCL-6: items a plan may hold
TODO_CONTENT_LIMIT: Final = 500  # R-RCL-6: characters of one item's content

RECALL_TOOL: Final = ToolDefinition(
    "recall",
    "Read back a message of this session that was cleared, shortened or summarised away, by the position "
    "the placeholder or summary names, one page at a time; or search this session's messages for words.",
    {
        "type": "object",
        "properties": {
            "position": {"type": "integer", "description": "Position of the message; 0 is the first."},
            "offset": {"type": "integer", "description": "Byte offset of the page; the previous page names the next."},
            "query": {"type": "string", "description": "Instead of position: words that must all occur, any case."},
        },
    },
)
"""R-RCL-1: the definition the engine offers for ``recall``."""

TODO_TOOL: Final = ToolDefinition(
    "todo",
    "Write your plan for this task as a todo list; it replaces the previous list and is kept through "
    "compaction. Keep one item in_progress and mark items completed as you finish them.",
    {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    },
)
"""R-RCL-1: the definition the engine offers for ``todo``."""

ENGINE_TOOLS: Final = (RECALL_TOOL, TODO_TOOL)  # R-RCL-1: in the order offered
_ENGINE_TOOL_NAMES: Final = frozenset(tool.name for tool in ENGINE_TOOLS)
NO_SESSION: Final = "no_session"  # R-LONG-18: a todo call in a run without a session
NO_SESSION_FOR_PLAN: Final = "there is no session to keep a plan in"

# R-RCL-2: a page of one message.
RECALL_PAGE: Final = "[message {position} ({label}): bytes {start}-{end} of {total}{next}]\n{text}"
RECALL_NEXT_PAGE: Final = "; next page at offset {offset}"
RECALL_RESULT_LABEL: Final = "{role}, result of call {call_id}"
RECALL_TOOL_RESULT_LABEL: Final = "{role}, result of call {call_id} to {name}"
RECALL_CALL_LINE: Final = "[tool call {id}: {name} {arguments}]"
# R-RCL-3: a search.
RECALL_MATCHES: Final = "[recall: {shown} of {total} matches, newest first]"
RECALL_HIT: Final = "message {position} ({label}, {total} bytes): {snippet}"
RECALL_NO_MATCH: Final = "[recall: no message of this session matches]"
# R-RCL-5: a position or an offset that names nothing.
RECALL_NO_POSITION: Final = "error: no message at position {position}; this session's messages are at positions 0 to {last}"
RECALL_NO_MESSAGES: Final = "error: no message at position {position}; this session has no messages"
RECALL_PAST_END: Final = "error: offset {offset} is past the end of message {position} ({total} bytes)"
# R-RCL-7: the answer to a todo call; R-RCL-8: the plan block of a summary message.
TODO_SAVED: Final = "plan saved:\n{plan}"
TODO_CLEARED: Final = "plan cleared: the todo list is empty"

_RECALL_MEMBERS: Final = ("position", "offset", "query")
_TODO_ITEM_MEMBERS: Final = ("id", "content", "status")


class HistorySource(Protocol):
    """The messages of one session as ``recall`` sees them, by position (R-RCL-4).

    Position 0 is the session's first message; the stored messages come first and the run's
    not yet saved ones continue their positions (R-CKP-4's numbering). ``recall`` asks for a
    position only after checking it against ``count()``, and reads the whole history only to
    search it.
    """

    def count(self) -> int:
        """How many messages there are."""
        ...

    def read(self, position: int) -> Message:
        """The message at ``position``, ``0 <= position < count()``."""
        ...

    def scan(self) -> Iterable[Message]:
        """Every message, oldest first (position 0 first)."""
        ...


class ListHistory:
    """A ``HistorySource`` over a list of messages, position ``i`` being ``messages[i]``."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = list(messages)

    def count(self) -> int:
        return len(self._messages)

    def read(self, position: int) -> Message:
        return self._messages[position]

    def scan(self) -> Iterable[Message]:
        return iter(self._messages)


class SessionHistory:
    """A ``HistorySource`` over one session's stored messages followed by ``unsaved`` ones.

    ``stored`` is how many stored messages count (the run's own number, so a message another
    process adds meanwhile is not seen); None counts them once, on first use. A read loads the
    rows from that position on (R-CKP-4); a search loads every stored message, as the scan of
    R-SRCH-1 does: no session offers a search of its own messages.
    """

    def __init__(self, session: StatefulSession, unsaved: Sequence[Message] = (), stored: int | None = None) -> None:
        self._session = session
        self._unsaved = list(unsaved)
        self._stored = stored

    def _stored_count(self) -> int:
        if self._stored is None:
            self._stored = len(self._session.get_messages(0))
        return self._stored

    def count(self) -> int:
        return self._stored_count() + len(self._unsaved)

    def read(self, position: int) -> Message:
        stored = self._stored_count()
        if position >= stored:
            return self._unsaved[position - stored]
        return self._session.get_messages_from(position)[0]

    def scan(self) -> Iterable[Message]:
        yield from self._session.get_messages(0)[: self._stored_count()]
        yield from self._unsaved


def _integer_member(obj: dict[str, Any], member: str) -> int:
    value = obj[member]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentsError(f'member "{member}" must be an integer, got {json_kind(value)}')
    if value < 0:
        raise ArgumentsError(f'member "{member}" must not be negative')
    return value


def _check_members(obj: dict[str, Any], known: Sequence[str]) -> None:
    """R-RCL-5, R-RCL-6: a member the tool does not define is an error, not ignored."""
    for member in obj:
        if member not in known:
            raise ArgumentsError(f'unknown member "{member}"')


def _body(message: Message) -> str:
    """What a page shows of a message (R-RCL-2): its content, then one line per call."""
    lines = [message.content] if message.content else []
    lines += [RECALL_CALL_LINE.format(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls]
    return "\n".join(lines)


def _call_name(history: HistorySource, position: int, call_id: str) -> str:
    """The name of the call a result answers: in the nearest earlier message that is not a result."""
    for earlier in range(position - 1, -1, -1):
        message = history.read(earlier)
        if not message.tool_call_id:
            return next((call.name for call in message.tool_calls if call.id == call_id), "")
    return ""


def _label(message: Message, name: str = "") -> str:
    if not message.tool_call_id:
        return message.role
    template = RECALL_TOOL_RESULT_LABEL if name else RECALL_RESULT_LABEL
    return template.format(role=message.role, call_id=message.tool_call_id, name=name)


def _page(history: HistorySource, position: int, offset: int) -> str:
    """R-RCL-2: the page of the message at ``position`` that holds byte ``offset`` of its body."""
    count = history.count()
    if position >= count:
        if count == 0:
            return RECALL_NO_MESSAGES.format(position=position)
        return RECALL_NO_POSITION.format(position=position, last=count - 1)
    message = history.read(position)
    data = _body(message).encode("utf-8")
    if offset > 0 and offset >= len(data):
        return RECALL_PAST_END.format(offset=offset, position=position, total=len(data))
    start = offset
    while start > 0 and data[start] & 0xC0 == 0x80:  # back to the first byte of its character
        start -= 1
    end = min(len(data), start + RECALL_MAX_BYTES)
    while end < len(data) and data[end] & 0xC0 == 0x80:  # back to a character boundary
        end -= 1
    name = _call_name(history, position, message.tool_call_id) if message.tool_call_id else ""
    return RECALL_PAGE.format(
        position=position,
        label=_label(message, name),
        start=start,
        end=end,
        total=len(data),
        next=RECALL_NEXT_PAGE.format(offset=end) if end < len(data) else "",
        text=data[start:end].decode("utf-8"),
    )


def _search(history: HistorySource, terms: Sequence[str]) -> str:
    """R-RCL-3: the newest matching messages, leaving out what recall itself answered."""
    recall_calls: set[str] = set()
    newest: collections.deque[tuple[int, Message]] = collections.deque(maxlen=RECALL_SEARCH_LIMIT)
    total = 0
    for position, message in enumerate(history.scan()):
        if message.tool_call_id not in recall_calls and matches(message.content.lower(), terms):
            total += 1
            newest.append((position, message))
        recall_calls.update(call.id for call in message.tool_calls if call.name == RECALL_TOOL.name)
    if not total:
        return RECALL_NO_MATCH
    lines = [RECALL_MATCHES.format(shown=len(newest), total=total)]
    for position, message in reversed(newest):
        lines.append(
            RECALL_HIT.format(
                position=position,
                label=_label(message),
                total=len(_body(message).encode("utf-8")),
                snippet=make_snippet(message.content, terms[0]),
            )
        )
    return "\n".join(lines)


def recall(history: HistorySource, arguments: str) -> str:
    """The observation of one ``recall`` call (R-RCL-2 … R-RCL-5); only ``history`` is read.

    Raises:
        Exception: only what ``history`` raises; ``run_engine_tool`` turns it into an observation.
    """
    try:
        obj = parse_object(arguments)
        _check_members(obj, _RECALL_MEMBERS)
        if ("position" in obj) == ("query" in obj) or ("offset" in obj and "query" in obj):
            raise ArgumentsError('expected either "position" (with an optional "offset") or "query"')
        if "query" in obj:
            query = required_string(obj, "query")
            if not query.split():
                raise ArgumentsError('member "query" holds no word to search for')
            return _search(history, [term.lower() for term in query.split()])
        position = _integer_member(obj, "position")
        offset = _integer_member(obj, "offset") if "offset" in obj else 0
    except ArgumentsError as exc:
        return INVALID_ARGUMENTS.format(name=RECALL_TOOL.name, detail=exc)
    return _page(history, position, offset)


def _todo_item(value: object, index: int) -> TodoItem:
    """One item of a todo call (R-RCL-6); ArgumentsError naming ``todos[index]``."""
    try:
        if not isinstance(value, dict):
            raise ArgumentsError(f"expected a JSON object, got {json_kind(value)}")
        _check_members(value, _TODO_ITEM_MEMBERS)
        content = required_string(value, "content")
        status = required_string(value, "status")
        item_id = required_string(value, "id") if "id" in value else str(index + 1)
        if not content.strip():
            raise ArgumentsError('member "content" is blank')
        if len(content) > TODO_CONTENT_LIMIT:
            raise ArgumentsError(f'member "content" is longer than {TODO_CONTENT_LIMIT} characters')
        if status not in TODO_STATUSES:
            raise ArgumentsError('member "status" must be "pending", "in_progress" or "completed"')
    except ArgumentsError as exc:
        raise ArgumentsError(f"todos[{index}]: {exc}") from None
    return TodoItem(item_id, content, status)


def write_todos(arguments: str, save: Callable[[list[TodoItem]], None]) -> str:
    """The observation of one ``todo`` call (R-RCL-6, R-RCL-7); ``save`` gets the new plan.

    Bad arguments save nothing. ``save`` replaces the whole plan (``LongSessionState.save_todos``).

    Raises:
        Exception: only what ``save`` raises; ``run_engine_tool`` turns it into an observation.
    """
    try:
        obj = parse_object(arguments)
        _check_members(obj, ("todos",))
        if "todos" not in obj:
            raise ArgumentsError('missing required member "todos"')
        values = obj["todos"]
        if not isinstance(values, list):
            raise ArgumentsError(f'member "todos" must be an array, got {json_kind(values)}')
        if len(values) > TODO_ITEM_LIMIT:
            raise ArgumentsError(f'member "todos" holds {len(values)} items; at most {TODO_ITEM_LIMIT} are allowed')
        items = [_todo_item(value, index) for index, value in enumerate(values)]
    except ArgumentsError as exc:
        return INVALID_ARGUMENTS.format(name=TODO_TOOL.name, detail=exc)
    save(items)
    return TODO_SAVED.format(plan=plan_lines(items)) if items else TODO_CLEARED


def run_engine_tool(name: str, arguments: str, history: HistorySource, save: Callable[[list[TodoItem]], None]) -> str:
    """The observation of a call of one of ``ENGINE_TOOLS``; never raises an ``Exception`` (R-RCL-9).

    Args:
        name: the tool's name, ``recall`` or ``todo``; any other gives R-TOOL-2's unknown-tool text.
        arguments: the raw JSON text of the call.
        history: the session's messages, for ``recall``.
        save: replaces the session's plan, for ``todo``.
    """
    try:
        if name == RECALL_TOOL.name:
            return replace_lone_surrogates(recall(history, arguments))
        if name == TODO_TOOL.name:
            return replace_lone_surrogates(write_todos(arguments, save))
        return replace_lone_surrogates(UNKNOWN_TOOL.format(name=name))
    except Exception as exc:  # R-TOOL-7: a failing session is an observation, not a crash
        return replace_lone_surrogates(TOOL_FAILED.format(message=str(exc) or "the tool failed"))


class OwnTools:
    """The part that gives an engine its own tools (R-LONG-18): ``ENGINE_TOOLS`` offered beside the
    registry's, their calls answered by the engine, never by the registry.

    An engine without it offers the registry's tools alone. With it, a summary says that removed
    messages can be recalled (R-LONG-13).
    """

    def offer(self, tools: Sequence[ToolDefinition]) -> list[ToolDefinition]:
        """``tools`` and then ``ENGINE_TOOLS``, which replace any of the same name."""
        return [tool for tool in tools if tool.name not in _ENGINE_TOOL_NAMES] + list(ENGINE_TOOLS)

    def answers(self, name: str) -> bool:
        """Whether a call of ``name`` is one of these tools'."""
        return name in _ENGINE_TOOL_NAMES

    def answer(self, name: str, arguments: str, history: HistorySource, session: Session | None) -> str:
        """The observation of the call; ``todo`` keeps its plan in ``session``, the run's own."""

        def save(todos: list[TodoItem]) -> None:
            if session is None:  # R-LONG-18: the failure becomes the call's observation
                raise engine_error(NO_SESSION, NO_SESSION_FOR_PLAN)
            stateful(session).save_todos(todos)

        return run_engine_tool(name, arguments, history, save)
