"""The SQLite file: opening, schema version, transactions and row decoding (SPEC R-DB-1 … R-DB-12, R-CKP-6, R-CKP-12, R-SES-8).

One ``Database`` is one connection, shared by a Manager and all its sessions under one lock
(R-MGR-2). Every write is ``BEGIN IMMEDIATE … COMMIT`` and rolls back on any error (R-DB-8);
reads run in a deferred transaction so that they see one snapshot. A write waits for another
connection's lock in short tries for as long as the others commit (``_begin_write``, R-SES-8);
reads keep SQLite's own busy handler, up to BUSY_TIMEOUT_MS (R-DB-3).

A read-only ``Database`` (R-DB-12) is what the commands that only read open: it writes nothing
to the file or its folder, so they work on a file or a file system that cannot be written. A
file of an older format is read through an upgraded copy in memory, and a missing file reads as
an empty database; either way the connection refuses every write (``PRAGMA query_only``).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Final

from ..._harness9_error import os_reason
from ._index import index_available, index_state, index_tail, install_index, mark_damaged, reconcile_index, watermark
from ._session import ForeignDatabase, SessionClosed, SessionDatabaseError, UnsupportedSchema

__all__ = ["NOT_OURS"]

FORMAT_VERSION: Final = 5  # R-DB-2: PRAGMA user_version of a file in this format
# R-DB-2: version 4 is this format before the sessions' workdir and provider (R-FIND-4) and the
# file_changes table (R-UNDO-2c), version 3 before the last five columns of context_state too
# (R-CKP-12), version 2 before the context_state table, version 1 before the checkpoints table too
# (R-CKP-6); version 0 is a new file or one in the design document's schema. All five are upgraded
# in place.
UPGRADABLE_VERSIONS: Final = (0, 1, 2, 3, 4)
BUSY_TIMEOUT_MS: Final = 5000  # R-DB-3
# R-SES-8: a writer asks SQLite for the lock in slices of this many milliseconds, so that it keeps
# polling as often as a newcomer does (SQLite's own wait polls every 100 ms after 228 ms, and so
# loses the lock to writers that have waited less), and sees between two slices whether the others
# commit. It fails after BUSY_TIMEOUT_MS with no commit by anyone, or after WRITE_WAIT_S in all.
BUSY_SLICE_MS: Final = 100
WRITE_WAIT_S: Final = 30.0
# R-SES-8b: SQLite refuses some statements at once, without its busy wait, while another
# connection writes (switching to WAL needs the write lock after reading); such a refusal is
# tried again after this pause rather than at once, so the loop never spins.
REFUSED_PAUSE_S: Final = 0.01
DIR_MODE: Final = 0o700  # R-DB-9
FILE_MODE: Final = 0o600  # R-DB-9
# R-DB-2: why a version-0 file without a sessions table that is not empty is refused.
NOT_OURS: Final = "not a harness9 database (it has tables of its own)"

# R-DB-1: the design document's schema plus the todos table, the checkpoints table (R-CKP-6) and
# the context_state table (R-CKP-12), whose columns after saved_at format version 4 added; format
# version 5 added the sessions' workdir and provider (R-FIND-4) and the file_changes table of
# the tool calls' file changes (R-UNDO-2c).
SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS sessions (
    id         TEXT    PRIMARY KEY,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    workdir    TEXT    NOT NULL DEFAULT '',
    provider   TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT    NOT NULL,
    role         TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    tool_calls   TEXT,
    tool_call_id TEXT,
    created_at   INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, id);
CREATE TABLE IF NOT EXISTS todos (
    session_id TEXT    NOT NULL,
    position   INTEGER NOT NULL,
    id         TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    PRIMARY KEY (session_id, position),
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT    PRIMARY KEY,
    covered    INTEGER NOT NULL,
    anchor     TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS context_state (
    session_id       TEXT    PRIMARY KEY,
    input_tokens     INTEGER NOT NULL,
    estimate         INTEGER NOT NULL,
    cleared_below    INTEGER NOT NULL,
    saved_at         INTEGER NOT NULL,
    summary_failures INTEGER NOT NULL DEFAULT 0,
    summary_paused   INTEGER NOT NULL DEFAULT 0,
    window_tokens    INTEGER NOT NULL DEFAULT 0,
    window_source    TEXT    NOT NULL DEFAULT '',
    window_model     TEXT    NOT NULL DEFAULT '',
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS file_changes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT    NOT NULL,
    tool_call_id TEXT    NOT NULL,
    path         TEXT    NOT NULL,
    existed      INTEGER NOT NULL,
    before       BLOB,
    after        BLOB,
    created_at   INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_file_changes_session ON file_changes(session_id, id);
"""
_SCHEMA_STATEMENTS: Final = [s.strip() for s in SCHEMA.split(";") if s.strip()]
# The tables a file being upgraded may already hold in a form of its own: every table of R-DB-1 (R-DB-2).
_CHECKED_TABLES: Final = ("sessions", "messages", "todos", "checkpoints", "context_state", "file_changes")
# R-DB-2: tables an earlier format made with only their first columns, and how many: a file being
# upgraded may hold either form, and the upgrade adds the columns after those (R-CKP-12, R-FIND-4).
_EARLIER_FORMS: Final = {"context_state": 5, "sessions": 3}


