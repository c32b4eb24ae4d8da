"""The terminal UI moves its session's lock when it changes session (R-CLI-27c): checked
against another real process that holds, or tries to take, a session's lock."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness9_ref.cli._session_lock import SESSION_LOCK_FILE, SessionLock
from harness9_ref.memory.storage import Manager
from harness9_ref.text import strings_for
from tests.cli.helpers import ROOT
from tests.tui.test_app import make_app, send, texts

# Another program: takes the lock of argv[2] in the file argv[1], says whether it could, and
# holds it until its standard input closes.
OTHER = """
import sys
from pathlib import Path
from harness9_ref.cli._session_lock import SessionInUse, SessionLock
lock = SessionLock(Path(sys.argv[1]))
try:
    lock.hold(sys.argv[2])
except SessionInUse:
    print("in use", flush=True)
else:
    print("held", flush=True)
sys.stdin.read()
"""


@contextmanager
def other_program(path: Path, session_id: str) -> Iterator[str]:
    """Another process trying ``session_id``'s lock: ``held`` or ``in use``, kept until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-c", OTHER, str(path), session_id], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.communicate(timeout=10)


def test_resume_of_a_session_another_program_holds_is_refused_and_new_lets_go(manager: Manager, tmp_path: Path) -> None:
    path = tmp_path / "home" / SESSION_LOCK_FILE
    with SessionLock(path) as lock:
        app = make_app(manager, tmp_path, lang="en")
        app.hold = lock.hold
        lock.hold(app.session.session_id)  # as the program's start does (R-CLI-27a)
        send(app, "remember me")
        mine = app.session.session_id
        send(app, "/new")
        with other_program(path, mine) as answer:
            assert answer == "held"  # /new let go of the session it left
            current = app.session.session_id
            send(app, "/resume")
            send(app, "1")
            assert app.session.session_id == current
            assert app.engine.session is app.session
            assert texts(app, "error") == ["error: " + strings_for("en")["err_session_in_use"].format(session=mine)]
        with other_program(path, current) as answer:
            assert answer == "in use"  # the refused /resume kept the current session held
        send(app, "/resume")
        send(app, "1")
        assert app.session.session_id == mine  # free again once the other program ended
        with other_program(path, mine) as answer:
            assert answer == "in use"
        with other_program(path, current) as answer:
            assert answer == "held"
