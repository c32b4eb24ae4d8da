"""Storage: what of a conversation is kept, and where (SPEC R-SES, R-MGR, R-DB, R-PG, R-FIND, R-SRCH, R-PRUNE, R-CKP, R-UNDO).

The ``Session`` protocol (messages, todos, checkpoint, context state of one conversation) and its three
implementations: ``MemorySession`` (no I/O), ``SQLiteSession`` (an SQLite file, R-DB) and
PostgreSQL's sessions (R-PG), the last two handed out by a ``Manager``, which also finds,
searches, prunes and copies sessions. Both databases run one session (``_sql_session``) and one
store (``_sql_store``), each over a dialect that holds only what the two do differently
(``_dialect``; ``_sqlite_dialect``, ``_pg_dialect``); the SQL they share is written once, in
``_sql``, for either placeholder style. psycopg is imported only when a ``postgresql://`` URL is
opened. This is the half of memory that does I/O; the other half, ``memory.context``, decides
what the model sees and never imports this one.
"""

from . import (
    _checkpoint,
    _context_state,
    _file_changes,
    _find,
    _manager,
    _prune,
    _search,
    _session,
    _sqlite_db,
    _sqlite_dialect,
    _store,
)
from ._checkpoint import *
from ._context_state import *
from ._file_changes import *
from ._find import *
from ._manager import *
from ._prune import *
from ._search import *
from ._session import *
from ._sqlite_db import *
from ._sqlite_dialect import *
from ._store import *

__all__ = [
    *_checkpoint.__all__,
    *_context_state.__all__,
    *_file_changes.__all__,
    *_find.__all__,
    *_manager.__all__,
    *_prune.__all__,
    *_search.__all__,
    *_session.__all__,
    *_sqlite_db.__all__,
    *_sqlite_dialect.__all__,
    *_store.__all__,
]
