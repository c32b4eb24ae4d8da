"""Context-state storage (SPEC R-CKP-9 … R-CKP-13, R-DB-2, R-DB-12, R-PG-9).

The code under test: harness9_ref/memory/storage/_context_state.py, _session.py (MemorySession,
check_context_state), _sql_session.py, _rows.py and _sql_store.py (copy).

The tests taking ``new_session`` run once against ``SQLiteSession`` on a real file and once
against ``MemorySession`` (R-SES-1, R-SES-9). The rest are SQLite only: they look at rows, at
``updated_at`` or at the fixture files of ``fixtures/sessions/`` (always copied first).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from harness9_ref.memory.storage import (
    Checkpoint,
    ContextState,
    CorruptRow,
    Manager,
    SessionInfo,
    StatefulSession,
    UnsupportedSchema,
    copy_sessions,
)
from harness9_ref.planning import TodoItem
from harness9_ref.schema import SchemaError
from tests.memory.helpers import START, Clock, numbered, raw
from tests.memory.storage.test_checkpoints import A, B, C, assert_spec_schema, fixture_copy, table_rows, user_version

D = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
E = "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee"


def state_rows(path: Path) -> list[tuple[object, ...]]:
    with raw(path) as conn:
        return conn.execute(
            "SELECT session_id, input_tokens, estimate, cleared_below, saved_at FROM context_state ORDER BY session_id"
        ).fetchall()


# --- The value (R-CKP-9, R-CKP-10) ---


def test_a_context_state_round_trips_through_its_dict() -> None:
    state = ContextState(183_204, 175_000, 12)
    assert state.to_dict() == {"input_tokens": 183_204, "estimate": 175_000, "cleared_below": 12}
    assert ContextState.from_dict(state.to_dict()) == state


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"input_tokens": True, "estimate": 1, "cleared_below": 0}, "context_state.input_tokens"),
        ({"input_tokens": 1, "estimate": 1.0, "cleared_below": 0}, "context_state.estimate"),
        ({"input_tokens": 1, "estimate": 1, "cleared_below": -1}, "context_state.cleared_below"),
        ({"input_tokens": 1, "estimate": 1}, "context_state.cleared_below"),
        ({"input_tokens": 1, "estimate": 1, "cleared_below": 0, "more": 1}, "context_state.more"),
        ([1, 1, 0], "context_state"),
    ],
)
def test_from_dict_refuses_what_is_not_a_context_state(data: object, path: str) -> None:
    with pytest.raises(SchemaError) as excinfo:
        ContextState.from_dict(data)
    assert excinfo.value.path == path


def test_the_constructor_refuses_booleans_fractions_and_negatives() -> None:
    for bad in (False, 2.0, "3", None, -5):
        with pytest.raises(SchemaError):
            ContextState(1, bad, 0)  # type: ignore[arg-type]


# --- Saving and reading (R-CKP-9) ---


def test_a_new_session_has_no_context_state(new_session: Callable[[], StatefulSession]) -> None:
    assert new_session().get_context_state() is None


def test_a_save_replaces_the_context_state_and_sessions_keep_their_own(new_session: Callable[[], StatefulSession]) -> None:
    one, two = new_session(), new_session()
    one.save_context_state(ContextState(900, 800, 1, 2, 3, 4096, "server", "org/m"))
    two.save_context_state(ContextState(40, 30, 0))
    one.save_context_state(ContextState(0, 0, 0))  # the whole state, breaker and window too
    assert one.get_context_state() == ContextState(0, 0, 0)
    assert two.get_context_state() == ContextState(40, 30, 0)


def test_the_largest_stored_integer_round_trips(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.save_context_state(ContextState(2**63 - 1, 2**63 - 1, 2**63 - 1))
    assert session.get_context_state() == ContextState(2**63 - 1, 2**63 - 1, 2**63 - 1)


def test_a_value_past_64_bits_or_not_a_context_state_is_refused_and_nothing_saved(
    new_session: Callable[[], StatefulSession],
) -> None:
    session = new_session()
    session.save_context_state(ContextState(1, 2, 3))
    with pytest.raises(SchemaError, match="64-bit"):
        session.save_context_state(ContextState(2**63, 0, 0))
    with pytest.raises(SchemaError, match="expected a ContextState"):
        session.save_context_state({"input_tokens": 1, "estimate": 1, "cleared_below": 0})  # type: ignore[arg-type]
    assert session.get_context_state() == ContextState(1, 2, 3)


def test_a_context_state_altered_behind_its_back_is_checked_again(new_session: Callable[[], StatefulSession]) -> None:
    """A frozen dataclass can still be changed with object.__setattr__; storage checks what it stores."""
    session = new_session()
    altered = ContextState(1, 1, 1)
    object.__setattr__(altered, "cleared_below", -1)
    with pytest.raises(SchemaError, match="cleared_below"):
        session.save_context_state(altered)
    assert session.get_context_state() is None


def test_saving_stores_one_row_with_the_save_time_and_leaves_updated_at(db_path: Path, clock: Clock) -> None:
    with Manager(db_path, clock=clock) as manager:
        session = manager.new_session()
        session.add_messages(numbered(2))
        clock.tick(60)
        session.save_context_state(ContextState(120, 100, 2))
        clock.tick(60)
        session.save_context_state(ContextState(130, 110, 2))
        assert manager.list_sessions() == [SessionInfo(session.session_id, START, START, 2)]
    assert state_rows(db_path) == [(session.session_id, 130, 110, 2, START + 120)]


def test_a_draft_save_creates_the_session_row(manager: Manager, db_path: Path) -> None:
    draft = manager.new_session(draft=True)
    assert draft.get_context_state() is None and manager.list_sessions() == []
    draft.save_context_state(ContextState(10, 8, 0))
    assert [info.id for info in manager.list_sessions()] == [draft.session_id]
    assert manager.open_session(draft.session_id).get_context_state() == ContextState(10, 8, 0)


def test_a_context_state_persists_and_other_handles_see_it(db_path: Path) -> None:
    with Manager(db_path) as first, Manager(db_path) as second:
        session = first.new_session()
        session.save_context_state(ContextState(4100, 3900, 3))
        assert second.open_session(session.session_id).get_context_state() == ContextState(4100, 3900, 3)
    with Manager(db_path) as again:
        assert again.open_session(session.session_id).get_context_state() == ContextState(4100, 3900, 3)


# --- What removes it, and what does not (R-CKP-11) ---


def test_clear_removes_the_context_state(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    session.save_context_state(ContextState(500, 400, 3))
    session.clear()
    assert session.get_context_state() is None


def test_pop_removes_it_only_when_cleared_below_is_past_the_messages_left(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    session.save_context_state(ContextState(300, 250, 2))
    session.pop_message()
    assert session.get_context_state() == ContextState(300, 250, 2)
    session.pop_message()
    assert session.get_context_state() is None


def test_pop_of_nothing_keeps_even_a_state_past_the_end(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.save_context_state(ContextState(10, 9, 5))
    assert session.pop_message() is None
    assert session.get_context_state() == ContextState(10, 9, 5)


def test_pop_counts_only_the_sessions_own_messages(new_session: Callable[[], StatefulSession]) -> None:
    mine, other = new_session(), new_session()
    other.add_messages(numbered(4))
    mine.add_messages(numbered(2))
    mine.save_context_state(ContextState(50, 40, 2))
    mine.pop_message()
    assert mine.get_context_state() is None


def test_other_writes_never_touch_it_nor_it_the_checkpoint(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.add_messages(numbered(2))
    session.save_context_state(ContextState(70, 60, 1))
    session.add_messages(numbered(1, 2))
    session.save_todos([TodoItem("1", "plan", "completed")])
    checkpoint = Checkpoint(1, "0" * 64, "s")
    session.save_checkpoint(checkpoint)
    assert session.get_context_state() == ContextState(70, 60, 1)
    session.save_context_state(ContextState(80, 70, 2))
    assert session.get_checkpoint() == checkpoint


def test_delete_removes_the_row(manager: Manager, db_path: Path) -> None:
    gone, kept = manager.new_session(), manager.new_session()
    gone.save_context_state(ContextState(1, 1, 0))
    kept.save_context_state(ContextState(2, 2, 0))
    manager.delete_session(gone.session_id)
    assert [row[0] for row in state_rows(db_path)] == [kept.session_id]


def test_a_save_racing_clear_leaves_either_order_whole(db_path: Path) -> None:
    """Every write is one transaction: after both, the state is the save's or none, never half of one."""
    with Manager(db_path) as manager:
        session = manager.new_session()
        session.add_messages(numbered(3))
        for _ in range(20):
            threads = [
                threading.Thread(target=session.save_context_state, args=(ContextState(5, 4, 3),)),
                threading.Thread(target=session.clear),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert session.get_context_state() in (None, ContextState(5, 4, 3))
            session.add_messages(numbered(3))


# --- Rows others wrote (R-CKP-13) ---


@pytest.mark.parametrize(
    ("session_id", "why"),
    [
        (A, "input_tokens is text"),
        (B, "estimate is a blob"),
        (C, "cleared_below must be 0 or more, got -1"),
        (D, "cleared_below is a real"),
    ],
)
def test_a_row_that_is_not_a_context_state_is_corrupt_row_naming_the_session(
    tmp_path: Path, session_id: str, why: str
) -> None:
    with Manager(fixture_copy("corrupt-context-state.db", tmp_path)) as manager:
        with pytest.raises(CorruptRow) as excinfo:
            manager.open_session(session_id).get_context_state()
        assert str(excinfo.value) == f"the context state of session {session_id} cannot be read: {why}"
        assert manager.open_session(E).get_context_state() == ContextState(1200, 1000, 2)


def test_a_corrupt_row_is_replaced_by_a_save_removed_by_clear_and_by_a_pop_when_not_an_integer(tmp_path: Path) -> None:
    with Manager(fixture_copy("corrupt-context-state.db", tmp_path)) as manager:
        manager.open_session(A).save_context_state(ContextState(5, 4, 1))
        assert manager.open_session(A).get_context_state() == ContextState(5, 4, 1)
        manager.open_session(B).clear()
        assert manager.open_session(B).get_context_state() is None
        manager.open_session(D).pop_message()  # 0.5 is not more than the one message left, but not an integer
        assert manager.open_session(D).get_context_state() is None


# --- Copy (R-PG-9, R-CKP-12) ---


def test_copy_carries_the_context_state_and_its_save_time(tmp_path: Path) -> None:
    with Manager(tmp_path / "a.db", clock=lambda: START + 40) as source, Manager(tmp_path / "b.db") as target:
        session = source.new_session()
        session.save_context_state(ContextState(2048, 2000, 0))
        copy_sessions(source, target)
    assert state_rows(tmp_path / "b.db") == state_rows(tmp_path / "a.db") == [(session.session_id, 2048, 2000, 0, START + 40)]


@pytest.mark.parametrize("session_id", [A, B, D])
def test_copy_refuses_a_row_it_cannot_copy_losslessly(tmp_path: Path, session_id: str) -> None:
    with Manager(fixture_copy("corrupt-context-state.db", tmp_path)) as source, Manager(tmp_path / "b.db") as target:
        for other in {A, B, C, D, E} - {session_id}:
            source.delete_session(other)
        with pytest.raises(CorruptRow, match=f"the context state of session {session_id} cannot be copied"):
            copy_sessions(source, target)
        assert target.list_sessions() == []


# --- The breaker and the learned window (R-CKP-9, R-CKP-10, R-CKP-12, R-CKP-13, R-DB-2) ---

FULL = ContextState(1200, 1000, 2, 3, 9, 4096, "server", "SmolLM2-135M-Instruct 𝄞")
FULL_DICT = {
    "input_tokens": 1200,
    "estimate": 1000,
    "cleared_below": 2,
    "summary_failures": 3,
    "summary_paused": 9,
    "window": 4096,
    "window_source": "server",
    "window_model": "SmolLM2-135M-Instruct 𝄞",
}


def full_rows(path: Path) -> list[tuple[object, ...]]:
    with raw(path) as conn:
        return conn.execute("SELECT * FROM context_state ORDER BY session_id").fetchall()


def test_the_optional_members_default_and_leave_the_dict_only_when_set() -> None:
    """R-CKP-9: a state of three members is one with nothing of the breaker and no window; the
    protocol's object shows a member after the first three only when it differs from its default."""
    assert FULL.to_dict() == FULL_DICT
    assert ContextState.from_dict(FULL_DICT) == FULL
    assert ContextState(5, 4, 1) == ContextState.from_dict({"input_tokens": 5, "estimate": 4, "cleared_below": 1})
    assert ContextState(5, 4, 1) == ContextState(5, 4, 1, 0, 0, 0, "", "")
    assert ContextState(5, 4, 1, summary_paused=2).to_dict() == {
        "input_tokens": 5, "estimate": 4, "cleared_below": 1, "summary_paused": 2,
    }
    assert ContextState(0, 0, 0, window=1, window_source="truncation").to_dict() == {
        "input_tokens": 0, "estimate": 0, "cleared_below": 0, "window": 1, "window_source": "truncation",
    }


@pytest.mark.parametrize("source", ["server", "error", "truncation"])
def test_each_window_source_is_allowed_with_any_model_name_up_to_200_code_points(source: str) -> None:
    for model in ("", "m" * 200, "𝄞" * 200, "org/模型:q4_K_M"):  # 200 astral code points are 400 UTF-16 units
        assert ContextState.from_dict({**FULL_DICT, "window_source": source, "window_model": model}).window_model == model


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"window_source": "guess"}, "context_state.window_source"),
        ({"window_source": "Server"}, "context_state.window_source"),
        ({"window_source": " server"}, "context_state.window_source"),
        ({"window_source": ""}, "context_state.window_source"),
        ({"window_source": None}, "context_state.window_source"),
        ({"window": 0}, "context_state.window_source"),
        ({"window": 0, "window_source": ""}, "context_state.window_model"),
        ({"window_model": "m" * 201}, "context_state.window_model"),
        ({"window_model": "𝄞" * 201}, "context_state.window_model"),
        ({"window_model": "smol\nlm2"}, "context_state.window_model"),
        ({"window_model": "nul\x00"}, "context_state.window_model"),
        ({"window_model": "del\x7f"}, "context_state.window_model"),
        ({"window_model": "next line\x85"}, "context_state.window_model"),
        ({"window_model": "lone \ud800"}, "context_state.window_model"),
        ({"window_model": 7}, "context_state.window_model"),
        ({"summary_failures": -1}, "context_state.summary_failures"),
        ({"summary_paused": True}, "context_state.summary_paused"),
        ({"window": 4096.0}, "context_state.window"),
        ({"window": "4096"}, "context_state.window"),
        ({"window_size": 4096}, "context_state.window_size"),
    ],
)
def test_a_state_that_fails_r_ckp_10_is_refused_naming_the_member(change: dict[str, object], path: str) -> None:
    with pytest.raises(SchemaError) as excinfo:
        ContextState.from_dict({**FULL_DICT, **change})
    assert excinfo.value.path == path
    if "window_size" not in change:  # the constructor checks the same, whatever made the value
        values = {**FULL_DICT, **change}
        with pytest.raises(SchemaError):
            ContextState(**values)  # type: ignore[arg-type]


