"""What llama.cpp's ``llama-server`` really sends, through the project's own OpenAI provider
(SPEC R-PRV-13, R-PRV-17, R-USE-2, R-USE-3, R-ERR-3, R-ERR-4, R-ERR-9).

The server (tests/llama_server.py: SmolLM2-135M-Instruct, a window of 2048 tokens, one slot,
replies capped at 48 tokens) is asked what the agent asks it: ``OpenAIProvider`` pointed at its
``/v1``, the request exactly as the provider builds it (no temperature or seed is sent; the
server's own greedy sampling makes the words repeatable, but they belong to the model and its
build, so no test reads them). What these tests pin, as observed on llama.cpp build 11434:

- A whole reply is a Chat Completions body with ``usage`` (``prompt_tokens`` is the chat
  template's tokens: the count of ``/apply-template`` then ``/tokenize``) and llama.cpp's own
  ``timings``; a stream honours ``stream_options.include_usage``: after the chunk with the
  ``finish_reason`` comes a chunk with ``"choices": []`` and the usage, then ``[DONE]``. So
  every reply from this server carries usage; a stream without usage, as the hand-written
  ``openai/stream-no-usage`` has it, comes from servers that ignore ``stream_options``.
- A request over the window is refused before any token is generated, streamed or not, with
  the same HTTP 400 JSON body (a stream request gets no event stream at all):
  ``{"error":{"code":400,"message":"request (N tokens) exceeds the available context size
  (M tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":N,
  "n_ctx":M}}``. R-ERR-9's type rule makes it ``ContextLengthExceeded`` in both cases.
- The window is at ``GET /props`` as ``default_generation_settings.n_ctx`` (not at the top
  level) and at ``GET /v1/models`` as ``data[0].meta.n_ctx``, beside ``meta.n_ctx_train``, the
  context the model was trained for (8192 for SmolLM2), which is not the server's window.
- SmolLM2's chat template has no place for tools: tool definitions are accepted and left out
  of the prompt, so they cost no prompt tokens on this model.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from conformance.runner._cases import PROJECT_ROOT
from conformance.traffic._record import load_exchange
from harness9_ref.provider import ContextLengthExceeded, OpenAIProvider, openai
from harness9_ref.schema import CHUNK_DONE, CHUNK_ERROR, CHUNK_TEXT, Message, ToolDefinition
from tests.llama_server import MODEL_ALIAS, LlamaServer

REPLY_CAP = 48  # tests/llama_server.py's n_predict
SYSTEM = "You are harness9, a coding agent working in the user's repository. Answer briefly."
ASKED = [Message("system", SYSTEM), Message("user", "What does git status show?")]
TOO_LONG = [Message("system", SYSTEM), Message("user", "word " * 3000)]  # 3,000 words: over 2,048 tokens
READ_FILE = ToolDefinition(
    "read_file",
    "Read a file of the working directory.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def provider(server: LlamaServer) -> OpenAIProvider:
    return OpenAIProvider(MODEL_ALIAS, "", server.openai_base_url)


def wire(messages: list[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def raw(server: LlamaServer, messages: list[Message], *, stream: bool) -> tuple[int, str, bytes]:
    """Send the provider's own request with urllib: the status, content type and body bytes."""
    built = openai.build_request(MODEL_ALIAS, messages, [], stream=stream, api_key="", base_url=server.openai_base_url)
    request = urllib.request.Request(built.url, data=built.body, headers=dict(built.headers), method=built.method)
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, answer.headers["content-type"], answer.read()
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, refused.headers["content-type"], refused.read()


def events(body: bytes) -> list[str]:
    """The ``data:`` payloads of an event stream, in order."""
    return [line[len("data: ") :] for line in body.decode("utf-8").split("\n") if line.startswith("data: ")]


def test_an_unstreamed_reply_parses_with_the_servers_own_token_count(llama_server: LlamaServer) -> None:
    message, usage = provider(llama_server).generate(ASKED, [])
    assert message.role == "assistant" and message.content.strip() and message.tool_calls == ()
    assert usage is not None
    assert usage.input_tokens == llama_server.count_tokens(wire(ASKED))
    assert 1 <= usage.output_tokens <= REPLY_CAP


def test_a_streamed_reply_parses_and_carries_usage(llama_server: LlamaServer) -> None:
    chunks = list(provider(llama_server).generate_stream(ASKED, []))
    assert [c.type for c in chunks[:-1]] == [CHUNK_TEXT] * (len(chunks) - 1) and len(chunks) > 1
    done = chunks[-1]
    assert done.type == CHUNK_DONE and done.message is not None
    assert done.message.content == "".join(c.delta for c in chunks[:-1])
    assert done.usage is not None and done.usage.input_tokens == llama_server.count_tokens(wire(ASKED))
    assert len(chunks) - 1 <= done.usage.output_tokens <= REPLY_CAP