def _prepare_path(path: Path) -> None:
    """Create a missing directory (0700) and file (0600) before SQLite opens the file."""
    try:
        try:
            path.parent.mkdir(parents=True, mode=DIR_MODE)
            os.chmod(path.parent, DIR_MODE)
        except FileExistsError:
            pass  # it exists (perhaps just made by another process); its mode is its own
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))
            os.chmod(path, FILE_MODE)
        except FileExistsError:
            pass
    except OSError as exc:
        raise SessionDatabaseError(f"cannot create the session database {path}: {os_reason(exc)}") from exc


_Column = tuple[str, str, int, int]


def _columns(cur: sqlite3.Cursor, table: str) -> tuple[_Column, ...]:
    """Name, declared type (upper case), NOT NULL and primary-key position of each column, in order.

    These are what R-DB-1 makes part of the format; an empty tuple means no such table.
    """
    rows = cur.execute("SELECT name, upper(type), \"notnull\", pk FROM pragma_table_info(?)", (table,)).fetchall()
    return tuple((str(name), str(declared), int(notnull), int(pk)) for name, declared, notnull, pk in rows)


def _has_objects(cur: sqlite3.Cursor) -> bool:
    """Whether the file holds any table, index, view or trigger besides SQLite's own (R-DB-2)."""
    row = cur.execute("SELECT 1 FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' LIMIT 1").fetchone()
    return row is not None


@functools.cache
def _reference() -> tuple[dict[str, tuple[_Column, ...]], dict[str, tuple[str, ...]]]:
    """What SCHEMA makes, read from SCHEMA itself so the two agree: the columns of each checked
    table, and for each table of _EARLIER_FORMS the ``ALTER TABLE`` statements that complete its
    earlier form (each later column, NOT NULL with its default)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SCHEMA)
        cur = conn.cursor()
        expected = {table: _columns(cur, table) for table in _CHECKED_TABLES}
        added = {}
        for table, kept in _EARLIER_FORMS.items():
            defaults = [row[0] for row in cur.execute("SELECT dflt_value FROM pragma_table_info(?)", (table,))]
            added[table] = tuple(
                f"ALTER TABLE {table} ADD COLUMN {name} {declared} NOT NULL DEFAULT {default}"
                for (name, declared, _, _), default in zip(expected[table][kept:], defaults[kept:], strict=True)
            )
        return expected, added
    finally:
        conn.close()


def _is_ours(table: str, columns: tuple[_Column, ...]) -> bool:
    """Whether a table of a file being upgraded has R-DB-1's columns, or those of its earlier form (R-DB-2)."""
    expected = _reference()[0][table]
    return columns == expected or (table in _EARLIER_FORMS and columns == expected[: _EARLIER_FORMS[table]])


