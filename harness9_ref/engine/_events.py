"""The events of a run (SPEC R-EVT-1 … R-EVT-11).

An event is ``{"type": <type>, "data": <object>}``. Each type has one data class whose
``to_dict`` writes its members in the order SPEC lists them, so ``json.dumps(event.to_dict())``
gives exactly the lines of the example in SPEC section 7.1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from ..schema import Message

__all__ = [
    "CompactionData",
    "ContextPart",
    "ContextReport",
    "DoneData",
    "ErrorData",
    "Event",
    "EventData",
    "EventType",
    "RetryData",
    "SaveFailedData",
    "TextDeltaData",
    "TokenUpdateData",
    "ToolCallData",
    "ToolResultData",
    "WindowData",
]


class EventType(str, Enum):
    """The seven event types of R-EVT-1, ``retry`` (R-EVT-10) and ``save_failed`` (R-EVT-11).

    The value is the ``type`` written in JSON.
    """

    TOKEN_UPDATE = "token_update"
    COMPACTION = "compaction"
    TEXT_DELTA = "text_delta"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    DONE = "done"
    ERROR = "error"
    RETRY = "retry"
    SAVE_FAILED = "save_failed"
    WINDOW = "window"


@dataclass(frozen=True, slots=True)
class TokenUpdateData:
    """R-EVT-2: the context's size in tokens, estimated or as the provider reported it.

    ``context_window`` is the engine's configured window, 0 when unknown.
    """

    estimated_tokens: int
    context_window: int

    def to_dict(self) -> dict[str, Any]:
        return {"estimated_tokens": self.estimated_tokens, "context_window": self.context_window}


@dataclass(frozen=True, slots=True)
class CompactionData:
    """R-EVT-3: what a compaction that saved more than 5% changed (R-ENG-6).

    In long-session mode it also says which tier ran and how many tool results it newly
    cleared (R-LONG-4c, step f); ``tier`` is None outside the mode, and both are then left out.
    """

    tokens_before: int
    tokens_after: int
    msgs_before: int
    msgs_after: int
    tier: str | None = None
    cleared: int = 0

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "msgs_before": self.msgs_before,
            "msgs_after": self.msgs_after,
        }
        if self.tier is not None:
            data["tier"] = self.tier
            data["cleared"] = self.cleared
        return data


@dataclass(frozen=True, slots=True)
class WindowData:
    """R-EVT-12: the engine learned that the context window is smaller than it assumed (R-WIN-5).

    ``source`` says how: ``"error"`` (an overflow error named it) or ``"truncation"`` (the
    server counted far fewer tokens than were sent); ``previous`` is the window it replaces.
    """

    window: int
    previous: int
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"window": self.window, "previous": self.previous, "source": self.source}


@dataclass(frozen=True, slots=True)
class TextDeltaData:
    """R-EVT-4: one non-empty text chunk of the provider's stream."""

    delta: str

    def to_dict(self) -> dict[str, Any]:
        return {"delta": self.delta}


@dataclass(frozen=True, slots=True)
class ToolCallData:
    """R-EVT-5: a tool call about to run; ``arguments`` is the raw text the model produced."""

    id: str
    name: str
    arguments: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class ToolResultData:
    """R-EVT-6: the observation of a tool call."""

    tool_call_id: str
    name: str
    content: str

    def to_dict(self) -> dict[str, Any]:
        return {"tool_call_id": self.tool_call_id, "name": self.name, "content": self.content}


@dataclass(frozen=True, slots=True)
class DoneData:
    """R-EVT-7: the final assistant message and the number of provider calls the run made."""

    message: Message
    turns: int

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message.to_dict(), "turns": self.turns}


@dataclass(frozen=True, slots=True)
class ErrorData:
    """R-EVT-8: why the run failed; ``message`` is one line."""

    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class RetryData:
    """R-EVT-10: a failed provider call is about to be made again after ``delay_seconds``.

    ``attempt`` is the number of the call about to be made (2 for the first retry) out of
    ``max_attempts``; ``code`` and ``message`` are those of the failure (R-ENG-17).
    """

    attempt: int
    max_attempts: int
    delay_seconds: float
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "max_attempts": self.max_attempts,
            "delay_seconds": self.delay_seconds,
            "code": self.code,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class SaveFailedData:
    """R-EVT-11: the run ends with ``unsaved`` of its messages not stored (R-ENG-25).

    ``saved`` messages of the run were stored; ``message`` is the last failed save's error.
    Emitted right before the terminal event, so a consumer can say what was lost.
    """

    saved: int
    unsaved: int
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"saved": self.saved, "unsaved": self.unsaved, "message": self.message}


EventData = (
    TokenUpdateData
    | CompactionData
    | TextDeltaData
    | ToolCallData
    | ToolResultData
    | DoneData
    | ErrorData
    | RetryData
    | SaveFailedData
    | WindowData
)

# R-EVT-1, R-EVT-10, R-EVT-11, R-EVT-12: the one data class of each event type.
DATA_TYPES: Final[Mapping[EventType, type]] = {
    EventType.TOKEN_UPDATE: TokenUpdateData,
    EventType.COMPACTION: CompactionData,
    EventType.TEXT_DELTA: TextDeltaData,
    EventType.TOOL_CALL: ToolCallData,
    EventType.TOOL_RESULT: ToolResultData,
    EventType.DONE: DoneData,
    EventType.ERROR: ErrorData,
    EventType.RETRY: RetryData,
    EventType.SAVE_FAILED: SaveFailedData,
    EventType.WINDOW: WindowData,
}


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a run (R-EVT-1).

    Raises:
        TypeError: ``data`` is not the data class of ``type`` (for example ``ErrorData`` for
            ``EventType.DONE``).
    """

    type: EventType
    data: EventData

    def __post_init__(self) -> None:
        expected = DATA_TYPES[EventType(self.type)]
        if not isinstance(self.data, expected):
            raise TypeError(f"a {EventType(self.type).value!r} event carries {expected.__name__}, got {type(self.data).__name__}")
        object.__setattr__(self, "type", EventType(self.type))

    @property
    def is_terminal(self) -> bool:
        """True for ``done`` and ``error``, the event that ends every run (R-EVT-9)."""
        return self.type in (EventType.DONE, EventType.ERROR)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``{"type", "data"}``, data members in SPEC order (R-EVT-1 … R-EVT-8)."""
        return {"type": self.type.value, "data": self.data.to_dict()}


@dataclass(frozen=True, slots=True)
class ContextPart:
    """One part of the next request: its tokens and how many items it holds (R-LONG-17)."""

    name: str
    tokens: int
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tokens": self.tokens, "count": self.count}


@dataclass(frozen=True, slots=True)
class ContextReport:
    """What the next request holds, by part, as ``/context`` shows it (R-LONG-17).

    ``total`` is the one figure the token updates, the compaction notice and the status bar
    use; ``source`` says how it was counted (``exact``, ``anchored`` or ``estimate``, R-LONG-10);
    ``budget`` is the trigger, 0 when there is none.
    """

    window: int
    budget: int
    total: int
    source: str
    parts: tuple[ContextPart, ...]
    window_source: str = ""  # where the window comes from (R-WIN-7); "" when the engine was not told

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "window": self.window,
            "budget": self.budget,
            "total": self.total,
            "source": self.source,
            "parts": [part.to_dict() for part in self.parts],
        }
        if self.window_source:
            data["window_source"] = self.window_source
        return data
