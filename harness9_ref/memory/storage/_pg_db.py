"""The PostgreSQL database: connecting, the schema and its version, transactions, reconnecting (SPEC R-PG-1 … R-PG-8).

One ``PgDatabase`` is one connection, shared by a Manager and all its sessions under one lock
(R-MGR-2), as ``Database`` is for SQLite. psycopg is imported here and only here, when a
``postgresql://`` URL is opened, so the rest of the package needs only the standard library
(R-PG-2). Every write is one transaction at READ COMMITTED that first locks the session's row,
so that writers of one session take turns and each batch is contiguous in id order (R-PG-7);
every read is one REPEATABLE READ snapshot. A connection that the server dropped (a restart, a
network failure) makes the call in flight fail with SessionDatabaseError, its transaction
rolled back by the server, and the next call connects again (R-PG-8). Messages name the
database by its URL without the password or query (R-PG-3).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlsplit

from ._session import SessionClosed, SessionDatabaseError, UnsupportedSchema
from ._sqlite_db import BUSY_TIMEOUT_MS

if TYPE_CHECKING:
    import psycopg

__all__ = ["EXTRA_MISSING", "FORMAT_VERSION", "LOCK_TIMEOUT_MS", "PG_SCHEMA", "PgDatabase", "as_bytes", "as_text", "redact_url"]

FORMAT_VERSION: Final = 3  # R-PG-4: the one row of harness9_schema, the counterpart of R-DB-2's user_version
LOCK_TIMEOUT_MS: Final = BUSY_TIMEOUT_MS  # R-PG-7: as R-DB-3's busy timeout
CONNECT_TIMEOUT_S: Final = 10
# R-PG-2: the one line a user sees when psycopg is missing.
EXTRA_MISSING: Final = (
    "PostgreSQL sessions need the postgres extra: pip install 'harness9-ref[postgres]'"
)
# R-PG-4: the schema. Text that may hold any string (NUL included, which PostgreSQL text cannot
# hold) is BYTEA holding its UTF-8 bytes; ids and the columns of fixed values are TEXT in the
# "C" collation, so that they compare and order byte by byte as in SQLite.
PG_SCHEMA: Final = """
CREATE TABLE sessions (
    id         TEXT COLLATE "C" PRIMARY KEY,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE TABLE messages (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id   TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role         TEXT   NOT NULL,
    content      BYTEA  NOT NULL,
    tool_calls   TEXT,
    tool_call_id BYTEA,
    created_at   BIGINT NOT NULL
);
CREATE INDEX idx_messages_session ON messages(session_id, id);
CREATE TABLE todos (
    session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position   BIGINT NOT NULL,
    id         BYTEA  NOT NULL,
    content    BYTEA  NOT NULL,
    status     TEXT   NOT NULL,
    PRIMARY KEY (session_id, position)
);
CREATE TABLE checkpoints (
    session_id TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    covered    BIGINT NOT NULL,
    anchor     BYTEA  NOT NULL,
    summary    BYTEA  NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE context_state (
    session_id    TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    input_tokens  BIGINT NOT NULL,
    estimate      BIGINT NOT NULL,
    cleared_below BIGINT NOT NULL,
    saved_at      BIGINT NOT NULL
);
CREATE TABLE harness9_schema (
    version INTEGER NOT NULL
);
"""
_STATEMENTS: Final = [s.strip() for s in PG_SCHEMA.split(";") if s.strip()]
_TABLES: Final = ("sessions", "messages", "todos", "checkpoints", "context_state", "harness9_schema")
# R-PG-4: version 2 is this schema before the context_state table (R-CKP-12); it is upgraded in
# place by creating that table, so every row stays.
UPGRADABLE_VERSION: Final = 2
_UPGRADE: Final = next(s for s in _STATEMENTS if s.startswith("CREATE TABLE context_state"))
_MIGRATION_LOCK: Final = 0x68390002  # pg_advisory_xact_lock key: first opens of one schema take turns


def redact_url(url: str) -> str:
    """``url`` without its password and without the query but for its host and port (R-PG-3)."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    shown = [f"{k}={v}" for k, v in parse_qsl(parts.query) if k in ("host", "port")]
    query = "?" + "&".join(shown) if shown else ""
    return f"{parts.scheme}://{user}{at if user else ''}{hosts}{parts.path}{query}"


def as_text(value: object) -> object:
    """A BYTEA value as text, invalid UTF-8 kept as lone surrogates so decoding reports it (R-PG-4)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "surrogateescape")
    return value


def as_bytes(text: str) -> bytes:
    """Text for a BYTEA column: its UTF-8 bytes (R-PG-4)."""
    return text.encode("utf-8")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise SessionDatabaseError(EXTRA_MISSING) from None
    return psycopg


class PgDatabase:
    """The Manager's one PostgreSQL connection, with the lock that serialises its users."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = redact_url(url)
        self._secret = urlsplit(url).password or ""
        self._lock = threading.RLock()
        self._psycopg = _psycopg()
        self._conn: psycopg.Connection[Any] | None = None
        self._closed = False
        with self.write() as cur:
            self._migrate(cur)

    def _say(self, exc: BaseException) -> str:
        """The first line of a driver error, the password never in it (R-PG-3)."""
        lines = str(exc).strip().splitlines()
        text = lines[0] if lines else type(exc).__name__
        return text.replace(self._secret, "***") if self._secret else text

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = self._psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
            conn.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
        except self._psycopg.Error as exc:
            raise SessionDatabaseError(f"cannot connect to {self.name}: {self._say(exc)}") from None
        return conn  # type: ignore[no-any-return]

    def _live(self) -> psycopg.Connection[Any]:
        """The connection, made again when the server dropped it (R-PG-8)."""
        if self._closed:
            raise SessionClosed(f"the session database {self.name} is closed")
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._conn = self._connect()
        return self._conn

    def _migrate(self, cur: psycopg.Cursor[Any]) -> None:
        """Create the schema in an empty schema, use a version-3 one, upgrade a version-2 one, refuse the rest (R-PG-4).

        The advisory lock makes two first opens of one empty schema take turns, so the second
        finds the first one's tables instead of failing on them. The upgrade runs in this one
        transaction, so it is whole or absent; a version-2 schema already holding a
        ``context_state`` table is another program's and is refused.
        """
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        found = {
            row[0]
            for row in cur.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_name = ANY(%s)",
                (list(_TABLES),),
            )
        }
        if "harness9_schema" in found:
            versions = [row[0] for row in cur.execute("SELECT version FROM harness9_schema")]
            if versions == [FORMAT_VERSION]:
                return
            if versions == [UPGRADABLE_VERSION]:
                if "context_state" in found:
                    raise UnsupportedSchema(
                        f"{self.name} has format version {UPGRADABLE_VERSION} and a context_state table of another program"
                    )
                cur.execute(_UPGRADE)
                cur.execute("UPDATE harness9_schema SET version = %s", (FORMAT_VERSION,))
                return
            shown = ", ".join(str(v) for v in versions) or "none"
            raise UnsupportedSchema(
                f"{self.name} has format version {shown}; this program reads versions {UPGRADABLE_VERSION} and {FORMAT_VERSION}"
            )
        if found:
            raise UnsupportedSchema(
                f"{self.name} has tables of another program ({', '.join(sorted(found))}) and no harness9_schema"
            )
        for statement in _STATEMENTS:
            cur.execute(statement)
        cur.execute("INSERT INTO harness9_schema (version) VALUES (%s)", (FORMAT_VERSION,))

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[psycopg.Cursor[Any]]:
        with self._lock:
            conn = self._live()
            try:
                with conn.cursor() as cur:
                    cur.execute(begin)
                    yield cur
                    cur.execute("COMMIT")
            except BaseException as exc:
                if not conn.closed and not conn.broken:
                    try:
                        conn.execute("ROLLBACK")
                    except self._psycopg.Error:
                        pass  # the connection went while rolling back: the server rolled back
                if isinstance(exc, self._psycopg.Error):
                    raise SessionDatabaseError(f"{self.name}: {self._say(exc)}") from None
                raise

    def write(self) -> AbstractContextManager[psycopg.Cursor[Any]]:
        """``with db.write() as cur:`` one READ COMMITTED transaction, rolled back on any error."""
        return self._transaction("BEGIN ISOLATION LEVEL READ COMMITTED")

    def read(self) -> AbstractContextManager[psycopg.Cursor[Any]]:
        """``with db.read() as cur:`` one snapshot."""
        return self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None
