"""Running the real ``harness9-ref`` in a subprocess for the tests of tests/cli (SPEC R-CLI).

``cli`` runs ``python -m harness9_ref`` with a private HARNESS9_HOME and no API key, and checks
what every run must satisfy: no traceback and no Python exception name on standard error
(R-CLI-6, R-CLI-13). ``seed`` writes sessions with chosen ids and times straight through a
Manager, so the listing and expiry tests do not depend on the wall clock.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import IO, Final, TypeVar

from harness9_ref.memory.storage import Manager
from tests.fakes import Clock, assistant, user

ROOT: Final = Path(__file__).resolve().parents[2]
SESSION: Final = re.compile(r"session: ([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})")
EXCEPTION_NAME: Final = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|Traceback")
KEYS: Final = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "LLM_MODEL")
OURS: Final = ("HARNESS9_DB", "HARNESS9_YES", "HARNESS9_LANG", "HARNESS9_SESSION_TTL_DAYS")
Stdin = int | IO[bytes] | None
Server = TypeVar("Server", bound=ThreadingHTTPServer)


def environment(tmp_path: Path) -> dict[str, str]:
    values = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HARNESS9_HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }
    for name in (*KEYS, *OURS, "LC_ALL", "LC_MESSAGES"):  # LANG alone: English (R-LANG-1), whatever the machine's locale
        values.pop(name, None)
    return values


def cli(
    args: list[str],
    env: Mapping[str, str],
    cwd: Path,
    *,
    stdin: Stdin = subprocess.DEVNULL,
    input: bytes | None = None,
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    """Run the command to its end; ``input`` goes through a pipe, else ``stdin`` is used as given."""
    result = subprocess.run(
        [sys.executable, "-m", "harness9_ref", *args], cwd=cwd, env={**env, **extra}, timeout=60,
        stdin=None if input is not None else stdin, input=input, capture_output=True, check=False,
    )
    done = subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    )
    assert EXCEPTION_NAME.search(done.stderr) is None, done.stderr
    return done


def session_of(result: subprocess.CompletedProcess[str]) -> str:
    """The id of ``session: <id>``, the last line of standard error (R-CLI-7)."""
    last = result.stderr.splitlines()[-1]
    match = SESSION.fullmatch(last)
    assert match is not None, result.stderr
    return match.group(1)


def one_error(result: subprocess.CompletedProcess[str], status: int = 1) -> str:
    """The message of the one error line a failure prints (R-CLI-6)."""
    assert result.returncode == status, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness9-ref: error: "), result.stderr
    return lines[0].removeprefix("harness9-ref: error: ")


def seed(db: Path, sessions: Iterable[tuple[str, int, list[str]]], workdir: Path | None = None) -> None:
    """Store sessions ``(id, updated_at, prompts)``: each prompt is a user message and a reply.

    With ``workdir`` they record that folder, resolved, and the provider ``offline`` (R-FIND-4);
    without, neither, as sessions of a file from before format 5.
    """
    db.parent.mkdir(parents=True, exist_ok=True)
    folder, provider = (str(workdir.resolve()), "offline") if workdir is not None else ("", "")
    for session_id, when, prompts in sessions:
        clock = Clock(when)
        with Manager(db, clock=clock, new_id=functools.partial(str, session_id)) as manager:
            session = manager.new_session(workdir=folder, provider=provider)
            for prompt in prompts:
                session.add_messages([user(prompt), assistant(f"re: {prompt}")])


def stored(db: Path) -> dict[str, list[str]]:
    """Every stored session's message contents, by id (R-FIND-2: drafts are not there)."""
    with Manager(db) as manager:
        return {info.id: [m.content for m in manager.open_session(info.id).get_messages(0)] for info in manager.list_sessions()}


def serving(server: Server) -> Iterator[Server]:
    """Serve ``server`` (a loopback model) on a thread for the length of a fixture, then stop it."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
