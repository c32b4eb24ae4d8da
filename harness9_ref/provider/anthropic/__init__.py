"""The Anthropic Messages wire format, free of I/O (SPEC R-PRV-2, R-PRV-3, R-PRV-8 … R-PRV-12,
R-PRV-14, R-PRV-18, R-USE-4, R-USE-5).

- ``build_request(model, messages, tools, *, stream, api_key, base_url) -> HttpRequest``
- ``parse_response(status, headers, body) -> (Message, Usage | None)``
- ``parse_error(status, headers, body) -> ProviderError``
- ``StreamAssembler()`` with ``feed(event) -> list[StreamChunk]`` and ``finish()``
- ``parse_stream(status, headers, chunks) -> list[StreamChunk]``
"""

from ._request import API_VERSION, DEFAULT_BASE_URL, PROVIDER, build_request, tool_input
from ._response import parse_error, parse_response
from ._stream import EVENT_TYPES, StreamAssembler, parse_stream

__all__ = (
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "EVENT_TYPES",
    "PROVIDER",
    "StreamAssembler",
    "build_request",
    "parse_error",
    "parse_response",
    "parse_stream",
    "tool_input",
)
