"""Echoes the wrong seq."""

from typing import Any

from _base import correct, serve


def answer(request: dict[str, Any]) -> dict[str, Any]:
    return {**correct(request), "seq": request["seq"] + 1}


serve(answer)
