"""Fixtures of the PostgreSQL tests: one private server per test run, a fresh schema per test (SPEC R-PG).

Tests skip, saying why, only when no PostgreSQL server binaries or no psycopg are installed
(``.ci/run`` installs both). Each test gets ``pg_url``: a URL whose ``search_path`` is a new,
empty schema, dropped afterwards, so tests never see each other's rows.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from tests.postgres.server import PgServer, find_bindir


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install '.[postgres]')")
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)")
    server = PgServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.remove()


def schema_url(admin_url: str, schema: str) -> str:
    return f"{admin_url}&options={quote(f'-csearch_path={schema}')}"


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    import psycopg

    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    yield schema_url(pg_server.url, schema)
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
