"""A prompt or query argument that is not UTF-8 is taken as standard input's text (SPEC R-CLI-26).

The program runs as a real process with the raw bytes in its argv (no Python string can carry
them through ``subprocess``), under ``LANG=C.UTF-8``: the stored prompt is the one ``run -``
stores for the same bytes, and the session printed exists.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Final

from tests.cli.helpers import EXCEPTION_NAME, cli, session_of, stored

RAW: Final = b"\xff\xfe hello"  # two bytes that begin no UTF-8 sequence
TEXT: Final = "\ufffd\ufffd hello"


def _run_bytes(args: list[bytes], env: dict[str, str], work: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable.encode(), b"-m", b"harness9_ref", *args], cwd=work, env=env, capture_output=True, timeout=60, check=False
    )
    done = subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())
    assert EXCEPTION_NAME.search(done.stderr) is None and "internal error" not in done.stderr, done.stderr
    return done


def test_a_prompt_argument_that_is_not_utf8_is_stored_as_standard_input_stores_it(
    env: dict[str, str], work: Path, db: Path
) -> None:
    result = _run_bytes([b"--provider", b"offline", b"run", RAW], env, work)
    assert result.returncode == 0, result.stderr
    from_argv = session_of(result)
    from_stdin = session_of(cli(["--provider", "offline", "run", "-"], env, work, input=RAW))
    sessions = stored(db)
    assert from_argv in sessions  # the id printed names a stored session
    assert sessions[from_argv][0] == sessions[from_stdin][0] == TEXT


def test_a_query_argument_that_is_not_utf8_finds_what_such_a_prompt_stored(env: dict[str, str], work: Path) -> None:
    sid = session_of(_run_bytes([b"--provider", b"offline", b"run", RAW], env, work))
    found = _run_bytes([b"search", b"\xff\xfe"], env, work)
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith(sid)
