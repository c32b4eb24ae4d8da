"""A foreign SQLite file is refused byte for byte unchanged (SPEC R-DB-2, R-CLI-13)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness9_ref.memory.storage import NOT_OURS, ForeignDatabase, Manager, UnsupportedSchema

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"


def _copy(name: str, tmp_path: Path) -> Path:
    path = tmp_path / name
    shutil.copy2(FIXTURES / name, path)
    return path


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("foreign-tables.db", ForeignDatabase, f": {NOT_OURS}"),
        ("clashing-sessions.db", UnsupportedSchema, " has a sessions table of another format (columns name, started)"),
    ],
)
def test_refused_file_is_unchanged(tmp_path: Path, name: str, error: type[UnsupportedSchema], message: str) -> None:
    path = _copy(name, tmp_path)
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    with pytest.raises(error) as caught:
        Manager(path)
    assert str(caught.value) == f"{path}{message}"
    assert caught.value.code == "unsupported_schema"
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_empty_file_is_a_new_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with Manager(path) as manager:
        assert manager.list_sessions() == []