def _upgrade(cur: sqlite3.Cursor) -> None:
    """Create whatever R-DB-1 has and the file lacks, complete a table of an earlier form, then
    set the format version (R-DB-2)."""
    for statement in _SCHEMA_STATEMENTS:
        cur.execute(statement)
    for table, kept in _EARLIER_FORMS.items():
        if len(_columns(cur, table)) == kept:
            for statement in _reference()[1][table]:
                cur.execute(statement)
    cur.execute(f"PRAGMA user_version = {FORMAT_VERSION}")


def _is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused for a lock another connection holds (SQLITE_BUSY and its extended codes)."""
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11 and later
    return str(name).startswith("SQLITE_BUSY") if name is not None else str(exc) == "database is locked"


def _data_version(conn: sqlite3.Connection) -> int | None:
    """``PRAGMA data_version``: it changes when another connection commits; None when it cannot be read."""
    try:
        return int(conn.execute("PRAGMA data_version").fetchone()[0])
    except sqlite3.OperationalError:
        return None


def _begin_write(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """``BEGIN IMMEDIATE``, waiting for the write lock as long as other writers commit (R-SES-8)."""
    return _wait_out_writers(conn, "BEGIN IMMEDIATE")


def _wait_out_writers(conn: sqlite3.Connection, statement: str) -> sqlite3.Cursor:
    """Run ``statement``, trying again while another connection's lock refuses it and others commit (R-SES-8b).

    SQLite's busy handler sleeps longer and longer between tries (up to 100 ms), so under many
    writers one that has waited long tries seldom and keeps losing the lock to newcomers,
    until its busy timeout ends in "database is locked" although every writer ahead of it
    finished at once. Here each try waits at most BUSY_SLICE_MS, so every waiter polls as often
    as a newcomer, and between tries ``data_version`` tells whether anyone committed: the wait
    fails only when nobody has for BUSY_TIMEOUT_MS (a holder that is stuck, R-DB-3), or after
    WRITE_WAIT_S in all. A statement SQLite refuses without waiting at all (the switch to WAL
    while another program creates the same new file) is tried again after REFUSED_PAUSE_S.
    The connection's own busy timeout is R-DB-3's again afterwards.
    """
    conn.execute(f"PRAGMA busy_timeout = {BUSY_SLICE_MS}")
    try:
        started = progress = time.monotonic()
        seen: int | None = None
        while True:
            tried = time.monotonic()
            try:
                return conn.execute(statement)
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                now, version = time.monotonic(), _data_version(conn)
                if version is not None:
                    if seen is not None and version != seen:
                        progress = now
                    seen = version
                if now - progress >= BUSY_TIMEOUT_MS / 1000 or now - started >= WRITE_WAIT_S:
                    raise
                time.sleep(max(0.0, REFUSED_PAUSE_S - (now - tried)))
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


class Database:
    """The Manager's one connection, with the lock that serialises its users.

    ``indexed`` says whether this connection keeps the full-text index of R-SRCH-3; when it is
    False, search scans and writes leave the index to whoever keeps it.
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.indexed = False
        self.read_only = read_only
        self._lock = threading.RLock()
        if read_only:
            self._conn: sqlite3.Connection | None = self._open_read_only()
        else:
            _prepare_path(path)
            try:
                # Opening takes no lock; the busy timeout is set by _configure's first statement.
                self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            except sqlite3.Error as exc:
                raise SessionDatabaseError(f"cannot open the session database {path}: {exc}") from exc
        # Text that is not UTF-8 comes back with lone surrogates, which Message refuses, so a bad
        # row is reported as CorruptRow naming it instead of failing inside the driver.
        self._conn.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")
        try:
            if read_only:
                self._configure_read_only()
            else:
                self._configure()
        except BaseException:
            self.close()
            raise
        self.indexed = self._index_complete() if read_only else self._open_index()

    def _configure(self) -> None:
        """Set the connection pragmas, then check or create the schema, then switch to WAL.

        WAL comes last so that a file refused by ``_migrate`` is left byte for byte as it was.
        """
        conn = self._live()
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            with self.write() as cur:
                self._migrate(cur)
            _wait_out_writers(conn, "PRAGMA journal_mode = WAL")  # refused at once while another writes
            conn.execute("PRAGMA synchronous = NORMAL")
        except (sqlite3.Error, UnicodeError) as exc:
            raise SessionDatabaseError(f"{self.path} is not a usable SQLite database: {exc}") from exc

    def _migrate(self, cur: sqlite3.Cursor) -> None:
        """Bring the file to FORMAT_VERSION, or refuse it untouched (R-DB-2).

        Runs inside ``_configure``'s one write transaction, and every check that can refuse runs
        before the first statement that writes, so an upgrade is all or nothing and a refusal
        leaves the file byte for byte as it was. The upgrade only creates what is missing (every
        statement is ``IF NOT EXISTS``) and adds columns with their defaults to a table of an
        earlier form, so every existing row stays where it is, its values as stored.
        """
        if self._check_format(cur) != FORMAT_VERSION:
            _upgrade(cur)

    def _check_format(self, cur: sqlite3.Cursor) -> int:
        """The file's format version, once every check that can refuse it has passed (R-DB-2).

        Raises:
            ForeignDatabase: version 0, no sessions table, and objects of another program.
            UnsupportedSchema: another version, or a table of ours in another form.
        """
        version = int(cur.execute("PRAGMA user_version").fetchone()[0])
        if version == FORMAT_VERSION:
            return version
        if version not in UPGRADABLE_VERSIONS:
            raise UnsupportedSchema(
                f"{self.path} has format version {version}; this program reads versions 0 to {FORMAT_VERSION}"
            )
        if version == 0 and not _columns(cur, "sessions") and _has_objects(cur):
            raise ForeignDatabase(f"{self.path}: {NOT_OURS}")
        for table in _CHECKED_TABLES:
            columns = _columns(cur, table)
            if columns and not _is_ours(table, columns):
                names = ", ".join(column[0] for column in columns)
                raise UnsupportedSchema(f"{self.path} has a {table} table of another format (columns {names})")
        return version

    def _open_read_only(self) -> sqlite3.Connection:
        """A connection that cannot write the file and creates nothing beside it (R-DB-12).

        Without a ``-wal`` file the database file holds everything and is read as immutable
        (``immutable=1``: no ``-wal`` or ``-shm`` file is made, no lock taken). With one, another
        connection may be writing, so the file is opened ``mode=ro``, which reads the WAL; when
        that cannot work (a read-only folder without the ``-shm`` file), as immutable after
        all. A missing file is an empty database in memory, so nothing is created.
        """
        if not self.path.exists():
            return sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
        wal = self.path.with_name(self.path.name + "-wal")
        suffixes = ("", "&immutable=1") if wal.exists() else ("&immutable=1",)
        error: sqlite3.Error | None = None
        for suffix in suffixes:
            conn: sqlite3.Connection | None = None
            try:
                conn = sqlite3.connect(uri + suffix, uri=True, isolation_level=None, check_same_thread=False)
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.Error as exc:
                error = exc
                if conn is not None:
                    conn.close()
        raise SessionDatabaseError(f"cannot open the session database {self.path}: {error}")

    def _configure_read_only(self) -> None:
        """Check the format as R-DB-2 does, without writing: an older format is read from an
        upgraded copy in memory, as is an empty file; then every write is refused (R-DB-12)."""
        conn = self._live()
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            with self.read() as cur:
                version = self._check_format(cur)
            if version != FORMAT_VERSION:
                memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                conn.backup(memory)
                conn.close()
                self._conn = conn = memory
                memory.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")
                with self.write() as cur:
                    _upgrade(cur)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA query_only = ON")
        except (sqlite3.Error, UnicodeError) as exc:
            raise SessionDatabaseError(f"{self.path} is not a usable SQLite database: {exc}") from exc

    def _index_complete(self) -> bool:
        """A read-only connection searches through the index only when it holds every message (R-DB-12)."""
        if not index_available():
            return False
        try:
            with self.read() as cur:
                if index_state(cur) != "current":
                    return False
                mark = watermark(cur)
                (above,) = cur.execute("SELECT COUNT(*) FROM messages WHERE id > ?", (mark,)).fetchone()
                (messages,) = cur.execute("SELECT COUNT(*) FROM messages").fetchone()
                (indexed,) = cur.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchone()
        except SessionDatabaseError:
            return False
        return bool(above == 0 and messages == indexed)

    def _open_index(self) -> bool:
        """Create, check and bring up to date the full-text index (R-SRCH-3); False when it cannot be kept.

        It runs after the format checks, so a refused file never gains it. Indexing a large
        file written by others goes in batches of TAIL_BATCH messages, each its own short
        transaction. An index that is not ours, or an SQLite without FTS5, leaves search to scan,
        which gives the same results; a damaged index of ours is rebuilt once.
        """
        if not index_available():
            return False
        for attempt in ("as found", "rebuilt"):
            try:
                with self.write() as cur:
                    state = index_state(cur)
                    if state == "foreign":
                        return False
                    if state != "current" or attempt == "rebuilt":
                        install_index(cur)  # a damaged index of ours is rebuilt once
                while True:
                    with self.write() as cur:
                        if index_tail(cur):
                            break
                with self.write() as cur:
                    reconcile_index(cur)
                return True
            except SessionDatabaseError as exc:
                cause = getattr(exc.__cause__, "sqlite_errorname", "")
                if not str(cause).startswith("SQLITE_CORRUPT"):
                    return False  # busy, read-only, full: leave the index for a later open
        return False

    def upkeep(self, cur: sqlite3.Cursor, action: Callable[[sqlite3.Cursor], object]) -> None:
        """Run ``action`` on the index inside the caller's write, in a savepoint (R-SRCH-3).

        A damaged index must never cost a message: when the upkeep fails, only it is undone,
        the change of messages commits, and this connection stops using the index (search
        scans; the watermark was not moved, so nothing is taken as indexed that is not).
        """
        if not self.indexed:
            return
        cur.execute("SAVEPOINT messages_fts_upkeep")
        try:
            action(cur)
        except sqlite3.Error:
            cur.execute("ROLLBACK TO messages_fts_upkeep")
            self.indexed = False
            mark_damaged(cur)  # the next open rebuilds it
        cur.execute("RELEASE messages_fts_upkeep")

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise SessionClosed(f"the session database {self.path} is closed")
        return self._conn

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            conn = self._live()
            try:
                cur = _begin_write(conn) if write else conn.execute("BEGIN")
                yield cur
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # SQLite has rolled back already (e.g. after SQLITE_FULL)
                if isinstance(exc, (sqlite3.Error, UnicodeError)):
                    raise SessionDatabaseError(f"{self.path}: {exc}") from exc
                raise

    def write(self) -> AbstractContextManager[sqlite3.Cursor]:
        """``with db.write() as cur:`` one BEGIN IMMEDIATE transaction, rolled back on any error;
        it waits for the lock as R-SES-8 says (``_begin_write``)."""
        return self._transaction(write=True)

    def read(self) -> AbstractContextManager[sqlite3.Cursor]:
        """``with db.read() as cur:`` one snapshot of the file."""
        return self._transaction(write=False)

    def reclaim(self) -> None:
        """VACUUM, then checkpoint the WAL into the file and truncate it, so freed pages leave the files (R-PRUNE-1).

        A TRUNCATE checkpoint waits for every reader of an older snapshot; another program
        reading the file must not hold a prune up for the busy timeout, so it runs without
        waiting and the WAL is left for a later checkpoint when a reader is in the way (the
        bytes reclaimed then count only what is already gone).
        """
        with self._lock:
            conn = self._live()
            try:
                conn.execute("VACUUM")
                conn.execute("PRAGMA busy_timeout = 0")
                try:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
                finally:
                    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            except sqlite3.Error as exc:
                raise SessionDatabaseError(f"{self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

