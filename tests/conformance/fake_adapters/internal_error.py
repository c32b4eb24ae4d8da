"""Catches a crash of its own and answers every run with the code internal_error, as the starters do."""

from typing import Any

from _base import serve


def answer(request: dict[str, Any]) -> dict[str, Any]:
    return {"seq": request["seq"], "error": {"code": "internal_error", "message": "ZeroDivisionError: division by zero"}}


serve(answer)
