"""Memory: token estimation, tool-pair repair and the three compactors (SPEC sections 3 … 7).

The token, repair and compaction code maps ``list[Message]`` to ``list[Message]`` (or a
number): no clock, no database, no network. Sessions (``Manager``, ``SQLiteSession``,
``MemorySession``, and PostgreSQL's sessions behind ``Manager("postgresql://…")``) are the only
part that does I/O.
"""

from ._budget import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TAIL_MESSAGES,
    TokenBudgetCompactor,
    new_token_budget_compactor,
)
from ._checkpoint import Checkpoint, checkpoint_problem, message_anchor
from ._compactor import BUDGET_PERCENT, Compactor, budget_for_context_window
from ._copy import CopyResult, copy_sessions
from ._find import TITLE_LIMIT, SessionSummary
from ._manager import HOME_ENV, Manager, default_db_path
from ._memory_session import MemorySession
from ._prune import PruneResult
from ._repair import STUB_TEXT, repair_orphaned_tool_pairs
from ._search import SearchHit
from ._session import (
    SESSION_ID_PATTERN,
    AmbiguousSessionId,
    Clock,
    CorruptRow,
    InvalidArgument,
    InvalidSessionId,
    Session,
    SessionClosed,
    SessionDatabaseError,
    SessionError,
    SessionInfo,
    SessionNotFound,
    UnsupportedSchema,
    is_session_id,
    new_session_id,
)
from ._shorten import SHORTEN_KEEP_MIN, SHORTENED_MARKER, shorten_text, shorten_view
from ._sliding import DEFAULT_MAX_MESSAGES, SlidingWindowCompactor
from ._sqlite_session import SQLiteSession
from ._store import POSTGRES_SCHEMES, url_scheme
from ._summarize import (
    SUMMARY_FIRST_PROMPT,
    SUMMARY_FOCUS,
    SUMMARY_INCREMENTAL_PROMPT,
    SUMMARY_MARKER,
    SUMMARY_SYSTEM_PROMPT,
    SUMMARY_TEMPLATE,
    SUMMARY_TIMEOUT_SECONDS,
    SummarizationCompactor,
    Summarized,
    Summarizer,
    is_summary,
    new_summarization_compactor,
    summary_message,
)
from ._tokens import CHARS_PER_TOKEN, estimate_tokens, estimate_tool_tokens, format_token_count

__all__ = (
    "BUDGET_PERCENT",
    "CHARS_PER_TOKEN",
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MIN_TAIL_MESSAGES",
    "HOME_ENV",
    "POSTGRES_SCHEMES",
    "SESSION_ID_PATTERN",
    "SHORTENED_MARKER",
    "SHORTEN_KEEP_MIN",
    "STUB_TEXT",
    "SUMMARY_FIRST_PROMPT",
    "SUMMARY_FOCUS",
    "SUMMARY_INCREMENTAL_PROMPT",
    "SUMMARY_MARKER",
    "SUMMARY_SYSTEM_PROMPT",
    "SUMMARY_TEMPLATE",
    "SUMMARY_TIMEOUT_SECONDS",
    "TITLE_LIMIT",
    "AmbiguousSessionId",
    "Checkpoint",
    "Clock",
    "Compactor",
    "CopyResult",
    "CorruptRow",
    "InvalidArgument",
    "InvalidSessionId",
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
    "SlidingWindowCompactor",
    "SummarizationCompactor",
    "Summarized",
    "Summarizer",
    "TokenBudgetCompactor",
    "UnsupportedSchema",
    "budget_for_context_window",
    "checkpoint_problem",
    "copy_sessions",
    "default_db_path",
    "estimate_tokens",
    "estimate_tool_tokens",
    "format_token_count",
    "is_session_id",
    "is_summary",
    "message_anchor",
    "new_session_id",
    "new_summarization_compactor",
    "new_token_budget_compactor",
    "repair_orphaned_tool_pairs",
    "shorten_text",
    "shorten_view",
    "summary_message",
    "url_scheme",
)
