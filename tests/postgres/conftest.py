"""Fixtures of the PostgreSQL tests (SPEC R-PG): a server of a test's own. The shared server and
a fresh schema per test (``pg_server_url``, ``pg_url``) are tests/conftest.py's, since the
session contract tests of tests/memory/ run on PostgreSQL too.

Tests skip, saying why, only when no PostgreSQL server binaries or no psycopg are installed
(``.ci/run`` installs both). Each test gets ``pg_url``: a URL whose ``search_path`` is a new,
empty schema, dropped afterwards, so tests never see each other's rows. When
``HARNESS9_TEST_POSTGRES_URL`` names a server (one allowed to create schemas), the tests use it
instead of starting their own: so a run of many pytest processes (the seeded bugs of
``python -m conformance mutants --catalogue pytest``) pays for one server, not one each.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres.server import PgServer, find_bindir


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
