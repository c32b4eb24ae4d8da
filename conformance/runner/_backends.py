"""Session cases on each database an adapter declares: SQLite always, PostgreSQL on request (SPEC R-PG-2).

Why: the session semantics are the same on every backend (R-PG-2), so the same cases prove
them. An adapter lists its backends in its start answer (``"backends": ["sqlite",
"postgresql"]``; absent means SQLite only). When the runner is given a PostgreSQL server (the
``HARNESS9_TEST_POSTGRES_URL`` environment variable: a URL the runner may create schemas
with), each session case that is not marked SQLite-only (the case member ``"backends":
["sqlite"]``, for fixture files, file modes and SQLite's own tables) runs a second time as
``<id>@postgresql``: the adapter's ``database`` is then a ``postgresql://`` URL whose
``search_path`` names a fresh, empty schema, which the runner drops afterwards. The runner
checks the rows there with the case's own queries (BYTEA columns read as the UTF-8 text they
hold) and leaves the ``db/`` folder out of file listings, since the database is not a file.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ._cases import Case, read_json

__all__ = [
    "BACKENDS",
    "POSTGRES_ENV",
    "POSTGRES_KEY",
    "case_backends",
    "check_server",
    "fresh_schema",
    "on_a_backend",
    "per_backend",
    "read_backends",
    "sqlite_only_problem",
]

BACKENDS: Final = ("sqlite", "postgresql")
POSTGRES: Final = "postgresql"
POSTGRES_ENV: Final = "HARNESS9_TEST_POSTGRES_URL"
POSTGRES_KEY: Final = "runner_postgres"  # input the runner consumes: the server for this run
DB_FOLDER: Final = "db/"
_LOCK_TIMEOUT: Final = "SET lock_timeout = 5000"
# SQL only SQLite answers: its catalogue tables, its PRAGMAs, its storage classes.
_SQLITE_SQL: Final = re.compile(r"\bsqlite_[a-z]+\b|\bpragma\b|\btypeof\s*\(", re.IGNORECASE)


def read_backends(answer: Mapping[str, Any]) -> tuple[str, ...]:
    """The start answer's ``backends``; SQLite alone when it is absent.

    Raises:
        ValueError: not a list of known backends.
    """
    value = answer.get("backends", ["sqlite"])
    if not isinstance(value, list) or not value or any(b not in BACKENDS for b in value):
        raise ValueError(f"backends must be a non-empty list of {', '.join(BACKENDS)}, got {value!r}")
    return tuple(value)


@functools.cache
def _backends_at(path: str) -> tuple[str, ...]:
    try:
        listed = read_json(Path(path)).get("backends", list(BACKENDS))
    except (OSError, ValueError, AttributeError):
        return BACKENDS
    return tuple(listed) if isinstance(listed, list) else BACKENDS


def case_backends(case: Case) -> tuple[str, ...]:
    """The case file's ``backends`` member: where the case applies (all of BACKENDS when absent)."""
    return _backends_at(str(case.path))