def test_every_member_round_trips_and_a_shorter_save_resets_the_others(
    new_session: Callable[[], StatefulSession],
) -> None:
    session = new_session()
    session.save_context_state(FULL)
    assert session.get_context_state() == FULL
    session.save_context_state(ContextState(7, 6, 0))
    assert session.get_context_state() == ContextState(7, 6, 0)
    top = ContextState(1, 1, 0, 2**63 - 1, 2**63 - 1, 2**63 - 1, "error", "x")
    session.save_context_state(top)
    assert session.get_context_state() == top


@pytest.mark.parametrize("member", ["summary_failures", "summary_paused", "window"])
def test_a_breaker_or_window_past_64_bits_is_refused_and_nothing_saved(
    new_session: Callable[[], StatefulSession], member: str
) -> None:
    session = new_session()
    session.save_context_state(FULL)
    with pytest.raises(SchemaError, match=f"{member}: is outside the 64-bit range"):
        session.save_context_state(ContextState.from_dict({**FULL_DICT, member: 2**63}))
    assert session.get_context_state() == FULL


def test_an_altered_window_source_is_checked_again_and_nothing_saved(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.save_context_state(FULL)
    altered = ContextState(1, 1, 1)
    object.__setattr__(altered, "window_model", "set behind its back")
    with pytest.raises(SchemaError, match="window_model"):
        session.save_context_state(altered)
    assert session.get_context_state() == FULL


def test_the_row_holds_each_member_in_its_column(db_path: Path, clock: Clock) -> None:
    with Manager(db_path, clock=clock) as manager:
        session = manager.new_session()
        session.save_context_state(FULL)
        plain = manager.new_session()
        plain.save_context_state(ContextState(7, 6, 0))
    assert sorted(full_rows(db_path)) == sorted(
        [
            (session.session_id, 1200, 1000, 2, START, 3, 9, 4096, "server", "SmolLM2-135M-Instruct 𝄞"),
            (plain.session_id, 7, 6, 0, START, 0, 0, 0, "", ""),
        ]
    )


@pytest.mark.parametrize(
    ("session_id", "why"),
    [
        ("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "summary_failures is text"),
        ("bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", "summary_paused must be 0 or more, got -1"),
        ("cccccccc-cccc-4ccc-8ccc-cccccccccccc", "window_tokens is a real"),
        ("dddddddd-dddd-4ddd-8ddd-dddddddddddd", "window_source must be one of server, error, truncation, got 'guess'"),
        ("eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee", "window_source must be one of server, error, truncation, got ''"),
        ("ffffffff-ffff-4fff-8fff-ffffffffffff", "window_source must be empty when no window is learned, got 'server'"),
        ("11111111-1111-4111-8111-111111111111", "window_model is a blob"),
        ("22222222-2222-4222-8222-222222222222", "window_model must be 200 characters at most, got 201"),
        ("33333333-3333-4333-8333-333333333333", "window_model holds the control character U+000A"),
        ("44444444-4444-4444-8444-444444444444", "window_model lone surrogate U+DCE9 at index 4 is not Unicode"),
        ("55555555-5555-4555-8555-555555555555", "window_source is a blob"),
    ],
)
def test_a_breaker_or_window_column_that_fails_r_ckp_10_is_corrupt_row(tmp_path: Path, session_id: str, why: str) -> None:
    with Manager(fixture_copy("corrupt-window-state.db", tmp_path)) as manager:
        with pytest.raises(CorruptRow) as excinfo:
            manager.open_session(session_id).get_context_state()
        assert str(excinfo.value) == f"the context state of session {session_id} cannot be read: {why}"
        readable = manager.open_session("66666666-6666-4666-8666-666666666666").get_context_state()
        assert readable == ContextState(1200, 1000, 2, 1, 0, 4096, "server", "smollm2")


@pytest.mark.parametrize(
    ("session_id", "copied"),
    [
        ("dddddddd-dddd-4ddd-8ddd-dddddddddddd", True),  # text outside the set is text: copied as it is
        ("33333333-3333-4333-8333-333333333333", True),
        ("aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", False),  # text in an integer column
        ("11111111-1111-4111-8111-111111111111", False),  # a blob
        ("44444444-4444-4444-8444-444444444444", False),  # not UTF-8
    ],
)
def test_copy_moves_the_window_columns_as_stored_or_refuses_what_it_cannot(
    tmp_path: Path, session_id: str, copied: bool
) -> None:
    """R-PG-9: values are copied without being decoded; only what cannot be copied losslessly is CorruptRow."""
    source_path = fixture_copy("corrupt-window-state.db", tmp_path)
    with Manager(source_path) as source, Manager(tmp_path / "b.db") as target:
        for info in source.list_sessions():
            if info.id != session_id:
                source.delete_session(info.id)
        if not copied:
            with pytest.raises(CorruptRow, match=f"the context state of session {session_id} cannot be copied"):
                copy_sessions(source, target)
            assert target.list_sessions() == []
            return
        copy_sessions(source, target)
    assert full_rows(tmp_path / "b.db") == full_rows(source_path)


def test_copy_carries_every_member(tmp_path: Path) -> None:
    with Manager(tmp_path / "a.db", clock=lambda: START + 40) as source, Manager(tmp_path / "b.db") as target:
        session = source.new_session()
        session.save_context_state(FULL)
        copy_sessions(source, target)
        assert target.open_session(session.session_id).get_context_state() == FULL
    assert full_rows(tmp_path / "b.db") == full_rows(tmp_path / "a.db")


V3_STATES = [(A, 1200, 1000, 2, START + 130), (B, 0, 0, 0, START + 140)]


def test_a_version_3_file_gains_the_columns_with_their_defaults_keeping_every_row(tmp_path: Path) -> None:
    """R-DB-2, R-CKP-12: every state reads as one with nothing of the breaker and no window."""
    path = fixture_copy("context-state-v3.db", tmp_path)
    assert user_version(path) == 3
    before = table_rows(path)
    assert before["context_state"] == V3_STATES
    with Manager(path, clock=lambda: START + 900) as manager:
        assert manager.open_session(A).get_context_state() == ContextState(1200, 1000, 2)
        assert manager.open_session(B).get_context_state() == ContextState(0, 0, 0)
        assert manager.open_session(C).get_context_state() is None
    assert user_version(path) == 5
    assert_spec_schema(path)
    after = table_rows(path)
    assert after.pop("context_state") == [(*row, 0, 0, 0, "", "") for row in V3_STATES]
    assert after.pop("file_changes") == []  # R-UNDO-2c: gained, empty
    before.pop("context_state")
    assert after.pop("sessions") == [(*row, "", "") for row in before.pop("sessions")]  # folder unknown (R-FIND-4)
    assert after == before
    with Manager(path, clock=lambda: START + 900) as manager:  # version 5 now: used as it is
        manager.open_session(C).save_context_state(FULL)
        assert manager.open_session(C).get_context_state() == FULL


def test_a_version_3_file_is_read_only_through_an_upgraded_copy(tmp_path: Path) -> None:
    """R-DB-12: the states read with their defaults, the file stays version 3 byte for byte."""
    path = fixture_copy("context-state-v3.db", tmp_path)
    before = path.read_bytes()
    with Manager(path, read_only=True) as manager:
        assert manager.open_session(A).get_context_state() == ContextState(1200, 1000, 2)
    assert path.read_bytes() == before and user_version(path) == 3


@pytest.mark.parametrize("version", [0, 1, 2])
def test_an_older_file_holding_a_version_3_context_state_table_completes_it(db_path: Path, version: int) -> None:
    """R-DB-2: version 3's form of the table counts as R-DB-1's in any file being upgraded."""
    with Manager(db_path) as manager:
        session = manager.new_session()
        session.save_context_state(FULL)
    with raw(db_path) as conn:
        for column in ("summary_failures", "summary_paused", "window_tokens", "window_source", "window_model"):
            conn.execute(f"ALTER TABLE context_state DROP COLUMN {column}")
        conn.execute(f"PRAGMA user_version = {version}")
    with Manager(db_path) as manager:
        assert manager.open_session(session.session_id).get_context_state() == ContextState(1200, 1000, 2)
    assert user_version(db_path) == 5
    assert_spec_schema(db_path)


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(("DROP COLUMN window_model",), id="four of the five columns"),
        pytest.param(("DROP COLUMN window_model", "DROP COLUMN window_source", "ADD COLUMN model TEXT"), id="another column"),
        pytest.param(("RENAME COLUMN window_tokens TO window",), id="window instead of window_tokens"),
    ],
)
def test_a_version_3_file_whose_context_state_is_of_neither_form_is_refused_untouched(
    db_path: Path, setup: tuple[str, ...]
) -> None:
    with Manager(db_path) as manager:
        manager.new_session().save_context_state(ContextState(1, 1, 0))
    with raw(db_path) as conn:
        for change in setup:
            conn.execute(f"ALTER TABLE context_state {change}")
        conn.execute("PRAGMA user_version = 3")
    before = db_path.read_bytes()
    with pytest.raises(UnsupportedSchema, match="context_state table of another format"):
        Manager(db_path)
    assert db_path.read_bytes() == before
