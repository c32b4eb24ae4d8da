"""The ``session`` op of the reference adapter: a list of steps on a fresh database.

``database`` is a path (SQLite) or, for a case's PostgreSQL run, a ``postgresql://`` URL of a
fresh schema (conformance/runner/_backends.py); the Manager takes either.

Each step is one call on a Manager or a session; its result is ``{"ok": value}`` or
``{"error": code}``, so a case can expect a failure in the middle of a sequence and go on.
conformance/PORTING.md lists the steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from harness9_ref.memory.storage import (
    AmbiguousSessionId,
    Checkpoint,
    ContextState,
    FileChangeLog,
    FileChangeRecord,
    Manager,
    MemorySession,
    SessionError,
    SessionNotFound,
    StatefulSession,
    copy_sessions,
    is_session_id,
    new_session_id,
)
from harness9_ref.planning import todos_from_list
from harness9_ref.schema import SchemaError, messages_from_list, messages_to_list

__all__ = ["DEFAULT_NOW", "checkpoint_from_json", "context_state_from_json", "op_memory_session", "op_session"]

DEFAULT_NOW: Final = 1_700_000_000  # the clock's start when the case gives no "now"
DEFAULT_MANAGER: Final = "a"
JSON_EXACT_LIMIT: Final = 2**53  # R-CKP-2, R-CKP-10: the protocol's bound on the integers of a checkpoint or context state


class _Run:
    """The state of one session op: the clock, the managers and the session handles."""

    def __init__(self, inp: Mapping[str, Any]) -> None:
        self.database = inp["database"]
        self.second_database = inp.get("second_database")  # for the managers named in second_managers
        self.on_second = frozenset(inp.get("second_managers", ()))
        self.tool_results_dir = inp["tool_results_dir"]
        self.now: float = inp.get("now", DEFAULT_NOW)  # a fraction reaches the Manager as it is (R-DB-4)
        self.next_id: str | None = None
        self.managers: dict[str, Manager] = {}
        self.handles: dict[tuple[str, str], StatefulSession] = {}

    def _new_id(self) -> str:
        given, self.next_id = self.next_id, None
        return given if given is not None else new_session_id()

    def manager(self, name: str) -> Manager:
        if name not in self.managers:
            database = self.second_database if name in self.on_second else self.database
            self.managers[name] = Manager(
                database, self.tool_results_dir, clock=lambda: self.now, new_id=self._new_id
            )
        return self.managers[name]

    def close(self, name: str) -> None:
        manager = self.managers.pop(name, None)
        if manager is not None:
            manager.close()

    def session(self, name: str, step: Mapping[str, Any]) -> StatefulSession:
        key = (name, step["id"])
        if key not in self.handles:
            raise LookupError(f"step uses session {step['id']!r} before a new or open step on manager {name!r}")
        return self.handles[key]

    def remember(self, name: str, session: StatefulSession) -> StatefulSession:
        self.handles[(name, session.session_id)] = session
        return session


def _given(step: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The step's optional fields that are present: an absent one takes the library's own default,
    which the cases check too (PORTING's defaults are the API's)."""
    return {name: step[name] for name in names if name in step}


