"""What the ``python -m conformance`` sub-commands share: a one-line failure, argument types."""

from __future__ import annotations

import argparse

from harness9_ref.memory.storage import POSTGRES_SCHEMES, url_scheme

from .runner._backends import POSTGRES_ENV

__all__ = ["Abort", "add_postgres_option", "count", "port", "postgres_url", "seconds"]


class Abort(Exception):
    """The command cannot do its job; the message goes to stderr and the exit code is 2."""


def seconds(text: str) -> float:
    """A positive number of seconds."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def count(text: str) -> int:
    """A positive integer."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def port(value: int) -> int:
    """A port to listen on, 0 for any free one; checked by the command so the error is one line."""
    if not 0 <= value <= 65535:
        raise Abort(f"--port must be from 0 to 65535 (0: any free port), got {value}")
    return value


def postgres_url(text: str) -> str:
    """A ``postgresql://`` URL of a server the runner may create schemas on (R-PG-2)."""
    if url_scheme(text) not in POSTGRES_SCHEMES:
        raise argparse.ArgumentTypeError(f"must be a postgresql:// URL, got {text!r}")
    return text


def add_postgres_option(run: argparse.ArgumentParser) -> None:
    """``run --postgres URL``: the session cases run on that server too, as ``$HARNESS9_TEST_POSTGRES_URL`` does."""
    run.add_argument(
        "--postgres",
        type=postgres_url,
        metavar="URL",
        help="also run every session case not marked SQLite-only on this PostgreSQL server, as "
        f"<id>@postgresql, each in a fresh schema (default: ${POSTGRES_ENV}); the adapter must "
        'declare "backends": ["sqlite", "postgresql"]',
    )
