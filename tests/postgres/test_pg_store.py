"""PostgreSQL's own: URLs, errors, the schema and its upgrades, its columns against SQLite's, the command line.

SPEC R-PG-1 … R-PG-6, R-PG-9, R-PG-10, R-CKP-9, R-CKP-12. The contract both stores keep (sessions,
fork, copy) is tested on both in tests/memory/storage/.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness9_ref.memory.storage import (
    ContextState,
    FileChangeLog,
    FileChangeRecord,
    Manager,
    SessionDatabaseError,
    UnsupportedSchema,
)
from harness9_ref.memory.storage._pg_db import EXTRA_MISSING, PG_SCHEMA
from harness9_ref.schema import Message
from tests.memory.helpers import ODD_STATE, fill, snapshot

if TYPE_CHECKING:
    import psycopg
else:  # a machine without the postgres extra skips this module, saying why
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[postgres]')")

ROOT = Path(__file__).resolve().parents[2]
def column(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def test_messages_times_and_the_tool_calls_column_match_sqlite_exactly(pg_url: str, tmp_path: Path) -> None:
    with Manager(pg_url, clock=lambda: 1_700_000_123.9) as pg, Manager(tmp_path / "s.db", clock=lambda: 1_700_000_123.9) as lite:
        for manager in (pg, lite):
            fill(manager)
        assert [s[1:] for s in snapshot(pg)] == [s[1:] for s in snapshot(lite)]
        assert [(i.created_at, i.updated_at, i.message_count) for i in pg.list_sessions()] == [
            (i.created_at, i.updated_at, i.message_count) for i in lite.list_sessions()
        ]
    rows = column(pg_url, "SELECT tool_calls, created_at FROM messages ORDER BY id")
    assert {created for _, created in rows} == {1_700_000_123}  # R-PG-6: truncated, as SQLite's (R-DB-4)
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert rows == conn.execute("SELECT tool_calls, created_at FROM messages ORDER BY id").fetchall()
    assert column(pg_url, "SELECT version FROM harness9_schema") == [(6,)]


def test_the_short_postgres_prefix_opens_the_same_database(pg_url: str) -> None:
    """R-PG-1a: libpq reads ``postgres://`` as it reads ``postgresql://``, and so does a Manager."""
    assert pg_url.startswith("postgresql://")
    manager = Manager("postgres://" + pg_url.removeprefix("postgresql://"))
    manager.new_session().add_messages([Message("user", "hi")])
    manager.close()
    assert column(pg_url, "SELECT role, body FROM messages") == [("user", "hi")]


def test_other_schemes_are_refused_and_never_taken_for_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    refused = r"^xyz:// databases are not supported; give the path of an SQLite file or a postgresql:// URL$"
    with pytest.raises(SessionDatabaseError, match=refused):
        Manager("xyz://user:pw@host/db")
    assert list(tmp_path.iterdir()) == []


def test_connection_errors_are_one_line_without_the_password() -> None:
    with pytest.raises(SessionDatabaseError) as caught:
        Manager("postgresql://me:s3cr3t-pw@127.0.0.1:1/h9?password=s3cr3t-pw&connect_timeout=2")
    text = str(caught.value)
    assert "\n" not in text and "s3cr3t-pw" not in text
    assert text.startswith("cannot connect to postgresql://me@127.0.0.1:1/h9: ")


def test_without_psycopg_the_error_names_the_extra_and_sqlite_needs_nothing(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from harness9_ref.memory.storage import Manager, SessionDatabaseError\n"
        f"Manager({str(tmp_path / 'x.db')!r}).close()\n"
        "try:\n    Manager('postgresql://u@h/db')\nexcept SessionDatabaseError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXTRA_MISSING + "\n"
    plain = "import sys, harness9_ref.cli, harness9_ref.memory.storage; print('psycopg' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", plain], check=False, capture_output=True, text=True, cwd=ROOT)
    assert loaded.stdout == "False\n"


