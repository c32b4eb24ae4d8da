"""The OpenAI Chat Completions wire format, free of I/O (SPEC R-PRV-2 … R-PRV-7, R-PRV-13,
R-PRV-17, R-PRV-26, R-USE-2, R-USE-3).

- ``build_request(model, messages, tools, *, stream, api_key, base_url, reply_limit=0) -> HttpRequest``
- ``reserved_output_tokens(model) -> int``: always 0, no ``max_tokens`` is sent (R-PRV-26)
- ``parse_response(status, headers, body) -> (Message, Usage | None)``
- ``parse_error(status, headers, body) -> ProviderError``
- ``StreamAssembler()`` with ``feed(event) -> list[StreamChunk]`` and ``finish()``
- ``parse_stream(status, headers, chunks) -> list[StreamChunk]``
"""

from . import _request, _response, _stream
from ._request import *
from ._response import *
from ._stream import *

__all__ = [*_request.__all__, *_response.__all__, *_stream.__all__]
