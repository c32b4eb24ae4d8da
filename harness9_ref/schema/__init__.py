"""The message schema shared by every part of harness9-ref (SPEC section "Messages").

``strict_json`` is the one JSON reader of the package (``loads``, ``describe``, value positions).
"""

from . import strict_json
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
    check_keys,
    check_str,
    messages_from_list,
    messages_to_list,
)
from ._unicode import replace_lone_surrogates

__all__ = (
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
    "canonical_json",
    "check_keys",
    "check_str",
    "messages_from_list",
    "messages_to_list",
    "replace_lone_surrogates",
    "strict_json",
)
