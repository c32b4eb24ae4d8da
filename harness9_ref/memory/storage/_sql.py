"""The SQL both databases run, written once (SPEC R-DB-1, R-PG-2, R-PG-4, R-CKP-12).

SQLite (R-DB) and PostgreSQL (R-PG) hold the same tables with the same columns, and a session
or a store asks both the same questions, so each statement they share is written here once and
built for each driver's placeholder style: ``?`` for sqlite3, ``%s`` for psycopg. What differs
stays with its backend's dialect (``_dialect``) or its own modules: SQLite's full-text index and
its typeof() guard, ``GLOB`` against ``LIKE``, ``json_each`` against ``ANY``, row locks (``FOR
UPDATE``), SQLite's ``INSERT OR IGNORE`` / ``OR REPLACE`` against ``ON CONFLICT``, and the
schemas themselves.

No statement holds a literal ``%`` or ``?``: psycopg would read the first as a placeholder and
sqlite3 the second.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "FIRST_PROMPT",
    "MESSAGE_COUNT",
    "POSTGRES",
    "SESSION_ORDER",
    "SQLITE",
    "STATE_COLUMNS",
    "STATE_COLUMN_NAMES",
    "Statements",
]

SESSION_ORDER: Final = "ORDER BY s.updated_at DESC, s.created_at DESC, s.id DESC"  # R-MGR-5
# R-CKP-12: the context_state columns of ContextState's members, in its field order; window_tokens
# holds ``window`` (WINDOW is a reserved word of SQL).
STATE_COLUMN_NAMES: Final = (
    "input_tokens",
    "estimate",
    "cleared_below",
    "summary_failures",
    "summary_paused",
    "window_tokens",
    "window_source",
    "window_model",
)
STATE_COLUMNS: Final = ", ".join(STATE_COLUMN_NAMES)
MESSAGE_COUNT: Final = "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
# R-FIND-3: the first message with role user that is not a result (R-DB-5: NULL or '' is empty;
# PostgreSQL reads '' as an empty BYTEA here, R-PG-4).
FIRST_PROMPT: Final = (
    "(SELECT m.id FROM messages m WHERE m.session_id = s.id AND m.role = 'user'"
    " AND coalesce(m.tool_call_id, '') = '' ORDER BY m.id LIMIT 1)"
)


class Statements:
    """Every shared statement, with ``p`` as its placeholder; the attributes read as the calls that run them.

    ``derived`` names the columns a backend derives from a message's content and writes with it
    (PostgreSQL's ``body`` and ``folded``, R-PG-11): appended to every insert of a message, and
    copied as stored by a fork.
    """

    def __init__(self, p: str, derived: tuple[str, ...] = ()) -> None:
        extra = "".join(f", {name}" for name in derived)
        self.placeholder = p
        # sessions (R-MGR-3 … R-MGR-6, R-FIND-2)
        self.session_exists = f"SELECT 1 FROM sessions WHERE id = {p}"
        # R-FIND-4: a session's row records its folder and provider when it is inserted.
        self.insert_session = (
            f"INSERT INTO sessions (id, created_at, updated_at, workdir, provider) VALUES ({p}, {p}, {p}, {p}, {p})"
        )
        self.session_origin = f"SELECT workdir, provider FROM sessions WHERE id = {p}"  # R-FIND-4
        self.touch_session = f"UPDATE sessions SET updated_at = {p} WHERE id = {p}"
        self.delete_session = f"DELETE FROM sessions WHERE id = {p}"
        self.list_sessions = f"SELECT s.id, s.created_at, s.updated_at, {MESSAGE_COUNT} FROM sessions s {SESSION_ORDER}"
        # R-FIND-3: sessions that hold a message, with the id of the message their title comes from.
        # R-FIND-5: the same, only the sessions of one folder.
        recent = (
            f"SELECT s.id, s.created_at, s.updated_at, {MESSAGE_COUNT}, {FIRST_PROMPT}, s.workdir, s.provider"
            " FROM sessions s WHERE EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"
        )
        self.recent_sessions = f"{recent} {SESSION_ORDER} LIMIT {p} OFFSET {p}"
        self.recent_sessions_in = f"{recent} AND s.workdir = {p} {SESSION_ORDER} LIMIT {p} OFFSET {p}"
        self.session_details = f"SELECT {MESSAGE_COUNT}, {FIRST_PROMPT} FROM sessions s WHERE s.id = {p}"  # R-SRCH-1
        # messages (R-SES-3 … R-SES-6)
        select_messages = f"SELECT id, role, content, tool_calls, tool_call_id FROM messages WHERE session_id = {p}"
        self.all_messages = select_messages + " ORDER BY id ASC"
        self.newest_messages = select_messages + f" ORDER BY id DESC LIMIT {p}"
        self.newest_message = select_messages + " ORDER BY id DESC LIMIT 1"
        # R-CKP-4: the id of the message at position ``start`` comes from a walk of
        # idx_messages_session alone (the index holds session_id and id, so no covered row is
        # read, let alone decoded); only the rows from there on are fetched. Past the end the
        # subquery is NULL and nothing matches.
        self.messages_from = (
            select_messages
            + f" AND id >= (SELECT id FROM messages WHERE session_id = {p} ORDER BY id LIMIT 1 OFFSET {p}) ORDER BY id ASC"
        )
        self.insert_message = (
            f"INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, created_at{extra})"
            f" VALUES ({', '.join([p] * (6 + len(derived)))})"
        )
        self.delete_message = f"DELETE FROM messages WHERE id = {p}"
        self.delete_messages = f"DELETE FROM messages WHERE session_id = {p}"
        self.message_ids = f"SELECT id FROM messages WHERE session_id = {p}"
        # todos (R-SES-7)
        self.todos = f"SELECT id, content, status FROM todos WHERE session_id = {p} ORDER BY position"
        self.delete_todos = f"DELETE FROM todos WHERE session_id = {p}"
        self.insert_todo = f"INSERT INTO todos (session_id, position, id, content, status) VALUES ({p}, {p}, {p}, {p}, {p})"
        # checkpoints (R-CKP-2, R-CKP-3, R-CKP-6)
        self.checkpoint = f"SELECT covered, anchor, summary FROM checkpoints WHERE session_id = {p}"
        self.insert_checkpoint = (
            f"INSERT INTO checkpoints (session_id, covered, anchor, summary, created_at) VALUES ({p}, {p}, {p}, {p}, {p})"
        )
        self.delete_checkpoint = f"DELETE FROM checkpoints WHERE session_id = {p}"
        # context state (R-CKP-9, R-CKP-11, R-CKP-12): its members' columns, then saved_at
        self.context_state = f"SELECT {STATE_COLUMNS} FROM context_state WHERE session_id = {p}"
        self.insert_context_state = (
            f"INSERT INTO context_state (session_id, {STATE_COLUMNS}, saved_at)"
            f" VALUES ({', '.join([p] * (len(STATE_COLUMN_NAMES) + 2))})"
        )
        self.delete_context_state = f"DELETE FROM context_state WHERE session_id = {p}"
        # forking a session (R-MGR-10): the new row's copies of the first ``at`` messages, in their
        # order, and of the todos, checkpoint and context state, column values as stored; the
        # last two only when a pop down to ``at`` messages would keep them (R-CKP-3, R-CKP-11).
        self.count_messages = f"SELECT COUNT(*) FROM messages WHERE session_id = {p}"
        # R-MGR-11: whether the message at a position is a result (R-DB-5: NULL or '' is empty).
        self.result_at = (
            f"SELECT coalesce(tool_call_id, '') != '' FROM messages WHERE session_id = {p} ORDER BY id LIMIT 1 OFFSET {p}"
        )
        self.fork_messages = (
            f"INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, created_at{extra})"
            f" SELECT {p}, role, content, tool_calls, tool_call_id, created_at{extra} FROM messages"
            f" WHERE session_id = {p} ORDER BY id LIMIT {p}"
        )
        # R-FIND-7: a fork records its source's folder and provider.
        self.fork_session = (
            "INSERT INTO sessions (id, created_at, updated_at, workdir, provider)"
            f" SELECT {p}, {p}, {p}, workdir, provider FROM sessions WHERE id = {p}"
        )
        self.fork_todos = (
            "INSERT INTO todos (session_id, position, id, content, status)"
            f" SELECT {p}, position, id, content, status FROM todos WHERE session_id = {p}"
        )
        self.fork_checkpoint = (
            "INSERT INTO checkpoints (session_id, covered, anchor, summary, created_at)"
            f" SELECT {p}, covered, anchor, summary, created_at FROM checkpoints WHERE session_id = {p} AND covered <= {p}"
        )
        self.fork_context_state = (
            f"INSERT INTO context_state (session_id, {STATE_COLUMNS}, saved_at)"
            f" SELECT {p}, {STATE_COLUMNS}, saved_at FROM context_state"
            f" WHERE session_id = {p} AND cleared_below <= {p}"
        )
        # file changes (R-UNDO-2): recorded, read oldest first, and a fork's copies of those of the
        # calls it keeps (R-UNDO-2d), each column as stored
        change_columns = "tool_call_id, path, existed, before, after, created_at"
        self.insert_file_change = (
            f"INSERT INTO file_changes (session_id, {change_columns}) VALUES ({', '.join([p] * 7)})"
        )
        self.file_changes = (
            f"SELECT id, tool_call_id, path, existed, before, after FROM file_changes WHERE session_id = {p} ORDER BY id"
        )
        self.export_file_changes = (
            f"SELECT id, {change_columns} FROM file_changes WHERE session_id = {p} ORDER BY id"
        )
        self.delete_file_changes = f"DELETE FROM file_changes WHERE session_id = {p}"
        self.kept_tool_calls = f"SELECT tool_calls FROM messages WHERE session_id = {p} ORDER BY id ASC LIMIT {p}"
        # copying every session (R-PG-9)
        self.export_sessions = "SELECT id, created_at, updated_at, workdir, provider FROM sessions ORDER BY id"
        self.export_messages = (
            "SELECT id, role, content, tool_calls, tool_call_id, created_at FROM messages"
            f" WHERE session_id = {p} ORDER BY id"
        )
        self.export_checkpoint = f"SELECT covered, anchor, summary, created_at FROM checkpoints WHERE session_id = {p}"
        self.export_context_state = f"SELECT {STATE_COLUMNS}, saved_at FROM context_state WHERE session_id = {p}"


SQLITE: Final = Statements("?")
POSTGRES: Final = Statements("%s", ("body", "folded"))
