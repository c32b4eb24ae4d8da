"""The message schema shared by every part of harness9-ref (SPEC section "Messages")."""

from ._canonical_json import canonical_json
from ._message import (
    CHUNK_DONE,
    CHUNK_ERROR,
    CHUNK_TEXT,
    CHUNK_TYPES,
    ROLE_ASSISTANT,
    ROLE_SYSTEM,
    ROLE_USER,
    ROLES,
    Message,
    SchemaError,
    StreamChunk,
    ToolCall,
    ToolDefinition,
    Usage,
    messages_from_list,
    messages_to_list,
)

__all__ = (
    "CHUNK_DONE",
    "CHUNK_ERROR",
    "CHUNK_TEXT",
    "CHUNK_TYPES",
    "ROLE_ASSISTANT",
    "ROLE_SYSTEM",
    "ROLE_USER",
    "ROLES",
    "Message",
    "SchemaError",
    "StreamChunk",
    "ToolCall",
    "ToolDefinition",
    "Usage",
    "canonical_json",
    "messages_from_list",
    "messages_to_list",
)
