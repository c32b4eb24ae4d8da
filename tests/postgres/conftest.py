"""Fixtures of the PostgreSQL tests: one private server per test run, a fresh schema per test (SPEC R-PG).

Tests skip, saying why, only when no PostgreSQL server binaries or no psycopg are installed
(``.ci/run`` installs both). Each test gets ``pg_url``: a URL whose ``search_path`` is a new,
empty schema, dropped afterwards, so tests never see each other's rows. When
``HARNESS9_TEST_POSTGRES_URL`` names a server (one allowed to create schemas), the tests use it
instead of starting their own: so a run of many pytest processes (the seeded bugs of
``python -m conformance mutants --catalogue pytest``) pays for one server, not one each.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from conformance.runner._backends import POSTGRES_ENV
from tests.postgres.server import PgServer, find_bindir


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """The admin URL of the server the tests use: the environment's, or a private one started here."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install '.[postgres]')")
    given = os.environ.get(POSTGRES_ENV)
    if given:
        yield given
        return
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)")
    server = PgServer(bindir)
    try:
        server.start()
        yield server.url
    finally:
        server.remove()


def schema_url(admin_url: str, schema: str) -> str:
    return f"{admin_url}{'&' if '?' in admin_url else '?'}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    import psycopg

    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    yield schema_url(pg_server_url, schema)
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def own_server() -> Iterator[PgServer]:
    """A server of the test's own, which it may stop and start (R-PG-8)."""
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)")
    server = PgServer(bindir)
    server.start()
    try:
        yield server
    finally:
        server.remove()
