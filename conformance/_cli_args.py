"""What the ``python -m conformance`` sub-commands share: a one-line failure, argument types."""

from __future__ import annotations

import argparse

__all__ = ["Abort", "count", "port", "seconds"]


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
