"""An OpenAI-compatible HTTP server on 127.0.0.1 that enforces a context window, for end-to-end tests.

It speaks the Chat Completions wire format (JSON and SSE streams with usage), answers with the
offline provider's deterministic replies (tool calls for ``read``/``run`` prompts, summaries for
summarizer requests), counts a token per 3 bytes (real tokenizers count code and JSON that way,
more than the agent's bytes / 4 estimate) and rejects every request above its window with HTTP 400
``context_length_exceeded``, as the real API does, and a model named in ``unknown_models`` with
its 404 ``model_not_found``. It records the size and the model of every request.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness9_ref.memory.context import SUMMARY_SYSTEM_PROMPT
from harness9_ref.offline import OfflineProvider
from harness9_ref.schema import Message, ToolCall, ToolDefinition, canonical_json

__all__ = ["StrictAPI"]


def _messages(body: dict[str, Any]) -> list[Message]:
    out = []
    for m in body["messages"]:
        calls = tuple(ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or ())
        if m["role"] == "tool":
            out.append(Message("user", m["content"], tool_call_id=m["tool_call_id"]))
        else:
            out.append(Message(m["role"], m.get("content") or "", calls))
    return out


def _tools(body: dict[str, Any]) -> list[ToolDefinition]:
    return [
        ToolDefinition(t["function"]["name"], t["function"]["description"], t["function"].get("parameters"))
        for t in body.get("tools", [])
    ]


@dataclass
class StrictAPI:
    """The server: ``start()``, then point OPENAI_BASE_URL at ``url``; ``stop()`` at the end."""

    window: int
    sizes: list[int] = field(default_factory=list)
    summarizer_prompts: list[str] = field(default_factory=list)
    tools_offered: list[list[str]] = field(default_factory=list)  # the tool names of each chat request
    systems: list[str] = field(default_factory=list)  # the system message of each chat request
    models: list[str] = field(default_factory=list)  # the model of each chat request
    summarizer_models: list[str] = field(default_factory=list)  # the model of each summarizer request
    unknown_models: frozenset[str] = frozenset()  # answered as OpenAI answers a model it does not have
    rejected: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, body: dict[str, Any]) -> int:
        """A token per 3 bytes of every message's text and of the tools' JSON."""
        text = sum(len(json.dumps(m, ensure_ascii=False).encode()) for m in body["messages"])
        tools = sum(len(canonical_json(t).encode()) for t in body.get("tools", []))
        return (text + tools + 2) // 3

    def start(self) -> StrictAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                if not self.path.endswith("/chat/completions"):  # a window probe (R-WIN-2): not served here
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.answer(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        tokens = self.count(body)
        messages, tools = _messages(body), _tools(body)
        with self._lock:
            self.sizes.append(tokens)
            if messages[0].content == SUMMARY_SYSTEM_PROMPT:
                self.summarizer_prompts.append(messages[1].content)
                self.summarizer_models.append(body["model"])
            else:
                self.models.append(body["model"])
                self.tools_offered.append([tool.name for tool in tools])
                self.systems.append(messages[0].content if messages[0].role == "system" else "")
            if tokens > self.window:
                self.rejected += 1
        if body["model"] in self.unknown_models:  # OpenAI's real 404 for a model it does not have
            error = {
                "message": f"The model `{body['model']}` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
            self._send(handler, 404, "application/json", json.dumps({"error": error}).encode())
            return
        if tokens > self.window:
            error = {
                "message": f"This model's maximum context length is {self.window} tokens."
                f" However, your messages resulted in {tokens} tokens.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
            self._send(handler, 400, "application/json", json.dumps({"error": error}).encode())
            return
        reply, usage = OfflineProvider().generate(messages, tools)
        assert reply is not None
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls
        ]
        out_tokens = usage.output_tokens if usage else 1
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
            if calls:
                message["tool_calls"] = calls
            data = {
                "id": "chatcmpl-strict",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": tokens, "completion_tokens": out_tokens, "total_tokens": tokens + out_tokens},
            }
            self._send(handler, 200, "application/json", json.dumps(data).encode())
            return
        chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
        if reply.content:
            chunks.append({"choices": [{"index": 0, "delta": {"content": reply.content}}]})
        for i, c in enumerate(calls):
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, **c}]}}]})
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}]})
        counts = {"prompt_tokens": tokens, "completion_tokens": out_tokens, "total_tokens": tokens + out_tokens}
        chunks.append({"choices": [], "usage": counts})
        payload = b"".join(
            b"data: " + json.dumps({"id": "chatcmpl-strict", "object": "chat.completion.chunk", **c}).encode() + b"\n\n"
            for c in chunks
        )
        self._send(handler, 200, "text/event-stream", payload + b"data: [DONE]\n\n")

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, content_type: str, payload: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
