"""The terminal UI pointed at a local model server, inside tmux (SPEC R-CLI-21, R-TUI-26, R-TUI-27,
R-TUI-9, R-INT-4, R-PRV-3).

The program runs with no key and OPENAI_BASE_URL naming a server on 127.0.0.1 that says nothing
for a long while after each request, as ``llama-server`` does while a CPU reads a long prompt
(tests/local_server.py). The screen must show where the requests go, that the agent is waiting
and for how long, and Ctrl+C must give the input line back at once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from tests.local_server import REPLY, LocalServer
from tests.tui.test_screen_tmux import Screen, started

WAITING = re.compile(r"^waiting for the model\u2026 (\d+) s$")


@pytest.fixture
def slow() -> Iterator[LocalServer]:
    server = LocalServer(delay=60).start()
    yield server
    server.close()


def waited(screen: Screen) -> int | None:
    """The seconds of the waiting row, the pane's last row above the status bar, or None."""
    rows = [row.rstrip() for row in screen.rows()[:-2] if row.strip()]
    match = WAITING.match(rows[-1]) if rows else None
    return int(match.group(1)) if match else None


def test_a_silent_local_server_shows_the_wait_and_ctrl_c_ends_it_at_once(screen: Screen, slow: LocalServer) -> None:
    started(screen, "--provider", "openai", "--model", "smollm2", "--lang", "en", environ={"OPENAI_BASE_URL": slow.url})
    assert screen.rows()[-2].startswith(f"[harness9] openai:smollm2@{slow.server}  workdir: ")  # R-TUI-26
    notice = f"harness9-ref: no API key set (OPENAI_API_KEY); sending requests to {slow.server} without one"
    assert notice in screen.text()  # R-CLI-21: a start notice, not the offline one
    screen.type("explain the repository")
    screen.keys("Enter")
    screen.wait(lambda: waited(screen) is not None, "the waiting row")
    first = waited(screen)
    screen.wait(lambda: (waited(screen) or 0) > (first or 0), "the waiting row to count on")  # each second
    assert "waiting" not in "".join(screen.rows()[-2:])  # not the status bar, not the input line
    pressed = time.monotonic()
    screen.keys("C-c")
    screen.wait_text("interrupted")
    screen.wait_idle()  # the input line is ready: the stream was interrupted, not awaited
    assert time.monotonic() - pressed < 3.0
    assert waited(screen) is None
    slow.delay = 0  # the server answers the next prompt at once
    screen.say("hello again")
    assert "".join(REPLY) in screen.text()
    assert all("authorization" not in headers for headers in slow.headers)
