"""Fixtures shared by every test directory."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from conformance.runner._backends import POSTGRES_ENV
from tests.fakes import Clock
from tests.llama_server import LlamaServer, find_parts
from tests.postgres.server import PgServer, find_bindir, schema_url


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where a test's session database goes; nothing is created there yet."""
    return tmp_path / "sessions.db"


@pytest.fixture
def clock() -> Clock:
    """A clock reading ``tests.fakes.START`` until the test moves it."""
    return Clock()


# Property tests have no deadline: on a loaded machine (parallel workers keep both cores busy) an
# example can take longer than hypothesis's 200 ms once and not the next time, which it reports as flaky.
settings.register_profile("loaded-machine", deadline=None)
settings.load_profile("loaded-machine")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` starts two workers a core: many tests spend their time waiting on a terminal,
    a server or a child process, and a second worker fills that wait (on 2 cores the first tier
    takes about 3 minutes instead of nearly 4)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cores


def pytest_configure(config: pytest.Config) -> None:
    """Forget the terminal size pytest-xdist gives its workers (``COLUMNS=80``, ``LINES=24``):
    a program a test starts in a terminal of its own (tmux) would take it for that terminal's."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)


@pytest.fixture(scope="session")
def llama_servers() -> Iterator[Callable[[int], LlamaServer]]:
    """Real llama.cpp servers by context size (tests/llama_server.py), each started on first use
    and shared by the worker's tests: at most one per size and pytest-xdist worker, a thread each,
    since every worker may run one. Without the server or the model the tests skip,
    saying which is missing."""
    parts = find_parts()
    if isinstance(parts, str):
        pytest.skip(parts)
    started: dict[int, LlamaServer] = {}

    def server(ctx_size: int) -> LlamaServer:
        if ctx_size not in started:
            started[ctx_size] = LlamaServer(*parts, ctx_size).start()
        return started[ctx_size]

    try:
        yield server
    finally:
        for each in started.values():
            each.stop()


@pytest.fixture
def llama_server(llama_servers: Callable[[int], LlamaServer]) -> LlamaServer:
    """The worker's real llama.cpp server with a window of 2048 tokens."""
    return llama_servers(2048)


# --- PostgreSQL (SPEC R-PG): one server per test run, a fresh schema per test ---


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


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    import psycopg

    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    yield schema_url(pg_server_url, schema)
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
