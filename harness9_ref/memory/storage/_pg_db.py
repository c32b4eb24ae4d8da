"""The PostgreSQL database: connecting, the schema and its version, transactions, the pool,
reconnecting (SPEC R-PG-1 … R-PG-8, R-PG-11 … R-PG-13).

One ``PgDatabase`` is a Manager's pool of connections: each transaction takes one, so the
threads of one Manager (a web service, many agents) work at once, while SQLite's Manager shares
one connection under one lock (R-MGR-2). psycopg is imported here and only here, when a
``postgresql://`` URL is opened, so the rest of the package needs only the standard library
(R-PG-2). Every write is one transaction at READ COMMITTED that first locks the session's row,
so that writers of one session take turns and each batch is contiguous in id order (R-PG-7);
every read is one REPEATABLE READ snapshot. A connection that the server dropped (a restart, a
network failure) makes the call in flight fail with SessionDatabaseError, its transaction
rolled back by the server, and is thrown away with every idle one; a call that finds its
connection dropped before its transaction began connects again (R-PG-8, R-PG-12). Messages
name the database by its URL without the password or query (R-PG-3).
"""

from __future__ import annotations

import threading
import unicodedata
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlsplit

from ..._harness9_error import Said
from ._index import searchable_text
from ._session import SessionClosed, SessionDatabaseError, UnsupportedSchema
from ._sqlite_db import BUSY_TIMEOUT_MS

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "EXTRA_MISSING",
    "FORMAT_VERSION",
    "LOCK_TIMEOUT_MS",
    "PG_SCHEMA",
    "POOL_SIZE",
    "POOL_TIMEOUT_S",
    "TRGM_INDEX",
    "UNICODE_VERSION",
    "PgDatabase",
    "as_bytes",
    "as_text",
    "redact_url",
]

FORMAT_VERSION: Final = 6  # R-PG-4: the one row of harness9_schema, the counterpart of R-DB-2's user_version
UNICODE_VERSION: Final = unicodedata.unidata_version  # R-PG-4, R-PG-5: the case mapping of str.lower
POOL_SIZE: Final = 4  # R-PG-12: connections of one Manager at most
POOL_TIMEOUT_S: Final = 30.0  # R-PG-13: the longest a call waits in line for a connection
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
    updated_at BIGINT NOT NULL,
    workdir    TEXT   NOT NULL DEFAULT '',
    provider   TEXT   NOT NULL DEFAULT ''
);
CREATE TABLE messages (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id   TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role         TEXT   NOT NULL,
    content      BYTEA  NOT NULL,
    tool_calls   TEXT,
    tool_call_id BYTEA,
    created_at   BIGINT NOT NULL,
    body         TEXT   NOT NULL,
    folded       TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, id);
