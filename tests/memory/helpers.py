"""Helpers of the session tests: the injected clock (from tests/fakes.py), a plain connection as another
program's, and ``Database``, either backend's database seen from outside."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness9_ref.memory.storage import Checkpoint, ContextState, Manager
from harness9_ref.planning import TodoItem
from harness9_ref.schema import Message, ToolCall
from tests.fakes import START, Clock, user

__all__ = ["ODD", "ODD_STATE", "START", "Clock", "Database", "fill", "numbered", "raw", "snapshot"]

ODD: Final = [  # NUL, astral characters, raw arguments and a NUL in a call id: stored as given (R-SES-4)
    Message("user", "中文 🧑‍💻 \x00 nul\r\n"),
    Message("assistant", "", (ToolCall("c\x00", "bash", ' {"padded": 1} '), ToolCall("c2", "x", '{"a":  [1e400, "\\ud800"]}'))),
    Message("user", "text", (), "c\x00"),
    Message("user", "", (), "c2"),
    Message("assistant", "done"),
]
# Every member of a context state away from its default, the integers at the 64-bit limit (R-CKP-9, R-CKP-10).
ODD_STATE: Final = ContextState(2**63 - 1, 0, 5, 2**63 - 1, 7, 2**63 - 1, "truncation", "org/模型-𝄞 q4")

KEYS: Final = {"sessions": "id"}  # the column naming the session; session_id elsewhere
ORDER: Final = {"messages": "id", "todos": "position"}  # the stored order of a table with many rows per session


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection to the file, in autocommit mode, as another program would open it."""
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def numbered(n: int, start: int = 0) -> list[Message]:
    return [user(f"m{i}") for i in range(start, start + n)]


@dataclass(frozen=True)
class Database:
    """A database of the contract tests that run on both stores (R-PG-2), seen as another program sees it.

    ``location`` is what the Manager is given: an SQLite file's path or a ``postgresql://`` URL
    whose search path is a fresh schema.
    """

    kind: str  # "sqlite" or "postgresql"
    location: str

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """``sql`` (``?`` placeholders) on a connection of its own, in autocommit mode; the rows it returns."""
        if self.kind == "sqlite":
            with raw(Path(self.location)) as conn:
                return conn.execute(sql, params).fetchall()
        import psycopg  # the postgresql tests skip without it, saying why (tests/conftest.py)

        with psycopg.connect(self.location, autocommit=True) as pg:
            cur = pg.execute(sql.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []

    def rows(self, table: str, session_id: str) -> list[dict[str, object]]:
        """Every row of ``session_id`` in ``table``, in stored order, by column; an SQLite value with its storage class."""
        key, order = KEYS.get(table, "session_id"), ORDER.get(table, "1")
        if self.kind == "sqlite":
            columns = [row[1] for row in self.query(f"PRAGMA table_info({table})")]
            picked = ", ".join(f"typeof({c}), hex({c})" for c in columns)
            found = self.query(f"SELECT {picked} FROM {table} WHERE {key} = ? ORDER BY {order}", (session_id,))
            return [{c: row[2 * i : 2 * i + 2] for i, c in enumerate(columns)} for row in found]
        columns = [row[0] for row in self.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?"
            " ORDER BY ordinal_position", (table,))]
        found = self.query(f"SELECT {', '.join(columns)} FROM {table} WHERE {key} = ? ORDER BY {order}", (session_id,))
        return [dict(zip(columns, row, strict=True)) for row in found]

    def refuse_inserts(self, table: str, message: str, content: str | None = None) -> None:
        """Make the database refuse, with ``message``, every later insert into ``table``, or those whose
        ``content`` is the one given: a write refused midway, as a full disk refuses it."""
        if self.kind == "sqlite":
            when = "" if content is None else f" WHEN NEW.content = '{content}'"
            refuse = f"SELECT RAISE(ABORT, '{message}');"
            self.query(f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table}{when} BEGIN {refuse} END")
            return
        refuse = f"RAISE EXCEPTION '{message}';"
        body = refuse if content is None else f"IF NEW.content = '{content}'::bytea THEN {refuse} END IF; RETURN NEW;"
        self.query(f"CREATE FUNCTION refuse_{table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body} END $$")
        self.query(f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION refuse_{table}()")


def fill(manager: Manager) -> str:
    """A new session holding ``ODD``, two todos, a checkpoint covering the first message and ``ODD_STATE``; its id."""
    session = manager.new_session()
    session.add_messages(ODD)
    session.save_todos([TodoItem("t\x00", "do 🧑‍💻", "in_progress"), TodoItem("t", "", "pending")])
    session.save_checkpoint(Checkpoint(1, "anchor\x00", "summary\n𝄞"))
    session.save_context_state(ODD_STATE)
    return session.session_id


def snapshot(manager: Manager) -> list[tuple[object, ...]]:
    """Every session of ``manager``, most recent first: its row, messages, todos, checkpoint and context state."""
    out: list[tuple[object, ...]] = []
    for info in manager.list_sessions():
        session = manager.open_session(info.id)
        out.append((info, session.get_messages(), session.get_todos(), session.get_checkpoint(), session.get_context_state()))
    return out
