"""The OpenAI Chat Completions wire format, free of I/O (SPEC R-PRV-2 … R-PRV-7, R-PRV-13,
R-PRV-17, R-PRV-26, R-USE-2, R-USE-3).

- ``build_request(model, messages, tools, *, stream, api_key, base_url, reply_limit=0) -> HttpRequest``
- ``reserved_output_tokens(model) -> int``: always 0, no ``max_tokens`` is sent (R-PRV-26)
- ``parse_response(status, headers, body) -> (Message, Usage | None)``
- ``parse_error(status, headers, body) -> ProviderError``
- ``StreamAssembler()`` with ``feed(event) -> list[StreamChunk]`` and ``finish()``
- ``parse_stream(status, headers, chunks) -> list[StreamChunk]``
"""

from ._request import DEFAULT_BASE_URL, PROVIDER, build_request, reserved_output_tokens
from ._response import parse_error, parse_response, read_usage
from ._stream import SSE_DONE, StreamAssembler, parse_stream

__all__ = (
    "DEFAULT_BASE_URL",
    "PROVIDER",
    "SSE_DONE",
    "StreamAssembler",
    "build_request",
    "parse_error",
    "parse_response",
    "parse_stream",
    "read_usage",
    "reserved_output_tokens",
)