# R-PG-4's tables, read back from the server's catalogue: name, column, type, nullable, collation.
SCHEMA_COLUMNS = [
    ("checkpoints", "session_id", "text", "NO", "C"),
    ("checkpoints", "covered", "bigint", "NO", None),
    ("checkpoints", "anchor", "bytea", "NO", None),
    ("checkpoints", "summary", "bytea", "NO", None),
    ("checkpoints", "created_at", "bigint", "NO", None),
    ("context_state", "session_id", "text", "NO", "C"),
    ("context_state", "input_tokens", "bigint", "NO", None),
    ("context_state", "estimate", "bigint", "NO", None),
    ("context_state", "cleared_below", "bigint", "NO", None),
    ("context_state", "saved_at", "bigint", "NO", None),
    ("context_state", "summary_failures", "bigint", "NO", None),
    ("context_state", "summary_paused", "bigint", "NO", None),
    ("context_state", "window_tokens", "bigint", "NO", None),
    ("context_state", "window_source", "text", "NO", None),
    ("context_state", "window_model", "text", "NO", None),
    ("file_changes", "id", "bigint", "NO", None),
    ("file_changes", "session_id", "text", "NO", "C"),
    ("file_changes", "tool_call_id", "bytea", "NO", None),
    ("file_changes", "path", "bytea", "NO", None),
    ("file_changes", "existed", "integer", "NO", None),
    ("file_changes", "before", "bytea", "YES", None),
    ("file_changes", "after", "bytea", "YES", None),
    ("file_changes", "created_at", "bigint", "NO", None),
    ("harness9_schema", "version", "integer", "NO", None),
    ("harness9_schema", "unicode", "text", "NO", None),
    ("messages", "id", "bigint", "NO", None),
    ("messages", "session_id", "text", "NO", "C"),
    ("messages", "role", "text", "NO", None),
    ("messages", "content", "bytea", "NO", None),
    ("messages", "tool_calls", "text", "YES", None),
    ("messages", "tool_call_id", "bytea", "YES", None),
    ("messages", "created_at", "bigint", "NO", None),
    ("messages", "body", "text", "NO", None),
    ("messages", "folded", "text", "YES", None),
    ("sessions", "id", "text", "NO", "C"),
    ("sessions", "created_at", "bigint", "NO", None),
    ("sessions", "updated_at", "bigint", "NO", None),
    ("sessions", "workdir", "text", "NO", None),
    ("sessions", "provider", "text", "NO", None),
    ("todos", "session_id", "text", "NO", "C"),
    ("todos", "position", "bigint", "NO", None),
    ("todos", "id", "bytea", "NO", None),
    ("todos", "content", "bytea", "NO", None),
    ("todos", "status", "text", "NO", None),
]