CREATE INDEX idx_messages_unfolded ON messages(id) WHERE folded IS NULL;
CREATE INDEX idx_messages_prompts ON messages(session_id, id) WHERE role = 'user' AND coalesce(tool_call_id, '') = '';
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
    session_id       TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    input_tokens     BIGINT NOT NULL,
    estimate         BIGINT NOT NULL,
    cleared_below    BIGINT NOT NULL,
    saved_at         BIGINT NOT NULL,
    summary_failures BIGINT NOT NULL DEFAULT 0,
    summary_paused   BIGINT NOT NULL DEFAULT 0,
    window_tokens    BIGINT NOT NULL DEFAULT 0,
    window_source    TEXT   NOT NULL DEFAULT '',
    window_model     TEXT   NOT NULL DEFAULT ''
);
CREATE TABLE harness9_schema (
    version INTEGER NOT NULL,
    unicode TEXT    NOT NULL
);
CREATE TABLE file_changes (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id   TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    tool_call_id BYTEA  NOT NULL,
    path         BYTEA  NOT NULL,
    existed      INTEGER NOT NULL,
    before       BYTEA,
    after        BYTEA,
    created_at   BIGINT NOT NULL
);
CREATE INDEX idx_file_changes_session ON file_changes(session_id, id);
"""
_STATEMENTS: Final = [s.strip() for s in PG_SCHEMA.split(";") if s.strip()]
_TABLES: Final = ("sessions", "messages", "todos", "checkpoints", "context_state", "harness9_schema", "file_changes")
# R-PG-4: version 5 is this schema without sessions.workdir and sessions.provider (R-FIND-4) and
# without the file_changes table (R-UNDO-2c); version 4 is version 5 without the last five columns
# of context_state (R-CKP-12);
# version 3 is version 4 without messages.body, messages.folded, the partial indexes and
# harness9_schema.unicode; version 2 is version 3 without the context_state table. All four are
# upgraded in place, so every row stays.
UPGRADABLE_VERSIONS: Final = (2, 3, 4, 5)
# R-UNDO-2c: what version 6 added, read from the schema.
_ADD_FILE_CHANGES: Final = tuple(s for s in _STATEMENTS if "file_changes" in s.split("(")[0])
_ADD_CONTEXT_STATE: Final = next(s for s in _STATEMENTS if s.startswith("CREATE TABLE context_state"))
# Version 4's context_state gains the columns after saved_at, their definitions read from the schema.
_ADD_STATE_COLUMNS: Final = "ALTER TABLE context_state " + ", ".join(
    "ADD COLUMN " + line.strip().rstrip(",")
    for line in _ADD_CONTEXT_STATE.partition("saved_at")[2].splitlines()[1:]
    if line.strip() != ")"
)
# R-PG-4, R-FIND-4: version 5's sessions gain their folder and provider, unknown ('') for every row.
_ADD_SESSION_ORIGIN: Final = (
    "ALTER TABLE sessions ADD COLUMN workdir TEXT NOT NULL DEFAULT '', ADD COLUMN provider TEXT NOT NULL DEFAULT ''"
)
_ADD_UNFOLDED: Final = next(s for s in _STATEMENTS if s.startswith("CREATE INDEX idx_messages_unfolded"))
# R-FIND-3's first prompt of a session, found in its own small index: through the primary key
# PostgreSQL may walk every other session's messages first (40,000 rows for one search's title).
_ADD_PROMPTS: Final = next(s for s in _STATEMENTS if s.startswith("CREATE INDEX idx_messages_prompts"))
_UPGRADE_BATCH: Final = 2000  # messages given their body and folded per round trip of an upgrade
_MIGRATION_LOCK: Final = 0x68390002  # pg_advisory_xact_lock key: first opens of one schema take turns
# R-PG-4: the trigram index of R-PG-5, {schema} being the one pg_trgm is installed in. Without
# fastupdate each append updates the index at once: with it, appends wait in a pending list that
# every search reads in full until a vacuum, which made a search after a day of writes 4x slower.
TRGM_INDEX: Final = (
    "CREATE INDEX idx_messages_folded ON messages USING gin (folded {schema}.gin_trgm_ops) WITH (fastupdate = off)"
)
_TRGM_SCHEMA: Final = (
    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'"
)
_HAS_INDEX: Final = (
    "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'idx_messages_folded'"
)


def _add_session_folder_and_provider(cur: psycopg.Cursor[Any]) -> None:
    """R-PG-4c, R-FIND-4: the step from version 5, the sessions' workdir and provider, '' (unknown) in every row."""
    cur.execute(_ADD_SESSION_ORIGIN)


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
    """The Manager's PostgreSQL connections (R-PG-12), the schema checked once at open (R-PG-4).

    ``folding`` says whether this program's case mapping is the one the schema records, so its
    writes fill ``folded`` and its searches may decide on it (R-PG-5, R-PG-11); ``indexed``
    whether the trigram index exists. ``pool_size`` and ``pool_timeout`` are the pool's
    connections and the longest a call waits in line for one (R-PG-12, R-PG-13).
    """

    def __init__(self, url: str, pool_size: int = POOL_SIZE, pool_timeout: float = POOL_TIMEOUT_S) -> None:
        self.url = url
        self.name = redact_url(url)
        self._secret = urlsplit(url).password or ""
        self._psycopg = _psycopg()
        self._pool = _Pool(self._connect, pool_size, self._psycopg.Error, self.name, pool_timeout)
        self.folding = True
        self.indexed = False
        with self.write() as cur:
            self._migrate(cur)
            self.folding = cur.execute("SELECT unicode FROM harness9_schema").fetchone() == (UNICODE_VERSION,)
            self.indexed = self._install_index(cur)

    def derived(self, content: str) -> tuple[str, str | None]:
        """A message's ``body`` and ``folded`` (R-PG-11): what a person and a search read."""
        body = searchable_text(content).replace("\x00", "\ufffd")
        return body, body.lower() if self.folding else None

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

    def _migrate(self, cur: psycopg.Cursor[Any]) -> None:
        """Create the schema in an empty schema, use a version-6 one, upgrade a version-2 … 5 one, refuse the rest (R-PG-4).

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
            if len(versions) == 1 and versions[0] in UPGRADABLE_VERSIONS:
                self._upgrade(cur, versions[0], found)
                return
            shown = ", ".join(str(v) for v in versions) or "none"
            readable = ", ".join(str(v) for v in (*UPGRADABLE_VERSIONS, FORMAT_VERSION))
            raise UnsupportedSchema(f"{self.name} has format version {shown}; this program reads versions {readable}")
        if found:
            raise UnsupportedSchema(
                f"{self.name} has tables of another program ({', '.join(sorted(found))}) and no harness9_schema"
            )
        for statement in _STATEMENTS:
            cur.execute(statement)
        cur.execute("INSERT INTO harness9_schema (version, unicode) VALUES (%s, %s)", (FORMAT_VERSION, UNICODE_VERSION))

    def _upgrade(self, cur: psycopg.Cursor[Any], version: int, found: set[str]) -> None:
        """R-PG-4: version 2 gains ``context_state`` whole, versions 3 and 4 its last five columns,
        versions 2 and 3 the derived columns of every message, and every version the sessions'
        folder and provider and ``file_changes``."""
        if version == 2:
            if "context_state" in found:
                raise UnsupportedSchema(f"{self.name} has format version 2 and a context_state table of another program")
            cur.execute(_ADD_CONTEXT_STATE)
        elif version < 5:
            cur.execute(_ADD_STATE_COLUMNS)
        if version < 4:
            self._add_derived(cur)
        _add_session_folder_and_provider(cur)
        self._add_file_changes(cur, found)
        cur.execute("UPDATE harness9_schema SET version = %s", (FORMAT_VERSION,))

    def _add_file_changes(self, cur: psycopg.Cursor[Any], found: set[str]) -> None:
        """Version 6: the ``file_changes`` table and its index (R-UNDO-2c); a schema being upgraded
        that already holds a ``file_changes`` table is another program's and is refused."""
        if "file_changes" in found:
            raise UnsupportedSchema(f"{self.name} has a file_changes table of another program")
        for statement in _ADD_FILE_CHANGES:
            cur.execute(statement)

    def _add_derived(self, cur: psycopg.Cursor[Any]) -> None:
        """R-PG-4, R-PG-11: a schema of version 2 or 3 gains ``body`` and ``folded`` for every
        message, their partial indexes, and the Unicode version of this program's case mapping."""
        cur.execute("ALTER TABLE messages ADD COLUMN body TEXT, ADD COLUMN folded TEXT")
        cur.execute("ALTER TABLE harness9_schema ADD COLUMN unicode TEXT")
        last = 0
        while True:
            rows = cur.execute(
                "SELECT id, content FROM messages WHERE id > %s ORDER BY id LIMIT %s", (last, _UPGRADE_BATCH)
            ).fetchall()
            if not rows:
                break
            updates = []
            for row_id, content in rows:
                body = searchable_text(bytes(content)).replace("\x00", "\ufffd")
                updates.append((body, body.lower(), row_id))
            cur.executemany("UPDATE messages SET body = %s, folded = %s WHERE id = %s", updates)
            last = rows[-1][0]
        cur.execute("UPDATE harness9_schema SET unicode = %s", (UNICODE_VERSION,))
        cur.execute("ALTER TABLE messages ALTER COLUMN body SET NOT NULL")
        cur.execute("ALTER TABLE harness9_schema ALTER COLUMN unicode SET NOT NULL")
        cur.execute(_ADD_UNFOLDED)
        cur.execute(_ADD_PROMPTS)

    def _install_index(self, cur: psycopg.Cursor[Any]) -> bool:
        """R-PG-4: the trigram index when pg_trgm is or can be installed; never a failed open.

        Each attempt runs in a savepoint, so a refusal (no rights, no extension on the server)
        leaves the open's transaction usable; the extension goes to ``public``, not to this
        schema, so that dropping one schema never takes another schema's index with it.
        """
        if cur.execute(_HAS_INDEX).fetchone() is not None:
            return True
        try:
            with cur.connection.transaction():
                row = cur.execute(_TRGM_SCHEMA).fetchone()
                if row is None:
                    cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
                    row = cur.execute(_TRGM_SCHEMA).fetchone()
                assert row is not None
                cur.execute(TRGM_INDEX.format(schema=_identifier(row[0])))
        except self._psycopg.Error:
            return False
        return True

    def _first(self, sql: str, params: Sequence[object] = ()) -> tuple[psycopg.Connection[Any], psycopg.Cursor[Any]]:
        """A pooled connection and a cursor that ran ``sql``, the first statement of a call: a
        connection found dropped there is replaced once (R-PG-12), since nothing of the call ran."""
        retry = True
        while True:
            conn = self._pool.take()
            cur = conn.cursor()
            try:
                cur.execute(sql, params)
                return conn, cur
            except self._psycopg.Error as exc:
                cur.close()
                self._pool.give(conn)
                if not (retry and conn.broken):
                    raise SessionDatabaseError(f"{self.name}: {self._say(exc)}") from None
                retry = False

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[psycopg.Cursor[Any]]:
        conn, cur = self._first(begin)
        try:
            with cur:
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
        finally:
            self._pool.give(conn)

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read-only statement, its own snapshot: one round trip, no BEGIN and
        COMMIT around it (the search of R-PG-5 that needs nothing else)."""
        conn, cur = self._first(sql, params)
        try:
            with cur:
                return cur.fetchall()
        except self._psycopg.Error as exc:
            raise SessionDatabaseError(f"{self.name}: {self._say(exc)}") from None
        finally:
            self._pool.give(conn)

    def write(self) -> AbstractContextManager[psycopg.Cursor[Any]]:
        """``with db.write() as cur:`` one READ COMMITTED transaction, rolled back on any error."""
        return self._transaction("BEGIN ISOLATION LEVEL READ COMMITTED")

    def read(self) -> AbstractContextManager[psycopg.Cursor[Any]]:
        """``with db.read() as cur:`` one snapshot."""
        return self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def close(self) -> None:
        self._pool.close()


def _identifier(name: str) -> str:
    """A schema's name quoted for SQL."""
    return '"' + name.replace('"', '""') + '"'


