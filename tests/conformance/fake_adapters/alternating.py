"""Answers right and wrong in turn, one process for the whole run: an outcome that changes."""

from itertools import count
from typing import Any

from _base import correct, serve

RUNS = count(1)


def answer(request: dict[str, Any]) -> dict[str, Any]:
    reply = correct(request)
    if next(RUNS) % 2 == 0:
        reply["output"] += "0"
    return reply


serve(answer)
