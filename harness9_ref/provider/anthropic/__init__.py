"""The Anthropic Messages wire format, free of I/O (SPEC R-PRV-2, R-PRV-3, R-PRV-8 … R-PRV-12,
R-PRV-14, R-PRV-18, R-PRV-24, R-PRV-26, R-USE-4, R-USE-5).

- ``build_request(model, messages, tools, *, stream, api_key, base_url, reply_limit=0) -> HttpRequest``
- ``build_count_request(model, messages, tools, *, api_key, base_url) -> HttpRequest`` (R-PRV-24)
- ``reserved_output_tokens(model) -> int``: the ``max_tokens`` sent (R-PRV-26)
- ``parse_response(status, headers, body) -> (Message, Usage | None)``
- ``parse_count_response(status, headers, body) -> int`` (R-PRV-24)
- ``parse_error(status, headers, body) -> ProviderError``
- ``StreamAssembler()`` with ``feed(event) -> list[StreamChunk]`` and ``finish()``
- ``parse_stream(status, headers, chunks) -> list[StreamChunk]``
"""

from . import _request, _response, _stream
from ._request import *
from ._response import *
from ._stream import *

__all__ = [*_request.__all__, *_response.__all__, *_stream.__all__]
