"""Copying every session of one Manager into another (SPEC R-PG-9), into an SQLite file and into a PostgreSQL
schema alike: lossless both ways, and whole or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager, SessionDatabaseError, copy_sessions
from harness9_ref.schema import Message
from tests.memory.helpers import ODD, Database, fill, snapshot


def test_copy_round_trips_through_either_store_and_back_losslessly(database: Database, tmp_path: Path) -> None:
    with Manager(tmp_path / "a.db", clock=lambda: 1_700_000_000) as first:
        fill(first)
        first.new_session()  # an empty session is copied too
        original = snapshot(first)
        with Manager(database.location) as middle, Manager(tmp_path / "b.db") as last:
            assert copy_sessions(first, middle).to_dict() == {"sessions": 2, "messages": len(ODD)}
            copy_sessions(middle, last)
            assert snapshot(middle) == original and snapshot(last) == original


def test_copy_refuses_an_existing_id_and_copies_nothing_unless_told(database: Database, tmp_path: Path) -> None:
    with Manager(tmp_path / "a.db") as source, Manager(database.location) as target:
        kept = fill(source)
        fill(source)
        copy_sessions(source, target)
        target.open_session(kept).add_messages([Message("user", "only in the target")])
        source.new_session()
        before = snapshot(target)
        with pytest.raises(SessionDatabaseError, match=r"already holds 2 of these sessions.*nothing was copied"):
            copy_sessions(source, target)
        assert snapshot(target) == before
        copy_sessions(source, target, overwrite=True)
        assert snapshot(target) == snapshot(source)


def test_a_refused_copy_writes_no_session_not_even_those_before_the_conflict(database: Database, tmp_path: Path) -> None:
    with Manager(tmp_path / "a.db") as source, Manager(database.location) as target:
        first, last = sorted(source.new_session().session_id for _ in range(2))  # copied in id order
        copy_sessions(source, target)
        target.delete_session(first)
        with pytest.raises(SessionDatabaseError, match="already holds 1 of these sessions"):
            copy_sessions(source, target)
        assert [info.id for info in target.list_sessions()] == [last]
