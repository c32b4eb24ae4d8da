"""Hangs on its first run ever (argv[1] is a marker file), then answers correctly."""

import sys
import time
from pathlib import Path
from typing import Any

from _base import correct, serve

MARKER = Path(sys.argv[1])


def answer(request: dict[str, Any]) -> dict[str, Any]:
    if not MARKER.exists():
        MARKER.touch()
        time.sleep(60)
    return correct(request)


serve(answer)