_SLOT: Final = object()  # handed to a waiter: it may connect, in the place of a connection that went
_CLOSED: Final = object()  # handed to every waiter when the pool closes


class _Waiter:
    """One call waiting in line for a connection (R-PG-12).

    ``given`` is what the pool handed it: a connection, ``_SLOT`` or ``_CLOSED``; None while it
    still waits.
    """

    __slots__ = ("given", "ready")

    def __init__(self) -> None:
        self.given: object = None
        self.ready = threading.Event()


class _Pool:
    """At most ``size`` connections, made when first needed and handed to the calls first come,
    first served (R-PG-12).

    A call that finds none free waits in line; a connection given back goes straight to the
    oldest waiter, never back to the pool while someone waits, so a thread that gives one back
    and asks again queues behind the others instead of taking it again at once, and no call
    starves. A wait longer than ``timeout`` seconds ends in SessionDatabaseError
    (``err_pool_timeout``), so a pool held by stuck calls fails its callers instead of hanging
    them. A dropped connection (``broken``) is closed instead of kept, and takes every idle one
    with it: a server restart drops them all, and handing them out one by one would fail one call
    each; each place freed goes to the oldest waiter, which connects again. A connection given
    back after ``close`` is closed.
    """

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        size: int,
        driver_error: type[Exception],
        name: str,
        timeout: float,
    ) -> None:
        self._connect = connect
        self._name = name
        self._size = size
        self._timeout = timeout
        self._driver_error = driver_error
        self._idle: list[psycopg.Connection[Any]] = []
        self._waiters: deque[_Waiter] = deque()
        self._open = 0  # connections open or being made
        self._closed = False
        self._lock = threading.Lock()

    def _closed_error(self) -> SessionClosed:
        return SessionClosed(f"the session database {self._name} is closed")

    def take(self) -> psycopg.Connection[Any]:
        """A connection for one call: an idle one, a new one while fewer than ``size`` are open,
        else the next one given back, in the order the calls asked."""
        with self._lock:
            if self._closed:
                raise self._closed_error()
            if self._idle:
                return self._idle.pop()
            if self._open < self._size:
                self._open += 1
                given: object = _SLOT
            else:
                given = self._wait_in_line()
        if given is _CLOSED:
            raise self._closed_error()
        if given is not _SLOT:
            return given  # type: ignore[return-value]
        try:
            return self._connect()
        except BaseException:
            with self._lock:
                self._release(1)
            raise

    def _wait_in_line(self) -> object:
        """Queue behind the calls already waiting and return what the pool hands over.

        Called holding the lock, which it lets go of while it waits.

        Raises:
            SessionDatabaseError: nothing was handed over within the timeout.
        """
        waiter = _Waiter()
        self._waiters.append(waiter)
        self._lock.release()
        try:
            waiter.ready.wait(self._timeout)
        finally:
            self._lock.acquire()
        if waiter.given is None:  # still in line: nothing came in time (a hand-over after the wait is kept)
            self._waiters.remove(waiter)
            raise SessionDatabaseError(Said("err_pool_timeout", db=self._name, seconds=f"{self._timeout:g}"))
        return waiter.given

    def _hand(self, given: object) -> bool:
        """Give ``given`` to the oldest waiter; False when nobody waits. Called holding the lock."""
        if not self._waiters:
            return False
        waiter = self._waiters.popleft()
        waiter.given = given
        waiter.ready.set()
        return True

    def _release(self, places: int) -> None:
        """``places`` connections went: each place goes to a waiter, which connects, or is freed."""
        for _ in range(places):
            if not self._hand(_SLOT):
                self._open -= 1

    def give(self, conn: psycopg.Connection[Any]) -> None:
        """Take back a call's connection: to the oldest waiter, else idle; closed when dropped."""
        with self._lock:
            if self._closed:
                self._open -= 1
                dropped = [conn]
            elif conn.closed:  # dropped: psycopg's broken is closed too, and so are the idle ones
                dropped = [conn, *self._idle]
                self._idle.clear()
                self._release(len(dropped))
            else:
                if not self._hand(conn):
                    self._idle.append(conn)
                return
        for each in dropped:
            try:
                each.close()
            except self._driver_error:
                pass

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            while self._hand(_CLOSED):
                pass
        for conn in idle:
            conn.close()
