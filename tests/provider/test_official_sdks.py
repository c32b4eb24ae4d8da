"""The fixtures and the replay server are faithful: the official SDKs read them as we do.

Each recorded exchange is served by the replay server, the official ``openai`` or ``anthropic``
SDK sends the recorded request body, and what the SDK reads (text, tool calls, token counts,
or an error status) must equal what our parser reads from the same bytes. Skipped when the
SDKs are not installed (``pip install '.[sdk]'``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.traffic._record import Exchange, find_exchanges
from conformance.traffic._replay import ReplayServer
from harness9_ref.provider import ProviderError
from harness9_ref.provider import anthropic as anthropic_wire
from harness9_ref.provider import openai as openai_wire
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR

pytestmark = pytest.mark.sdk


@functools.cache
def _sdks() -> tuple[Any, Any]:
    """The ``openai`` and ``anthropic`` modules, imported by the first test that needs them (they
    take seconds to import, which collection would pay in every run), or that test is skipped."""
    return pytest.importorskip("openai"), pytest.importorskip("anthropic")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
# The window answers of local servers (GET /props, GET /v1/models) are no answer our provider parses.
EXCHANGES = sorted((e for e in find_exchanges([FIXTURES]) if e.method == "POST"), key=lambda e: e.name)
COUNT_PATH = "/v1/messages/count_tokens"  # R-PRV-24: Anthropic's token count
# Where SPEC.md deliberately refuses what an SDK accepts: the SDK reads a result, we raise this code.
STRICTER = {
    "openai/stream-cut-off": "stream_cut_off",  # R-PRV-17: no [DONE]
    "anthropic/stream-cut-off": "stream_cut_off",  # R-PRV-18: no message_stop
    "openai/custom-tool-call": "malformed_response",  # R-PRV-13: only function calls
    "openai/legacy-function-call": "malformed_response",  # R-PRV-13
    # R-PRV-17 and R-PRV-28: an empty stream is no answer; the SDK reads it as an empty reply
    "openai/local-llama-cpp-python-silent-stream": "stream_cut_off",
}


def _ours(exchange: Exchange) -> dict[str, Any]:
    """What our pure parser reads from the recorded bytes, in the comparison's terms."""
    wire = openai_wire if exchange.provider == "openai" else anthropic_wire
    if exchange.path == COUNT_PATH:  # R-PRV-24
        return {"input_tokens": anthropic_wire.parse_count_response(exchange.status, exchange.headers, exchange.body)}
    if exchange.stream:
        final = wire.parse_stream(exchange.status, exchange.headers, [exchange.body])[-1]
        if final.type == CHUNK_ERROR:
            return {"error": final.error.partition(": ")[0]}
        assert final.type == CHUNK_DONE and final.message is not None
        message, usage = final.message, final.usage
    else:
        try:
            message, usage = wire.parse_response(exchange.status, exchange.headers, exchange.body)
        except ProviderError as exc:
            return {"error": exc.code}
    return {
        "text": message.content,
        "calls": [(c.id, c.name, _normal(c.arguments)) for c in message.tool_calls],
        "tokens": None if usage is None else (usage.input_tokens, usage.output_tokens),
    }


def _normal(arguments: str) -> Any:
    """Arguments compared as JSON values: the SDKs re-serialise Anthropic's ``input`` objects."""
    try:
        return json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments


def _openai_read(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    if not body.get("stream"):
        completion = client.chat.completions.create(**body)
        message = completion.choices[0].message
        text = (message.content or "") + (message.refusal or "")
        calls = [
            (c.id, c.function.name, _normal(c.function.arguments)) if c.type == "function" else (c.id, c.type, None)
            for c in message.tool_calls or []
        ]
        usage = completion.usage
        return {"text": text, "calls": calls, "tokens": None if usage is None else (usage.prompt_tokens, usage.completion_tokens)}
    pieces: list[str] = []
    fragments: dict[int, dict[str, str]] = {}
    tokens = None
    for chunk in client.chat.completions.create(**body):
        if chunk.usage is not None:
            tokens = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            pieces.append((choice.delta.content or "") + (choice.delta.refusal or ""))
            for frag in choice.delta.tool_calls or []:
                call = fragments.setdefault(frag.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = call["id"] or (frag.id or "")
                call["name"] = call["name"] or ((frag.function and frag.function.name) or "")
                call["arguments"] += (frag.function and frag.function.arguments) or ""
    calls = [(c["id"], c["name"], _normal(c["arguments"])) for _, c in sorted(fragments.items())]
    return {"text": "".join(pieces), "calls": calls, "tokens": tokens}


def _anthropic_read(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    args = {k: v for k, v in body.items() if k != "stream"}
    if body.get("stream"):
        with client.messages.stream(**args) as stream:
            message = stream.get_final_message()
    else:
        message = client.messages.create(**args)
    text = "".join(b.text for b in message.content if b.type == "text")
    calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    u = message.usage
    cached = (u.cache_creation_input_tokens or 0) + (u.cache_read_input_tokens or 0)
    return {"text": text, "calls": calls, "tokens": (u.input_tokens + cached, u.output_tokens)}


def _sdk_read(exchange: Exchange, server: ReplayServer) -> dict[str, Any]:
    base_url = server.base_url_for(exchange.provider)
    openai, anthropic = _sdks()
    try:
        if exchange.provider == "openai":
            client = openai.OpenAI(api_key="test-key", base_url=base_url, max_retries=0, timeout=10)
            return _openai_read(client, exchange.request_body)
        client = anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0, timeout=10)
        if exchange.path == COUNT_PATH:  # the SDK's count request must match the recorded one too
            return {"input_tokens": client.messages.count_tokens(**exchange.request_body).input_tokens}
        return _anthropic_read(client, exchange.request_body)
    except (openai.APIStatusError, anthropic.APIStatusError) as exc:
        return {"status": exc.status_code}
    except (openai.OpenAIError, anthropic.AnthropicError) as exc:
        return {"sdk_error": type(exc).__name__}


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Exchange, ReplayServer]]:
    exchange: Exchange = request.param
    with ReplayServer([exchange], "recorded") as server:
        yield exchange, server
        assert not server.unexpected, server.unexpected


@pytest.mark.parametrize("served", EXCHANGES, ids=[e.name for e in EXCHANGES], indirect=True)
def test_official_sdk_reads_the_fixture_as_we_do(served: tuple[Exchange, ReplayServer]) -> None:
    exchange, server = served
    sdk = _sdk_read(exchange, server)
    ours = _ours(exchange)
    if exchange.status >= 400:
        assert sdk == {"status": exchange.status}
        assert "error" in ours
    elif exchange.name in STRICTER:
        assert "text" in sdk, sdk
        assert ours == {"error": STRICTER[exchange.name]}
    elif "error" in ours:  # an error event inside a 200 stream: the SDK must fail too
        assert "status" in sdk or "sdk_error" in sdk, sdk
    else:
        assert sdk == ours
