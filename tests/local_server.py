"""A model server on 127.0.0.1 that behaves as a local one does, for end-to-end tests
(SPEC R-CLI-21 … R-CLI-23, R-TUI-26, R-TUI-27).

It speaks the OpenAI streaming format, as llama.cpp's ``llama-server``, vLLM, Ollama and LM
Studio do, or the Anthropic one: it takes the request, says nothing while it "reads the prompt"
(``delay`` seconds, before the response's head, as ``llama-server`` does on a CPU), then streams
``REPLY`` in three pieces. It keeps the headers of every request, so a test sees what key, if
any, was sent.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final

__all__ = ["REPLY", "LocalServer"]

REPLY: Final = ("Hello", " from", " the local model.")


@dataclass
class LocalServer:
    """An OpenAI- or Anthropic-compatible server on 127.0.0.1 that takes ``delay`` seconds before
    it answers; it keeps the headers of every request."""

    delay: float = 0.0
    anthropic: bool = False
    headers: list[dict[str, str]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> LocalServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                if not self.path.endswith(("/chat/completions", "/v1/messages")):  # a window probe (R-WIN-2)
                    self.send_error(404)
                    return
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if server.stop.wait(server.delay):
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for payload in server.events():
                    self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
                    self.wfile.flush()
                if not server.anthropic:
                    self.wfile.write(b"data: [DONE]\n\n")

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def events(self) -> list[dict[str, object]]:
        if not self.anthropic:
            return [{"choices": [{"index": 0, "delta": {"content": piece}}]} for piece in REPLY]
        text = [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in REPLY]
        return [
            {"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            *text,
            {"type": "content_block_stop", "index": 0},
            {"type": "message_stop"},
        ]

    @property
    def url(self) -> str:
        port = self._http.server_address[1]
        return f"http://127.0.0.1:{port}" if self.anthropic else f"http://127.0.0.1:{port}/v1"

    @property
    def server(self) -> str:
        return f"127.0.0.1:{self._http.server_address[1]}"

    def close(self) -> None:
        self.stop.set()
        self._http.shutdown()
        self._http.server_close()