def test_the_stream_on_the_wire_opens_with_the_role_and_ends_with_a_usage_chunk(llama_server: LlamaServer) -> None:
    status, kind, body = raw(llama_server, ASKED, stream=True)
    assert (status, kind) == (200, "text/event-stream")
    payloads = events(body)
    assert payloads[-1] == "[DONE]"
    first, finish, usage = (json.loads(p) for p in (payloads[0], payloads[-3], payloads[-2]))
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": None}
    assert finish["choices"][0]["delta"] == {} and finish["choices"][0]["finish_reason"] in ("stop", "length")
    assert usage["choices"] == [] and set(usage["usage"]) >= {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert "timings" in usage and all(chunk["object"] == "chat.completion.chunk" for chunk in (first, finish, usage))


def _overflow(server: LlamaServer) -> tuple[int, bytes]:
    """The refusal's token count and its exact body, as llama-server writes it."""
    n = server.count_tokens(wire(TOO_LONG))
    message = f"request ({n} tokens) exceeds the available context size ({server.ctx_size} tokens), try increasing it"
    body = {"error": {"code": 400, "message": message, "type": "exceed_context_size_error",
                      "n_prompt_tokens": n, "n_ctx": server.ctx_size}}  # fmt: skip
    return n, json.dumps(body, separators=(",", ":")).encode()


def test_a_request_over_the_window_is_refused_with_http_400_exceed_context_size_error(llama_server: LlamaServer) -> None:
    n, body = _overflow(llama_server)
    assert n > llama_server.ctx_size
    assert raw(llama_server, TOO_LONG, stream=False) == (400, "application/json; charset=utf-8", body)
    with pytest.raises(ContextLengthExceeded) as refused:
        provider(llama_server).generate(TOO_LONG, [])
    message = json.loads(body)["error"]["message"]
    assert str(refused.value) == f"openai: HTTP 400 exceed_context_size_error: {message}"
    assert (refused.value.status, refused.value.error_type) == (400, "exceed_context_size_error")


def test_a_streamed_request_over_the_window_gets_the_same_json_refusal_and_no_stream(llama_server: LlamaServer) -> None:
    _, body = _overflow(llama_server)
    assert raw(llama_server, TOO_LONG, stream=True) == (400, "application/json; charset=utf-8", body)
    chunks = list(provider(llama_server).generate_stream(TOO_LONG, []))
    assert [c.type for c in chunks] == [CHUNK_ERROR]
    message = json.loads(body)["error"]["message"]
    assert chunks[0].error == f"context_length_exceeded: openai: HTTP 400 exceed_context_size_error: {message}"


@pytest.mark.parametrize("name", ["local-llama-cpp-error-context-size", "local-llama-cpp-stream-error-context-size"])
def test_the_recorded_refusals_are_what_the_live_server_sends(llama_server: LlamaServer, name: str) -> None:
    """The fixtures of the ``local`` profile (SPEC R-PROF-4) stay true to the server they came from."""
    recorded = load_exchange(PROJECT_ROOT / "fixtures" / "providers" / "openai" / name)
    request = urllib.request.Request(
        llama_server.base_url + recorded.path, data=json.dumps(recorded.request_body).encode(),
        headers=dict(recorded.request_headers),
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused, urllib.request.urlopen(request, timeout=120):
        pass
    with refused.value as answer:
        assert (answer.code, answer.read()) == (recorded.status, recorded.body)


@pytest.mark.parametrize("ctx_size", [1024, 2048])
def test_the_window_is_at_props_and_v1_models_beside_the_trained_context(
    llama_servers: Callable[[int], LlamaServer], ctx_size: int
) -> None:
    server = llama_servers(ctx_size)
    props = server.get("/props")
    assert props["default_generation_settings"]["n_ctx"] == ctx_size and "n_ctx" not in props
    assert (props["total_slots"], props["model_alias"]) == (1, MODEL_ALIAS)
    models = server.get("/v1/models")
    assert [model["id"] for model in models["data"]] == [MODEL_ALIAS]
    meta = models["data"][0]["meta"]
    assert (meta["n_ctx"], meta["n_ctx_train"]) == (ctx_size, 8192)


def test_tokenize_counts_with_the_models_own_vocabulary(llama_server: LlamaServer) -> None:
    assert llama_server.post("/tokenize", {"content": "Hello world"}) == {"tokens": [19556, 905]}
    pieces = llama_server.post("/tokenize", {"content": "Hello world", "with_pieces": True})["tokens"]
    assert [piece["piece"] for piece in pieces] == ["Hello", " world"]
    template = llama_server.post("/apply-template", {"messages": wire(ASKED[1:])})["prompt"]
    assert template.startswith("<|im_start|>system\n") and template.endswith("<|im_start|>assistant\n")


def test_tool_definitions_are_accepted_and_cost_no_prompt_tokens_on_this_model(llama_server: LlamaServer) -> None:
    _, usage = provider(llama_server).generate(ASKED, [READ_FILE])
    assert usage is not None and usage.input_tokens == llama_server.count_tokens(wire(ASKED))
