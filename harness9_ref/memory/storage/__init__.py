"""Storage: what of a conversation is kept, and where (SPEC R-SES, R-MGR, R-DB, R-PG, R-FIND, R-SRCH, R-PRUNE, R-CKP).

The ``Session`` protocol (one conversation's messages), ``LongSessionState`` (what long-session mode
keeps beside them: todos, checkpoint, context state; ``StatefulSession`` is both) and their three
implementations, each of both: ``MemorySession`` (no I/O), ``SQLiteSession`` (an SQLite file, R-DB) and
PostgreSQL's sessions (R-PG), the last two handed out by a ``Manager``, which also finds,
searches, prunes and copies sessions. Both databases run one session (``_sql_session``) and one
store (``_sql_store``), each over a dialect that holds only what the two do differently
(``_dialect``; ``_sqlite_dialect``, ``_pg_dialect``); the SQL they share is written once, in
``_sql``, for either placeholder style. psycopg is imported only when a ``postgresql://`` URL is
opened. This is the half of memory that does I/O; the other half, ``memory.context``, decides
what the model sees and never imports this one.
"""

from ._checkpoint import Checkpoint, checkpoint_problem, message_anchor
from ._context_state import WINDOW_MODEL_MAX, WINDOW_SOURCES, ContextState
from ._find import TITLE_LIMIT, SessionSummary, make_title
from ._manager import HOME_ENV, CopyResult, Manager, copy_sessions, default_db_path
from ._prune import PruneResult
from ._search import SearchHit, make_snippet, matches
from ._session import (
    SESSION_ID_PATTERN,
    AmbiguousSessionId,
    Clock,
    CorruptRow,
    ForeignDatabase,
    InvalidArgument,
    InvalidSessionId,
    LongSessionState,
    MemorySession,
    Session,
    SessionClosed,
    SessionDatabaseError,
    SessionError,
    SessionInfo,
    SessionNotFound,
    StatefulSession,
    UnsupportedSchema,
    is_session_id,
    new_session_id,
)
from ._sqlite_db import NOT_OURS
from ._sqlite_dialect import SQLiteSession
from ._store import POSTGRES_SCHEMES, url_scheme

__all__ = (
    "HOME_ENV",
    "NOT_OURS",
    "POSTGRES_SCHEMES",
    "SESSION_ID_PATTERN",
    "TITLE_LIMIT",
    "WINDOW_MODEL_MAX",
    "WINDOW_SOURCES",
    "AmbiguousSessionId",
    "Checkpoint",
    "Clock",
    "ContextState",
    "CopyResult",
    "CorruptRow",
    "ForeignDatabase",
    "InvalidArgument",
    "InvalidSessionId",
    "LongSessionState",
    "Manager",
    "MemorySession",
    "PruneResult",
    "SQLiteSession",
    "SearchHit",
    "Session",
    "SessionClosed",
    "SessionDatabaseError",
    "SessionError",
    "SessionInfo",
    "SessionNotFound",
    "SessionSummary",
    "StatefulSession",
    "UnsupportedSchema",
    "checkpoint_problem",
    "copy_sessions",
    "default_db_path",
    "is_session_id",
    "make_snippet",
    "make_title",
    "matches",
    "message_anchor",
    "new_session_id",
    "url_scheme",
)