def _strings(value: Any) -> Iterator[str]:
    """Every string in a case's input or expect, object keys included (the SQL of ``expect.database``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def sqlite_only_problem(case: Case) -> str | None:
    """Why a session case must be marked ``"backends": ["sqlite"]`` and is not, or None (R-PG-2).

    A case that opens a fixture database file, checks file modes or queries SQLite's own SQL
    cannot pass on PostgreSQL; unmarked, it would fail every port's ``@postgresql`` run.
    """
    if case.op != "session" or case_backends(case) == ("sqlite",):
        return None
    if "fixture" in case.input:
        reason = "it opens a fixture database file"
    elif "modes" in case.expect:
        reason = "it checks file modes (expect.modes)"
    elif any(_SQLITE_SQL.search(text) for text in _strings([case.input, case.expect])):
        reason = "it runs SQLite's own SQL (sqlite_master, PRAGMA or typeof)"
    else:
        return None
    return f'{reason}, so it must be marked "backends": ["sqlite"]'


def _on_postgres(case: Case, url: str) -> Case:
    expect = dict(case.expect)
    if isinstance(expect.get("files"), list):
        expect["files"] = [entry for entry in expect["files"] if not str(entry).startswith(DB_FOLDER)]
    return replace(case, id=f"{case.id}@{POSTGRES}", input={**case.input, POSTGRES_KEY: url}, expect=expect)


def per_backend(cases: Iterable[Case], declared: tuple[str, ...], postgres_url: str | None) -> Iterator[Case]:
    """Each case, followed by its PostgreSQL run when the adapter and the runner both have one.

    A case marked PostgreSQL-only runs only there; without a server it is reported unsupported.

    ``postgres_url`` None means the ``HARNESS9_TEST_POSTGRES_URL`` environment variable.
    """
    if postgres_url is None:
        postgres_url = os.environ.get(POSTGRES_ENV)
    for case in cases:
        backends = case_backends(case) if case.op == "session" else BACKENDS
        on_postgres = bool(postgres_url) and POSTGRES in declared and case.op == "session" and POSTGRES in backends
        if "sqlite" in backends or not on_postgres:
            yield case  # a PostgreSQL-only case without a server: run_case reports it unsupported
        if on_postgres and postgres_url:
            yield _on_postgres(case, postgres_url)


def on_a_backend(case: Case, declared: tuple[str, ...]) -> Case | str:
    """The case to run, or why it cannot run here.

    A PostgreSQL-only session case run on its own (as the mutant catalogue runs cases) needs a
    server: the environment's, when the adapter declares PostgreSQL; otherwise it is unsupported.
    """
    if case.op != "session" or POSTGRES_KEY in case.input or "sqlite" in case_backends(case):
        return case
    url = os.environ.get(POSTGRES_ENV)
    if url and POSTGRES in declared:
        return replace(_on_postgres(case, url), id=case.id)
    return f"a PostgreSQL-only case, and no PostgreSQL server ({POSTGRES_ENV}) or the adapter does not declare one"


def _with_search_path(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), ("options", f"-csearch_path={schema}")]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _plain(value: object) -> object:
    if isinstance(value, (bytes, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.hex()  # as the SQLite observer shows a blob
    return value


def check_server(url: str) -> None:
    """Connect once to the server the session cases will also run on (R-PG-2).

    The runner is standard library only; only this option needs a driver, so a missing psycopg
    or a server that cannot be reached is one line before any case runs, never a traceback.

    Raises:
        ValueError: psycopg is not installed, or the server refuses the connection.
    """
    try:
        import psycopg
    except ImportError:
        raise ValueError("running the session cases on PostgreSQL needs psycopg: pip install 'psycopg[binary]'") from None
    try:
        psycopg.connect(url, autocommit=True, connect_timeout=10).close()
    except psycopg.Error as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"cannot reach the PostgreSQL server of --postgres or ${POSTGRES_ENV}: {reason}") from None


@contextmanager
def fresh_schema(url: str) -> Iterator[tuple[str, Callable[[str], Any]]]:
    """A new empty schema on the server: the URL that selects it, and a query function; dropped after."""
    import psycopg

    schema = f"h9case_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(_LOCK_TIMEOUT)
        admin.execute(f'CREATE SCHEMA "{schema}"')

        def query(sql: str) -> Any:
            try:
                with admin.transaction():
                    admin.execute(f'SET LOCAL search_path TO "{schema}"')
                    rows = admin.execute(sql).fetchall()
                return [[_plain(v) for v in row] for row in rows]
            except psycopg.Error as exc:
                return {"sql_error": str(exc).strip().splitlines()[0]}

        try:
            yield _with_search_path(url, schema), query
        finally:
            try:
                admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
            except psycopg.Error:
                pass  # an adapter still holding it: the schema stays, named as a case's
