"""Message values and their canonical JSON form (SPEC R-MSG-1 … R-MSG-9).

This module is the only place that maps messages to and from JSON: the SQLite columns,
the fixtures and the conformance adapter all go through ``to_dict`` / ``from_dict``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Final

from .._harness9_error import Harness9Error
from .strict_json import describe

__all__ = [
    "CHUNK_DONE",
    "CHUNK_ERROR",
    "CHUNK_TEXT",
    "CHUNK_TYPES",
    "ROLES",
    "ROLE_ASSISTANT",
    "ROLE_SYSTEM",
    "ROLE_USER",
    "Message",
    "SchemaError",
    "StreamChunk",
    "ToolCall",
    "ToolDefinition",
    "Usage",
    "check_keys",
    "check_str",
    "messages_from_list",
    "messages_to_list",
]

# R-MSG-1: the only roles. A tool result is a user message with a tool_call_id.
ROLE_SYSTEM: Final = "system"
ROLE_USER: Final = "user"
ROLE_ASSISTANT: Final = "assistant"
ROLES: Final = (ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT)

# R-MSG-7: stream chunk kinds.
CHUNK_TEXT: Final = "text"
CHUNK_DONE: Final = "done"
CHUNK_ERROR: Final = "error"
CHUNK_TYPES: Final = (CHUNK_TEXT, CHUNK_DONE, CHUNK_ERROR)


class SchemaError(Harness9Error, ValueError):
    """A value does not have the shape R-MSG-1 … R-MSG-9 require.

    Attributes:
        path: where the fault is, e.g. ``message[3].role``.
        code: the conformance error code, ``schema_error``.
    """

    code: ClassVar[str] = "schema_error"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def check_str(value: object, path: str) -> str:
    """``value`` if it is a string of Unicode scalar values (R-MSG-6); SchemaError naming ``path`` otherwise."""
    if not isinstance(value, str):
        raise SchemaError(path, f"expected a string, got {describe(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError(
            path, f"lone surrogate U+{ord(value[exc.start]):04X} at index {exc.start} is not Unicode"
        ) from None
    return value


def _check_int(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(path, f"expected an integer, got {describe(value)}")
    return value


def check_keys(data: object, path: str, required: Sequence[str], optional: Sequence[str]) -> Mapping[str, Any]:
    """``data`` if it is an object with every ``required`` key and no key outside ``required`` and ``optional``."""
    if not isinstance(data, Mapping):
        raise SchemaError(path, f"expected an object, got {describe(data)}")
    for key in required:
        if key not in data:
            raise SchemaError(f"{path}.{key}", "is required")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise SchemaError(f"{path}.{unknown[0]}", "is not a known field")
    return data


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call made by the assistant.

    ``arguments`` is the raw JSON text exactly as the model produced it; it may be
    invalid JSON and is never re-serialised (R-MSG-3).
    """

    id: str
    name: str
    arguments: str = ""

    def __post_init__(self) -> None:
        check_str(self.id, "tool_call.id")
        check_str(self.name, "tool_call.name")
        check_str(self.arguments, "tool_call.arguments")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, data: object, path: str = "tool_call") -> ToolCall:
        d = check_keys(data, path, ("id", "name", "arguments"), ())
        return cls(
            check_str(d["id"], f"{path}.id"),
            check_str(d["name"], f"{path}.name"),
            check_str(d["arguments"], f"{path}.arguments"),
        )


def _freeze_json(value: object, path: str) -> Any:
    """A read-only deep copy of a JSON value: objects become mapping proxies, arrays tuples.

    Every string, keys included, must be Unicode (R-MSG-6); anything that is not JSON is refused.
    """
    if isinstance(value, Mapping):
        frozen = {}
        for key, item in value.items():
            check_str(key, f"{path} key")
            frozen[key] = _freeze_json(item, f"{path}.{key}")
        return MappingProxyType(frozen)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze_json(item, f"{path}[{i}]") for i, item in enumerate(value))
    if isinstance(value, str):
        return check_str(value, path)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise SchemaError(path, f"expected a JSON value, got {describe(value)}")


