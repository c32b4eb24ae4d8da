"""Fill the caches a fresh checkout lacks, in a process coverage does not trace.

A run of the whole suite (``tests/conftest.py``) starts this as it is configured. The first run
in a fresh checkout has no compiled test modules (pytest rewrites each module's asserts, then
compiles it) and no Hypothesis character table (one pass over every Unicode code point), and
the pytest processes would build both under coverage's tracer, which makes all Python code run
several times slower. Here both are built untraced, beside the collection: pytest writes the
rewritten modules to ``__pycache__`` and Hypothesis its table to ``.hypothesis/``, each file
whole or not at all, and a pytest process that gets to one first simply builds it itself.

Run as ``python -m tests.head_start`` from the project root; it only leaves those files behind.
"""

from __future__ import annotations

import sys

import pytest


def main() -> int:
    """Collect every test untraced (writing their compiled modules), then build the character table."""
    pytest.main(["--collect-only", "-q", "-p", "no:cov", "-p", "no:cacheprovider"])
    try:
        from hypothesis.internal.charmap import charmap
    except ImportError:  # another Hypothesis: the first test that needs its table builds it
        return 0
    charmap()
    return 0


if __name__ == "__main__":
    sys.exit(main())
