"""Crashes on its first run ever (argv[1] is a marker file), then answers correctly."""

import sys
from pathlib import Path
from typing import Any

from _base import correct, serve

MARKER = Path(sys.argv[1])


def answer(request: dict[str, Any]) -> dict[str, Any]:
    if not MARKER.exists():
        MARKER.touch()
        print("fake adapter: crashing on purpose", file=sys.stderr, flush=True)
        sys.exit(3)
    return correct(request)


serve(answer)