def _thaw_json(value: Any) -> Any:
    """A plain, mutable copy of a value made by ``_freeze_json``."""
    if isinstance(value, Mapping):
        return {key: _thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thaw_json(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool offered to the model (R-MSG-4).

    ``input_schema`` is a JSON object or None. It is copied on construction into a read-only
    form (mapping proxies and tuples), so a definition never changes after it is built (R-MSG-9);
    ``to_dict`` hands out a fresh plain copy.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        check_str(self.name, "tool.name")
        check_str(self.description, "tool.description")
        if self.input_schema is not None and not isinstance(self.input_schema, Mapping):
            raise SchemaError("tool.input_schema", f"expected an object or null, got {describe(self.input_schema)}")
        if self.input_schema is not None:
            object.__setattr__(self, "input_schema", _freeze_json(self.input_schema, "tool.input_schema"))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": _thaw_json(self.input_schema)}

    @classmethod
    def from_dict(cls, data: object, path: str = "tool") -> ToolDefinition:
        d = check_keys(data, path, ("name", "description"), ("input_schema",))
        schema = d.get("input_schema")
        if schema is not None and not isinstance(schema, Mapping):
            raise SchemaError(f"{path}.input_schema", f"expected an object or null, got {describe(schema)}")
        return cls(
            check_str(d["name"], f"{path}.name"),
            check_str(d["description"], f"{path}.description"),
            None if schema is None else _freeze_json(schema, f"{path}.input_schema"),
        )


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one provider call (R-MSG-5; what the numbers mean is R-USE)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        if self.cache_read_tokens is not None:
            out["cache_read_tokens"] = self.cache_read_tokens
        if self.cache_write_tokens is not None:
            out["cache_write_tokens"] = self.cache_write_tokens
        return out

    @classmethod
    def from_dict(cls, data: object, path: str = "usage") -> Usage:
        optional = ("cache_read_tokens", "cache_write_tokens")
        d = check_keys(data, path, ("input_tokens", "output_tokens"), optional)
        extra = {k: _check_int(d[k], f"{path}.{k}") for k in optional if k in d}
        return cls(
            _check_int(d["input_tokens"], f"{path}.input_tokens"),
            _check_int(d["output_tokens"], f"{path}.output_tokens"),
            **extra,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message (R-MSG-1, R-MSG-2).

    ``tool_calls`` may be given as any sequence; it is stored as a tuple so that messages
    are immutable and compare by value.
    """

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = field(default=())
    tool_call_id: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise SchemaError("message.role", f"expected 'system', 'user' or 'assistant', got {describe(self.role)}")
        check_str(self.content, "message.content")
        check_str(self.tool_call_id, "message.tool_call_id")
        calls = tuple(self.tool_calls)
        for i, call in enumerate(calls):
            if not isinstance(call, ToolCall):
                raise SchemaError(f"message.tool_calls[{i}]", f"expected a ToolCall, got {describe(call)}")
        object.__setattr__(self, "tool_calls", calls)

    @property
    def is_tool_result(self) -> bool:
        """True for an observation: a message answering a tool call."""
        return self.tool_call_id != ""

    def to_dict(self) -> dict[str, Any]:
        """The canonical form of R-MSG-2: empty ``tool_calls`` and ``tool_call_id`` are omitted."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        return out

    @classmethod
    def from_dict(cls, data: object, path: str = "message") -> Message:
        """Parse the form of R-MSG-2; raises SchemaError naming the path of the first fault."""
        d = check_keys(data, path, ("role", "content"), ("tool_calls", "tool_call_id"))
        role = d["role"]
        if role not in ROLES:
            raise SchemaError(f"{path}.role", f"expected 'system', 'user' or 'assistant', got {describe(role)}")
        calls = d.get("tool_calls", [])
        if not isinstance(calls, list):
            raise SchemaError(f"{path}.tool_calls", f"expected an array, got {describe(calls)}")
        return cls(
            role,
            check_str(d["content"], f"{path}.content"),
            tuple(ToolCall.from_dict(c, f"{path}.tool_calls[{i}]") for i, c in enumerate(calls)),
            check_str(d.get("tool_call_id", ""), f"{path}.tool_call_id"),
        )


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """One item of a provider stream (R-MSG-7): a text delta, the final message, or an error.

    ``failure`` is the typed error behind an error chunk whose provider had one (this package's
    providers always do), ``error`` being its text; the engine then takes the code and message
    from it rather than reading them back out of the text (R-ENG-17). It is no part of the
    chunk's value: not compared, not in ``to_dict``.
    """

    type: str
    delta: str = ""
    message: Message | None = None
    error: str = ""
    usage: Usage | None = None
    failure: Harness9Error | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.type not in CHUNK_TYPES:
            raise SchemaError("stream_chunk.type", f"expected one of {', '.join(CHUNK_TYPES)}, got {describe(self.type)}")

    def to_dict(self) -> dict[str, Any]:
        """JSON with the seed's omitempty fields left out."""
        out: dict[str, Any] = {"type": self.type}
        if self.delta:
            out["delta"] = self.delta
        if self.message is not None:
            out["message"] = self.message.to_dict()
        if self.error:
            out["error"] = self.error
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        return out


def messages_from_list(items: object, path: str = "messages") -> list[Message]:
    """Parse a JSON array of messages (R-MSG-2), naming the index of the first bad one."""
    if not isinstance(items, list):
        raise SchemaError(path, f"expected an array, got {describe(items)}")
    return [Message.from_dict(item, f"{path}[{i}]") for i, item in enumerate(items)]


def messages_to_list(msgs: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in msgs]