def test_the_schema_the_code_creates_is_the_one_spec_gives() -> None:
    blocks = re.findall(r"```postgresql\n(.*?)```", (ROOT / "SPEC.md").read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1, "SPEC.md should hold R-PG-4's one postgresql block"

    def statements(sql: str) -> list[str]:
        return [" ".join(s.split()) for s in sql.split(";") if s.strip()]

    assert statements(blocks[0]) == statements(PG_SCHEMA)


def test_a_new_schema_holds_the_tables_of_the_spec_and_version_6(pg_url: str) -> None:
    Manager(pg_url).close()
    assert column(pg_url, "SELECT version, unicode FROM harness9_schema") == [(6, unicodedata.unidata_version)]
    found = column(
        pg_url,
        "SELECT table_name, column_name, data_type, is_nullable, collation_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
    )
    assert found == SCHEMA_COLUMNS
    index = "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'idx_messages_session'"
    assert column(pg_url, index)[0][0].endswith("(session_id, id)")


STATE_COLUMNS_ADDED = ("summary_failures", "summary_paused", "window_tokens", "window_source", "window_model")


def as_version_5(url: str) -> None:
    """Make a schema the Manager created into version 5: without the file_changes table (R-UNDO-2c)
    and sessions without workdir and provider (R-PG-4, R-PG-14)."""
    with psycopg.connect(url) as conn:
        conn.execute("DROP TABLE file_changes")
        conn.execute("ALTER TABLE sessions DROP COLUMN workdir, DROP COLUMN provider")
        conn.execute("UPDATE harness9_schema SET version = 5")


def as_version_4(url: str) -> None:
    """Make a schema the Manager created into version 4: version 5 and context_state without its
    columns after saved_at (R-PG-4)."""
    as_version_5(url)
    with psycopg.connect(url) as conn:
        conn.execute("ALTER TABLE context_state " + ", ".join(f"DROP COLUMN {c}" for c in STATE_COLUMNS_ADDED))
        conn.execute("UPDATE harness9_schema SET version = 4")


def as_version_3(url: str) -> None:
    """Make a schema the Manager created into version 3: version 4 without the derived columns of
    messages and without the recorded Unicode version (R-PG-4); their indexes go with the columns."""
    as_version_4(url)
    with psycopg.connect(url) as conn:
        conn.execute("ALTER TABLE messages DROP COLUMN body, DROP COLUMN folded")
        conn.execute("DROP INDEX idx_messages_prompts")
        conn.execute("ALTER TABLE harness9_schema DROP COLUMN unicode")
        conn.execute("UPDATE harness9_schema SET version = 3")


def as_version_2(url: str) -> None:
    """Make a schema the Manager created into version 2: version 3 without the context_state table (R-PG-4)."""
    as_version_3(url)
    with psycopg.connect(url) as conn:
        conn.execute("DROP TABLE context_state")
        conn.execute("UPDATE harness9_schema SET version = 2")


def test_a_version_2_schema_is_upgraded_in_place_keeping_every_row(pg_url: str) -> None:
    with Manager(pg_url, clock=lambda: 1_700_000_000) as manager:
        session_id = fill(manager)
        before = snapshot(manager)
    as_version_2(pg_url)
    with Manager(pg_url, clock=lambda: 1_700_000_500) as manager:
        assert [s[:4] for s in snapshot(manager)] == [s[:4] for s in before]
        session = manager.open_session(session_id)
        assert session.get_context_state() is None
        session.save_context_state(ContextState(10, 9, 1))
    assert column(pg_url, "SELECT version FROM harness9_schema") == [(6,)]
    assert column(pg_url, "SELECT input_tokens, estimate, cleared_below, saved_at FROM context_state") == [
        (10, 9, 1, 1_700_000_500)
    ]


def test_a_version_4_schema_gains_the_breaker_and_window_columns_keeping_every_row(pg_url: str) -> None:
    """R-PG-4, R-CKP-12: a version-4 state reads with the defaults, its row and saved_at kept; the
    recorded Unicode version stays (its folded column was made by that mapping)."""
    with Manager(pg_url, clock=lambda: 1_700_000_000) as manager:
        session_id = fill(manager)
        before = snapshot(manager)
    as_version_4(pg_url)
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE harness9_schema SET unicode = '1.0.0'")
        conn.execute("UPDATE messages SET folded = 'as the old mapping made it'")
    with Manager(pg_url, clock=lambda: 1_700_000_500) as manager:
        assert [s[:4] for s in snapshot(manager)] == [s[:4] for s in before]
        assert manager.open_session(session_id).get_context_state() == ContextState(2**63 - 1, 0, 5)
    assert column(pg_url, "SELECT version, unicode FROM harness9_schema") == [(6, "1.0.0")]
    assert column(pg_url, "SELECT DISTINCT folded FROM messages") == [("as the old mapping made it",)]
    assert column(pg_url, "SELECT * FROM context_state") == [(session_id, 2**63 - 1, 0, 5, 1_700_000_000, 0, 0, 0, "", "")]
    with Manager(pg_url, clock=lambda: 1_700_000_900) as manager:  # version 6 now: used as it is
        manager.open_session(session_id).save_context_state(ODD_STATE)
        assert manager.open_session(session_id).get_context_state() == ODD_STATE


def test_a_version_5_schema_gains_the_file_changes_table_keeping_every_row(pg_url: str) -> None:
    """R-UNDO-2c: only the table and its index are added, in the upgrade's one transaction."""
    with Manager(pg_url, clock=lambda: 1_700_000_000) as manager:
        session_id = fill(manager)
        before = snapshot(manager)
    as_version_5(pg_url)
    with Manager(pg_url, clock=lambda: 1_700_000_500) as manager:
        assert snapshot(manager) == before
        session = manager.open_session(session_id)
        assert isinstance(session, FileChangeLog) and session.file_changes() == []
        session.add_file_change(FileChangeRecord.of("c1", "a.txt", b"\x00old\xff", b"new"))
        assert session.file_changes() == [FileChangeRecord("c1", "a.txt", True, b"\x00old\xff", b"new")]
    assert column(pg_url, "SELECT version FROM harness9_schema") == [(6,)]
    assert column(pg_url, "SELECT count(*) FROM pg_indexes WHERE indexname = 'idx_file_changes_session'") == [(1,)]


def test_a_version_5_schema_that_already_has_a_file_changes_table_is_refused_untouched(pg_url: str) -> None:
    Manager(pg_url).close()
    as_version_5(pg_url)
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE file_changes (id BIGINT PRIMARY KEY, note TEXT)")
    with pytest.raises(UnsupportedSchema, match="file_changes table of another program"):
        Manager(pg_url)
    assert column(pg_url, "SELECT version FROM harness9_schema") == [(5,)]


def test_a_version_5_schema_gains_the_sessions_folder_and_provider_keeping_every_row(pg_url: str) -> None:
    """R-PG-4c, R-PG-14: every session of a version-5 schema is of unknown folder, every row kept;
    a new session records its own, and recent_sessions of its folder finds only it."""
    with Manager(pg_url, clock=lambda: 1_700_000_000) as manager:
        session_id = fill(manager)
        before = snapshot(manager)
        state = manager.open_session(session_id).get_context_state()
    as_version_5(pg_url)
    with Manager(pg_url, clock=lambda: 1_700_000_500) as manager:
        assert snapshot(manager) == before
        assert manager.open_session(session_id).get_context_state() == state
        assert manager.session_origin(session_id) == ("", "")
        session = manager.new_session(workdir="/home/u/projA", provider="offline")
        session.add_messages([Message("user", "after the upgrade")])
        assert [s.id for s in manager.recent_sessions(workdir="/home/u/projA")] == [session.session_id]
    assert column(pg_url, "SELECT version FROM harness9_schema") == [(6,)]
    assert column(pg_url, f"SELECT workdir, provider FROM sessions WHERE id = '{session_id}'") == [("", "")]


def test_a_version_2_schema_that_already_has_a_context_state_table_is_refused_untouched(pg_url: str) -> None:
    Manager(pg_url).close()
    as_version_2(pg_url)
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE context_state (session_id TEXT PRIMARY KEY, tokens BIGINT)")
    with pytest.raises(UnsupportedSchema, match="context_state table of another program"):
        Manager(pg_url)
    assert column(pg_url, "SELECT version FROM harness9_schema") == [(2,)]
    assert column(pg_url, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'context_state'") == [(2,)]


def test_a_schema_of_another_version_or_of_another_program_is_refused_untouched(pg_url: str) -> None:
    Manager(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE harness9_schema SET version = 7")
    with pytest.raises(UnsupportedSchema, match="format version 7"):
        Manager(pg_url)
    assert column(pg_url, "SELECT version FROM harness9_schema") == [(7,)]
    with psycopg.connect(pg_url) as conn:
        conn.execute("DROP TABLE harness9_schema")
    with pytest.raises(UnsupportedSchema, match="tables of another program"):
        Manager(pg_url)
    assert column(pg_url, "SELECT to_regclass('harness9_schema') IS NULL") == [(True,)]


def test_the_command_line_takes_a_url_and_copies(pg_url: str, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HARNESS9_DB": pg_url}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "harness9_ref", *args]
        return subprocess.run(command, check=False, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)

    assert cli("--provider", "offline", "run", "hello postgres").returncode == 0
    listed = cli("sessions")
    assert listed.returncode == 0 and "1 messages" not in listed.stdout and "hello postgres" in listed.stdout
    copied = cli("copy", pg_url, str(tmp_path / "c.db"))
    assert (copied.returncode, copied.stdout) == (0, "copied 1 session, 2 messages\n"), copied.stderr
    again = cli("copy", pg_url, str(tmp_path / "c.db"))
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "nothing was copied" in again.stderr
    assert cli("copy", pg_url, str(tmp_path / "c.db"), "--overwrite").returncode == 0
    missing = cli("copy", str(tmp_path / "none.db"), pg_url)
    assert missing.returncode == 1 and "no such file" in missing.stderr and not (tmp_path / "none.db").exists()
