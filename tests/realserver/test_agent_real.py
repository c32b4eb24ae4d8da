"""The agent against a real llama.cpp server (SPEC R-WIN, R-FIT, R-FOLD-6, R-LONG-7).

The real command (``python -m harness9_ref … run --json``) talks to a private ``llama-server``
(tests/llama_server.py: SmolLM2-135M-Instruct, one slot, greedy, replies capped at 48 tokens)
with no ``--context-window``, as a user who just points the agent at a local server does. What
was broken before: the window was R-LIM-3's 256,000 tokens, a request over the server's 2,048
was refused, a session stayed stuck, summaries grew the context. Checked here on the real thing:
the window is asked of the server, learned from its refusal when the agent was told a larger one,
no request goes over it, and no compaction grows what is sent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness9_ref.memory.context import CHARS_PER_TOKEN
from harness9_ref.memory.storage import Manager
from tests.cli.helpers import ROOT, environment
from tests.llama_server import MODEL_ALIAS, LlamaServer

PRIOR = 4 / 3  # R-LONG-3: the engine assumes a token per 3 bytes until the server has counted


def agent(server: LlamaServer, home: Path, *args: str, timeout: float = 240) -> tuple[int, list[dict[str, Any]], str]:
    """One ``run --json`` of the real command against ``server``: its status, events and standard error."""
    env = {**environment(home), "OPENAI_BASE_URL": server.openai_base_url}  # a local server needs no key (R-CLI-21)
    done = subprocess.run(
        [sys.executable, "-m", "harness9_ref", "--model", MODEL_ALIAS, "--workdir", str(home), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, events, done.stderr


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event["data"] for event in events if event.get("type") == kind]


def test_the_window_is_asked_of_the_server_on_first_use(llama_server: LlamaServer, tmp_path: Path) -> None:
    """R-WIN-3, R-WIN-7: no --context-window, an unknown model: the server's 2048, not 256,000."""
    status, events, err = agent(llama_server, tmp_path, "run", "--json", "Say hello.")
    assert status == 0, err
    assert {update["context_window"] for update in of(events, "token_update")} == {2048}


def test_forty_prompts_in_a_2048_token_window(llama_server: LlamaServer, tmp_path: Path) -> None:
    """Issue's bar: every prompt succeeds, no request is refused as too long or sent over the
    window (the server's own count of each request, R-USE-3, stays within it), and no
    compaction grows the request (R-FOLD-6, R-FIT-1)."""
    counted: list[int] = []
    compactions: list[dict[str, Any]] = []
    for n in range(1, 41):
        prompt = f"Prompt {n}: explain what src/module_{n}.py should contain, with an example function and its test."
        status, events, err = agent(llama_server, tmp_path, "-c", "run", "--json", prompt)
        assert status == 0, (n, err)
        assert not of(events, "window") and not of(events, "error"), (n, events)
        updates = of(events, "token_update")
        counted.append(updates[-2]["estimated_tokens"])  # the server's own count (R-ENG-7), before the closing update (R-TUI-37)
        compactions += of(events, "compaction")
    assert max(counted) <= 2048, counted
    assert compactions, "forty prompts fill a 2048-token window"
    assert all(c["tokens_after"] <= c["tokens_before"] for c in compactions), compactions
    with Manager(tmp_path / "home" / "sessions.db") as manager:
        [row] = manager.recent_sessions(limit=1)
        stored = manager.open_session(row.id).get_messages()
    assert sum(1 for m in stored if m.role == "user" and not m.tool_call_id) == 40  # nothing lost


def test_a_smaller_window_is_learned_from_the_servers_refusal(
    llama_servers: Callable[[int], LlamaServer], tmp_path: Path
) -> None:
    """R-WIN-4, R-WIN-5, R-FIT-1: told 64,000 tokens, the agent sends a piped file the 1024-token
    server refuses; the refusal names 1024, the agent takes it and the recovery fits the request."""
    server = llama_servers(1024)
    text = "\n".join(f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(120))
    env = {**environment(tmp_path), "OPENAI_BASE_URL": server.openai_base_url}  # a local server needs no key (R-CLI-21)
    done = subprocess.run(
        [sys.executable, "-m", "harness9_ref", "--model", MODEL_ALIAS, "--context-window", "64000", "--workdir",
         str(tmp_path), "run", "--json", "Summarise this file."],
        cwd=ROOT, env=env, input=text, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert of(events, "window") == [{"window": 1024, "previous": 64000, "source": "error"}]
    assert of(events, "token_update")[-1]["context_window"] == 1024


def test_a_window_too_small_for_the_system_prompt_says_so_in_one_line(
    llama_servers: Callable[[int], LlamaServer], tmp_path: Path
) -> None:
    """R-FIT-2: a 256-token server cannot hold the system prompt and the tool definitions; the
    run makes no call, names the sizes in one line and keeps the prompt."""
    server = llama_servers(256)
    status, events, err = agent(server, tmp_path, "run", "--json", "Hello?")
    assert status == 1, err
    [error] = of(events, "error")
    assert error["code"] == "context_too_small" and "window of 256 tokens" in error["message"], error
    with Manager(tmp_path / "home" / "sessions.db") as manager:
        [row] = manager.recent_sessions(limit=1)
        assert [m.content for m in manager.open_session(row.id).get_messages()] == ["Hello?"]


def test_the_prior_calibration_holds_for_english_prose(llama_server: LlamaServer) -> None:
    """R-LONG-3b: until the server counts, a token per 3 bytes; SmolLM2's tokenizer counts no more
    for English prose. It counts more for code (35 tokens for 99 bytes of Python, 1.1 times the
    prior), JSON (40 for 77 bytes, 2.1 times) and Chinese (49 for 81 bytes, 1.8 times): the first
    request of such a session can overflow, which R-LONG-7 recovers from, and the first usage
    calibrates (R-LONG-3)."""
    text = "The engine keeps a checkpoint of the last summary and only summarises new messages."
    real = len(llama_server.post("/tokenize", {"content": text})["tokens"])
    estimate = len(text.encode("utf-8")) // CHARS_PER_TOKEN
    assert real <= estimate * PRIOR, (real, estimate)
