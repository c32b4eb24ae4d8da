"""Asking a model server for its window over real HTTP (SPEC R-WIN-2, R-WIN-3; harness9_ref/provider/_window.py).

Each test serves on 127.0.0.1 what one kind of server answers at its endpoint and 404 elsewhere,
as the real servers do, and checks which requests ``ask_window`` made and what it took.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness9_ref.provider import ask_window


@dataclass
class Served:
    """A loopback server answering ``routes`` (``"GET /props"`` → (status, body)) and what it received."""

    url: str
    seen: list[tuple[str, str, str | None, bytes]] = field(default_factory=list)  # method, path, authorization, body


@contextmanager
def server(routes: Mapping[str, tuple[int, bytes]], stall: float = 0.0) -> Iterator[Served]:
    served: list[Served] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            served[0].seen.append((self.command, self.path, self.headers.get("Authorization"), body))
            if stall:
                time.sleep(stall)
            status, answer = routes.get(f"{self.command} {self.path}", (404, b'{"detail":"Not Found"}'))
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a client that stopped waiting for a stalled answer has gone: nobody to answer

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    served.append(Served(f"http://127.0.0.1:{httpd.server_address[1]}/v1"))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield served[0]
    finally:
        httpd.shutdown()
        httpd.server_close()


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def test_llama_cpp_answers_at_props_after_the_models_list() -> None:
    """R-WIN-3: the requests go in R-WIN-2's order and stop at the first that answers."""
    props = {"default_generation_settings": {"n_ctx": 2048}, "total_slots": 1}
    routes = {"GET /v1/models": (200, _json({"object": "list", "data": [{"id": "m.gguf"}]})), "GET /props": (200, _json(props))}
    with server(routes) as served:
        assert ask_window(served.url, "m.gguf") == (2048, "llama.cpp")
    assert [(method, path) for method, path, _, _ in served.seen] == [("GET", "/v1/models"), ("GET", "/props")]


def test_ollama_is_asked_last_with_the_model_in_its_body() -> None:
    show = {"parameters": "num_ctx 8192", "model_info": {"qwen2.context_length": 32768}}
    with server({"POST /api/show": (200, _json(show))}) as served:
        assert ask_window(served.url, "qwen2.5:7b") == (8192, "ollama")
    assert [(method, path) for method, path, _, _ in served.seen] == [
        ("GET", "/v1/models"),
        ("GET", "/props"),
        ("GET", "/api/v0/models"),
        ("POST", "/api/show"),
    ]
    assert json.loads(served.seen[-1][3]) == {"model": "qwen2.5:7b"}


def test_a_server_that_knows_no_endpoint_changes_nothing() -> None:
    """R-WIN-3: 404s, HTML and nonsense are passed over without a word."""
    routes = {"GET /props": (200, b"<html>llama</html>"), "GET /api/v0/models": (200, _json({"data": "nonsense"}))}
    with server(routes) as served:
        assert ask_window(served.url, "m") is None
    assert len(served.seen) == 4


def test_an_absurd_window_is_no_answer() -> None:
    """R-WIN-1 through R-WIN-3: a window of 10^12 at /props is passed over; vLLM's later answer counts."""
    routes = {"GET /props": (200, _json({"n_ctx": 10**12}))}
    with server(routes) as served:
        assert ask_window(served.url, "m") is None


def test_the_key_is_sent_only_when_there_is_one() -> None:
    """R-WIN-3: a local server needs no key; vLLM started with --api-key needs its bearer token."""
    models = {"data": [{"id": "m", "max_model_len": 16384}]}
    with server({"GET /v1/models": (200, _json(models))}) as served:
        assert ask_window(served.url, "m") == (16384, "vllm")
        assert ask_window(served.url, "m", "sk-local") == (16384, "vllm")
    assert [authorization for _, _, authorization, _ in served.seen] == [None, "Bearer sk-local"]


def test_no_server_at_all_is_answered_at_once() -> None:
    """R-WIN-3: a refused connection costs no wait."""
    with server({}) as served:
        url = served.url
    started = time.monotonic()
    assert ask_window(url, "m") is None
    assert time.monotonic() - started < 2


def test_a_stalling_server_costs_the_probe_timeout_per_request_at_most() -> None:
    """R-WIN-3: each request has its own short timeout; a server that never answers is given up on."""
    with server({"GET /props": (200, _json({"n_ctx": 2048}))}, stall=3.0) as served:
        started = time.monotonic()
        assert ask_window(served.url, "m", timeout=0.2) is None
        assert time.monotonic() - started < 2.5
