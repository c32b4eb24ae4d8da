"""Per-case scratch folders for ops that touch files (the ``session`` op).

The runner, not the adapter, owns these files. For each such case it makes a fresh folder,
lays out what the case asks for (a fixture database, files, symbolic links), tells the adapter
where the database and the tool-results folder are, and afterwards reads what the adapter left
behind with Python's own sqlite3 and os. So a case can check the rows and files a port wrote,
not only what the port says about them.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ._backends import POSTGRES_KEY, fresh_schema
from ._cases import FIXTURES_DIR, Case

__all__ = ["WORKSPACE_OPS", "prepared"]

WORKSPACE_OPS: Final = frozenset({"session", "tool_execute"})
LAYOUT_KEYS: Final = ("fixture", "files", "symlinks", POSTGRES_KEY)  # case input the runner consumes
DB_PATH: Final = "db/sessions.db"  # its folder does not exist unless a fixture is given
SECOND_DB_PATH: Final = "db2/sessions.db"  # for a case's second_managers; its folder does not exist
TOOL_RESULTS_DIR: Final = "tool-results"
WORKDIR: Final = "work"  # the tool_execute op's working directory
_TRANSIENT: Final = ("-wal", "-shm", "-journal")  # SQLite side files come and go


def _inside(root: Path, relative: str) -> Path:
    path = root / relative
    if ".." in Path(relative).parts or Path(relative).is_absolute():
        raise ValueError(f"case path {relative!r} leaves the case folder")
    return path


def _lay_out(root: Path, spec: Mapping[str, Any]) -> None:
    (root / TOOL_RESULTS_DIR).mkdir()
    if "fixture" in spec:
        db = root / DB_PATH
        db.parent.mkdir(mode=0o700)
        shutil.copyfile(FIXTURES_DIR / spec["fixture"], db)
        os.chmod(db, 0o600)
    for relative, text in spec.get("files", {}).items():
        path = _inside(root, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _link(root, spec.get("symlinks", {}))


def _link(root: Path, links: Mapping[str, str]) -> None:
    """Each ``path: target`` of a case's ``symlinks`` as a symbolic link in ``root`` (a target
    that does not exist makes a dangling link)."""
    for relative, target in links.items():
        path = _inside(root, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(_inside(root, target))


def _query(db: Path, sql: str) -> Any:
    if not db.exists():
        return {"sql_error": "no database file"}
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return {"sql_error": str(exc)}
    try:
        return [[v.hex() if isinstance(v, bytes) else v for v in row] for row in conn.execute(sql)]
    except sqlite3.Error as exc:
        return {"sql_error": str(exc)}
    finally:
        conn.close()


def _listing(root: Path) -> list[str]:
    entries = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.name.endswith(_TRANSIENT):
            continue
        if path.is_symlink():
            entries.append(f"{relative}@")
        elif path.is_dir():
            entries.append(f"{relative}/")
        else:
            entries.append(relative)
    return entries


def _observe(root: Path, expect: Mapping[str, Any], query: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """What the case expects to see: rows (of the SQLite file, or through ``query``), files, modes."""
    seen: dict[str, Any] = {}
    if "database" in expect:
        run = query or (lambda sql: _query(root / DB_PATH, sql))
        seen["database"] = {sql: run(sql) for sql in expect["database"]}
    if "files" in expect:
        seen["files"] = _listing(root)
    if "modes" in expect:
        seen["modes"] = {
            rel: f"0{os.stat(_inside(root, rel)).st_mode & 0o777:03o}" if _inside(root, rel).exists() else None
            for rel in expect["modes"]
        }
    return seen


@contextmanager
def prepared(case: Case) -> Iterator[tuple[dict[str, Any], Callable[[], dict[str, Any]]]]:
    """Yield the input to send and a function that observes the folder after the run.

    For ops outside WORKSPACE_OPS the input is the case's own and nothing is observed (the
    provider ops' bytes and replay servers are traffic's: conformance/_suite.py picks them).
    Otherwise the adapter gets ``database`` and ``tool_results_dir`` (absolute paths in a fresh
    folder, deleted afterwards) in place of the layout keys; for a PostgreSQL run ``database``
    is the URL of a fresh schema (conformance/runner/_backends.py).
    """
    if case.op not in WORKSPACE_OPS:
        yield case.input, dict
        return
    with tempfile.TemporaryDirectory(prefix="harness9-case-") as tmp:
        root = Path(tmp)
        _lay_out(root, case.input)
        send = {k: v for k, v in case.input.items() if k not in LAYOUT_KEYS}
        if "second_managers" in case.input:  # always an SQLite file: a PostgreSQL run copies across backends
            send["second_database"] = str(root / SECOND_DB_PATH)
        if case.op == "tool_execute":
            (root / WORKDIR).mkdir(exist_ok=True)
            send["workdir"] = str(root / WORKDIR)
        elif POSTGRES_KEY in case.input:  # a session case's PostgreSQL run (conformance/runner/_backends.py)
            with fresh_schema(case.input[POSTGRES_KEY]) as (url, query):
                send["database"] = url
                send["tool_results_dir"] = str(root / TOOL_RESULTS_DIR)
                yield send, lambda: _observe(root, case.expect, query)
            return
        else:
            send["database"] = str(root / DB_PATH)
            send["tool_results_dir"] = str(root / TOOL_RESULTS_DIR)
        yield send, lambda: _observe(root, case.expect)