def _new(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    run.next_id = step.get("id")
    session = run.remember(name, run.manager(name).new_session(**_given(step, "draft", "workdir", "provider")))
    return {"id": session.session_id} if "id" in step else {"well_formed": is_session_id(session.session_id)}


def _fork(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    """R-MGR-10: a new session from the first ``at`` messages of session ``id``; ``as`` is the id
    it gets (as ``new``'s ``id``), and the step answers as ``new`` does."""
    run.next_id = step.get("as")
    try:
        session = run.remember(name, run.manager(name).fork_session(step["id"], **_given(step, "at")))
    finally:
        run.next_id = None  # a fork refused before it took its id leaves none for the next step
    return {"id": session.session_id} if "as" in step else {"well_formed": is_session_id(session.session_id)}


def _reopen(run: _Run, name: str, step: Mapping[str, Any]) -> None:
    run.close(name)
    run.manager(name)


def _set_time(run: _Run, name: str, step: Mapping[str, Any]) -> None:
    run.now = step["now"]


def _get_checkpoint(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    checkpoint = run.session(name, step).get_checkpoint()
    return None if checkpoint is None else checkpoint.to_dict()


def checkpoint_from_json(value: object) -> Checkpoint:
    """R-CKP-2: a member of the wrong type is a schema_error, from Checkpoint's own checks.

    In the protocol ``covered`` must also be below 2^53 in magnitude, the integers every JSON
    parser reads exactly, so that no port's answer depends on its number type.
    """
    checkpoint = Checkpoint.from_dict(value)
    if abs(checkpoint.covered) >= JSON_EXACT_LIMIT:
        raise SchemaError("checkpoint.covered", f"magnitude must be below 2^53, got {checkpoint.covered}")
    return checkpoint


def _save_checkpoint(run: _Run, name: str, step: Mapping[str, Any]) -> None:
    run.session(name, step).save_checkpoint(checkpoint_from_json(step["checkpoint"]))


def context_state_from_json(value: object) -> ContextState:
    """R-CKP-10: ContextState's own checks, then the protocol's bound of 2^53 on its integers, as
    for a checkpoint; the members after the first three are optional (R-CKP-9)."""
    state = ContextState.from_dict(value)
    for member, number in state.to_dict().items():
        if isinstance(number, int) and number >= JSON_EXACT_LIMIT:
            raise SchemaError(f"context_state.{member}", f"must be below 2^53, got {number}")
    return state


def _save_context_state(run: _Run, name: str, step: Mapping[str, Any]) -> None:
    run.session(name, step).save_context_state(context_state_from_json(step["state"]))


def _get_context_state(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    state = run.session(name, step).get_context_state()
    return None if state is None else state.to_dict()


_CHANGE_MEMBERS: Final = ("tool_call_id", "path", "existed", "before", "after")


def file_change_from_json(value: object) -> FileChangeRecord:
    """R-UNDO-1a: a change as the protocol gives it, its contents as UTF-8 text or null; any
    other shape is a schema_error, and the record's own checks follow (R-UNDO-2a)."""
    if not isinstance(value, dict) or set(value) != set(_CHANGE_MEMBERS):
        raise SchemaError("change", f"expected an object of exactly {', '.join(_CHANGE_MEMBERS)}")
    before, after = value["before"], value["after"]
    for member, content in (("before", before), ("after", after)):
        if content is not None and not isinstance(content, str):
            raise SchemaError(f"change.{member}", "expected a string or null")
    return FileChangeRecord(
        value["tool_call_id"],
        value["path"],
        value["existed"],
        None if before is None else before.encode("utf-8", "surrogatepass"),
        None if after is None else after.encode("utf-8", "surrogatepass"),
    )


def file_change_to_json(change: FileChangeRecord) -> dict[str, Any]:
    def text(content: bytes | None) -> str | None:
        return None if content is None else content.decode("utf-8", "replace")

    return {
        "tool_call_id": change.tool_call_id,
        "path": change.path,
        "existed": change.existed,
        "before": text(change.before),
        "after": text(change.after),
    }


def _file_log(run: _Run, name: str, step: Mapping[str, Any]) -> FileChangeLog:
    session = run.session(name, step)
    assert isinstance(session, FileChangeLog)
    return session


def _add_file_change(run: _Run, name: str, step: Mapping[str, Any]) -> None:
    _file_log(run, name, step).add_file_change(file_change_from_json(step["change"]))


def _file_changes(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    return [file_change_to_json(change) for change in _file_log(run, name, step).file_changes()]


def _file_changes_from(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    return [file_change_to_json(change) for change in _file_log(run, name, step).file_changes_from(step["at"])]


def _recent(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    summaries = run.manager(name).recent_sessions(**_given(step, "limit", "offset", "workdir"))
    return [summary.to_dict() for summary in summaries]


def _search(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    return [hit.to_dict() for hit in run.manager(name).search(step["query"], **_given(step, "limit"))]


def _prune(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    """R-PRUNE-1; ``bytes_reclaimed`` only when the step asks (``"bytes": true``): on SQLite it
    depends on the build's page layout, so the cases ask only where it does not."""
    result = run.manager(name).prune(step["older_than"], **_given(step, "dry_run"))
    answer = {"sessions": result.sessions, "messages": result.messages}
    return {**answer, "bytes_reclaimed": result.bytes_reclaimed} if step.get("bytes") else answer


def _copy(run: _Run, name: str, step: Mapping[str, Any]) -> Any:
    """R-PG-9: every session of this manager's database into the database of manager ``to``."""
    destination = run.manager(step["to"])
    return copy_sessions(run.manager(name), destination, **_given(step, "overwrite")).to_dict()


_Step = Callable[[_Run, str, Mapping[str, Any]], Any]
STEPS: Final[Mapping[str, _Step]] = {
    "connect": lambda run, name, step: run.manager(name) and None,
    "new": _new,
    "open": lambda run, name, step: {"id": run.remember(name, run.manager(name).open_session(step["id"])).session_id},
    "add": lambda run, name, step: run.session(name, step).add_messages(messages_from_list(step["messages"])),
    "get": lambda run, name, step: messages_to_list(run.session(name, step).get_messages(**_given(step, "limit"))),
    "get_from": lambda run, name, step: messages_to_list(run.session(name, step).get_messages_from(step["start"])),
    "pop": lambda run, name, step: (m := run.session(name, step).pop_message()) and m.to_dict(),
    "clear": lambda run, name, step: run.session(name, step).clear(),
    "save_todos": lambda run, name, step: run.session(name, step).save_todos(todos_from_list(step["items"])),
    "get_todos": lambda run, name, step: [t.to_dict() for t in run.session(name, step).get_todos()],
    "save_checkpoint": _save_checkpoint,
    "get_checkpoint": _get_checkpoint,
    "save_context_state": _save_context_state,
    "get_context_state": _get_context_state,
    "add_file_change": _add_file_change,
    "file_changes": _file_changes,
    "file_changes_from": _file_changes_from,
    "list": lambda run, name, step: [info.to_dict() for info in run.manager(name).list_sessions()],
    "delete": lambda run, name, step: run.manager(name).delete_session(step["id"]),
    "close": lambda run, name, step: run.close(name),
    "reopen": _reopen,
    "set_time": _set_time,
    "resolve": lambda run, name, step: run.manager(name).resolve_session_id(step["text"]),
    "recent": _recent,
    "search": _search,
    "prune": _prune,
    "copy": _copy,
    "fork": _fork,
}


def _error_answer(exc: SessionError | SchemaError | ValueError) -> dict[str, Any]:
    """``{"error": code}``; an ambiguous prefix adds its candidates and message, which R-FIND-1 fixes."""
    answer: dict[str, Any] = {"error": getattr(exc, "code", "invalid_argument")}
    if isinstance(exc, AmbiguousSessionId):
        answer.update(candidates=list(exc.candidates), message=str(exc))
    return answer


class _Memory:
    """What the ``memory_session`` op has for a Manager: MemorySessions kept by id (R-SES-9)."""

    def __init__(self) -> None:
        self.sessions: dict[str, MemorySession] = {}

    def new_session(self, session_id: str) -> MemorySession:
        self.sessions[session_id] = MemorySession(session_id)
        return self.sessions[session_id]

    def open_session(self, session_id: str) -> MemorySession:
        if session_id not in self.sessions:
            raise SessionNotFound(f"no session with id {session_id}")
        return self.sessions[session_id]


# The steps that act on a session alone, which a MemorySession has too (R-SES-9).
MEMORY_STEPS: Final = frozenset(
    {
        "add",
        "get",
        "get_from",
        "pop",
        "clear",
        "save_todos",
        "get_todos",
        "save_checkpoint",
        "get_checkpoint",
        "save_context_state",
        "get_context_state",
        "add_file_change",
        "file_changes",
        "file_changes_from",
    }
)


def op_memory_session(inp: Mapping[str, Any]) -> dict[str, Any]:
    """The session-level steps of the ``session`` op on MemorySessions: ``new`` (with ``id``,
    answering null) and ``open`` name them; nothing is stored anywhere else."""
    run = _Run({"database": None, "tool_results_dir": None, **inp})
    memory = _Memory()
    results: list[dict[str, Any]] = []
    for step in inp["steps"]:
        do = step.get("do", "")
        if do not in MEMORY_STEPS | {"new", "open"}:
            raise LookupError(f"step {do!r} has no MemorySession form")
        try:
            if do in ("new", "open"):
                named = memory.new_session(step["id"]) if do == "new" else memory.open_session(step["id"])
                run.remember(DEFAULT_MANAGER, named)
                results.append({"ok": None})
            else:
                results.append({"ok": STEPS[do](run, DEFAULT_MANAGER, step)})
        except (SessionError, SchemaError, ValueError) as exc:
            results.append(_error_answer(exc))
    return {"steps": results}


def op_session(inp: Mapping[str, Any]) -> dict[str, Any]:
    """Run every step in order; a step's domain error is its result and the run goes on."""
    run = _Run(inp)
    results: list[dict[str, Any]] = []
    try:
        for step in inp["steps"]:
            action = STEPS.get(step.get("do", ""))
            if action is None:
                raise LookupError(f"unknown step {step.get('do')!r}")
            name = step.get("manager", DEFAULT_MANAGER)
            try:
                results.append({"ok": action(run, name, step)})
            except (SessionError, SchemaError, ValueError) as exc:
                results.append(_error_answer(exc))
    finally:
        for name in list(run.managers):
            run.close(name)
    return {"steps": results}
